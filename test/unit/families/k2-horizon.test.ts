// K2-Horizon (IFM): <ifm|tool_calls> groups of <ifm|tool_call> blocks, XML (typed or not) or JSON bodies, <ifm|think…> reasoning.
// Fixtures from the engines' tests, source beside each:
// - SGLang: sgl-project/sglang test/registered/unit/function_call/test_k2_v3_detector.py @ a82da8da159ec67038d9357c172fba89ad8af6a3
// - vLLM: vllm-project/vllm tests/tool_parsers/test_k2_horizon_tool_parser.py @ 0d2bafa9f1680325f0734530342c1385a55626c6
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import { schemaArguments } from '../../../src/core/families/shared';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('k2-horizon');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (text: string) => parse(text).message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);
/** SGLang `make_reasoning_with_tool_marker`. */
const reasoningWithMarker = (tag: string) =>
  `<ifm|${tag}>Consider <ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Boston</ifm|arg_value></ifm|tool_call> as hypothetical text.</ifm|${tag}>\n`;
const tokyo =
  '<ifm|tool_calls>\n<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Tokyo</ifm|arg_value></ifm|tool_call>\n</ifm|tool_calls>';

test('k2-horizon: healthy outputs from SGLang test_k2_v3_detector.py parse to the reference calls with no problem', () => {
  // test_xml_and_typed_values: a typed string keeps its spaces, a typed integer and an untyped object read as JSON.
  const typed =
    '<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key>\n<ifm|arg_type>string</ifm|arg_type>\n<ifm|arg_value>  Boston  </ifm|arg_value>\n' +
    '<ifm|arg_key>days</ifm|arg_key>\n<ifm|arg_type>integer</ifm|arg_type>\n<ifm|arg_value>3</ifm|arg_value>\n' +
    '<ifm|arg_key>options</ifm|arg_key>\n<ifm|arg_value>{"units": "metric"}</ifm|arg_value>\n</ifm|tool_call>';
  assert.deepEqual(calls(`<ifm|tool_calls>\n${typed}\n</ifm|tool_calls>`), [
    ['get_weather', { city: '  Boston  ', days: 3, options: { units: 'metric' } }],
  ]);
  // test_json_content_is_detected_from_wire
  const json =
    '<ifm|tool_calls>\n<ifm|tool_call>{"name":"get_weather","arguments":{"city":"Tokyo","days":2}}</ifm|tool_call>\n</ifm|tool_calls>';
  assert.deepEqual(parse(json).problems, []);
  assert.deepEqual(calls(json), [['get_weather', { city: 'Tokyo', days: 2 }]]);
  // test_json_strings_are_not_reinterpreted_without_a_schema
  assert.deepEqual(
    calls(
      '<ifm|tool_calls><ifm|tool_call>{"name":"get_weather","arguments":{"numeric":"123","boolean":"true","object":"{}"}}</ifm|tool_call></ifm|tool_calls>',
    ),
    [['get_weather', { numeric: '123', boolean: 'true', object: '{}' }]],
  );
  // test_xml_typed_union_uses_wire_value_type
  assert.deepEqual(
    calls(
      '<ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>id</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>123</ifm|arg_value></ifm|tool_call></ifm|tool_calls>',
    ),
    [['lookup', { id: 123 }]],
  );
  // test_parallel_calls_keep_wire_order_and_indices
  const parallel =
    '<ifm|tool_calls>\n<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Tokyo</ifm|arg_value></ifm|tool_call>\n' +
    '<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Boston</ifm|arg_value></ifm|tool_call>\n</ifm|tool_calls>';
  const p = parse(parallel);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, undefined);
  assert.deepEqual(calls(parallel), [
    ['get_weather', { city: 'Tokyo' }],
    ['get_weather', { city: 'Boston' }],
  ]);
});

test("k2-horizon: reasoning in each effort's tags, with the opener in the prompt or in the output", () => {
  // test_non_streaming_tool_call_preserves_reasoning_prefix: tool markup inside the reasoning stays reasoning.
  let p = parse(reasoningWithMarker('think') + tokyo);
  assert.match(p.message.reasoning ?? '', /^Consider <ifm\|tool_call>get_weather/);
  assert.deepEqual(calls(p.text), [['get_weather', { city: 'Tokyo' }]]);
  // test_forced_reasoning_without_opening_tag_is_preserved
  p = parse(`work</ifm|think>\n${tokyo.replace(/\n/g, '')}`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.reasoning, 'work');
  assert.deepEqual(calls(p.text), [['get_weather', { city: 'Tokyo' }]]);
  // test_non_streaming_preserves_reasoning_for_ordinary_answer (think_fast) and the think_faster opener left in the prompt.
  for (const t of [` \n${reasoningWithMarker('think_fast')}The answer is 42.`, 'plan</ifm|think_faster>answer']) {
    const q = parse(t);
    assert.deepEqual(q.message.toolCalls, [], t);
    assert.ok(q.message.reasoning && q.message.content, t);
  }
});

test('k2-horizon: vLLM test_k2_horizon_tool_parser.py — text around the group, and arguments typed by the request schema', () => {
  // test_xml_default_parses_multiple_calls_and_coerces_schema
  const out =
    'Before <ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>123</ifm|arg_value><ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>3</ifm|arg_value></ifm|tool_call>\n<ifm|tool_call>ping</ifm|tool_call></ifm|tool_calls> after.';
  const p = parse(out);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Before\n\nafter.');
  assert.deepEqual(
    p.message.toolCalls.map((c) => c.name),
    ['lookup', 'ping'],
  );
  const tools = [
    {
      name: 'lookup',
      parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' }, enabled: { type: 'boolean' } } },
    },
  ];
  assert.deepEqual(JSON.parse(schemaArguments(p.message.toolCalls[0], tools)), { query: '123', limit: 3 });
  assert.equal(p.message.toolCalls[1].arguments, '{}');
  // test_request_level_format_overrides (xml_typed)
  assert.deepEqual(
    calls(
      '<ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>query</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>weather</ifm|arg_value><ifm|arg_key>limit</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>2</ifm|arg_value></ifm|tool_call></ifm|tool_calls>',
    ),
    [['lookup', { query: 'weather', limit: 2 }]],
  );
});

test('k2-horizon: streamed, every prefix of the three call forms is only cut off (vLLM test_character_split_streaming)', () => {
  // vllm-project/vllm tests/tool_parsers/test_k2_horizon_tool_parser.py @ 0d2bafa9f1680325f0734530342c1385a55626c6:
  // _group(call, prefix="Before", suffix="after") for the xml, json and xml_typed forms.
  for (const call of [
    '<ifm|tool_call>lookup<ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>2</ifm|arg_value></ifm|tool_call>',
    '<ifm|tool_call>{"name": "lookup", "arguments": {"limit": "2"}}</ifm|tool_call>',
    '<ifm|tool_call>lookup<ifm|arg_key>limit</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>2</ifm|arg_value></ifm|tool_call>',
  ]) {
    const text = `Before<ifm|tool_calls>${call}</ifm|tool_calls>after`;
    assert.deepEqual(parse(text).problems, [], text);
    assert.equal(parse(text).message.toolCalls[0].name, 'lookup');
    for (let i = 1; i < text.length; i++) {
      const cut = codes(parse(text.slice(0, i))).filter((c) => !['section-unclosed', 'call-unclosed', 'marker-truncated'].includes(c));
      assert.deepEqual(cut, [], text.slice(0, i));
    }
  }
});

test('k2-horizon: broken outputs are flagged and the calls keep what arrived', () => {
  // vLLM test_malformed_and_incomplete_input_is_content: the group never closed, the call cut after its name.
  assert.deepEqual(codes(parse('<ifm|tool_calls><ifm|tool_call>ping</ifm|tool_call>')), ['section-unclosed']);
  let p = parse('<ifm|tool_calls><ifm|tool_call>ping');
  assert.deepEqual(codes(p).sort(), ['call-unclosed', 'section-unclosed']);
  assert.equal(p.message.toolCalls[0].name, 'ping');
  // vLLM: junk inside the group.
  assert.deepEqual(codes(parse('<ifm|tool_calls>junk</ifm|tool_calls>')), ['malformed-call']);
  // SGLang test_unterminated_stream_is_released_on_finish: cut inside a key.
  p = parse('prefix<ifm|tool_call>get_weather<ifm|arg_key>city');
  assert.ok(codes(p).includes('call-unclosed'), codes(p).join());
  // Cut inside a value: the value kept as it arrived.
  p = parse('<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key>\n<ifm|arg_value>Tok');
  assert.deepEqual(codes(p).sort(), ['call-unclosed', 'section-unclosed']);
  assert.deepEqual(calls(p.text), [['get_weather', { city: 'Tok' }]]);
  // SGLang test_malformed_complete_block_is_forwarded_as_text: a key without its value.
  assert.ok(
    codes(parse('prefix<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key></ifm|tool_call>suffix')).includes('malformed-call'),
  );
  // SGLang test_non_string_json_function_name_is_forwarded_as_text
  assert.ok(
    codes(parse('<ifm|tool_calls><ifm|tool_call>{"name":123,"arguments":{}}</ifm|tool_call></ifm|tool_calls>')).includes('malformed-call'),
  );
  // A call outside <ifm|tool_calls> (vLLM reads calls only inside it) and an orphan group closer.
  assert.deepEqual(
    codes(
      parse(
        '<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Tokyo</ifm|arg_value></ifm|tool_call></ifm|tool_calls>',
      ),
    ),
    ['malformed-call'],
  );
  // A JSON body cut short.
  assert.ok(codes(parse('<ifm|tool_calls><ifm|tool_call>{"name":"get_weather","arguments":{"city":"To')).includes('call-unclosed'));
});

test('k2-horizon: a key written twice is refused by vLLM, and flagged', () => {
  // vllm-project/vllm vllm/tool_parsers/k2_horizon_tool_parser.py _parse_xml_call ("Duplicate IFM XML argument") @ 194efa2d
  const p = parse(
    '<ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>2</ifm|arg_value><ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>3</ifm|arg_value></ifm|tool_call></ifm|tool_calls>',
  );
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /'limit' written twice/);
});

test('k2-horizon: model ids and markers pick the family', () => {
  for (const id of [
    'IFM/K2-Horizon-7B',
    'IFM/K2-Horizon-MoVA-36B-A4B',
    'IFM/K2-Horizon-375B-A23B',
    'abenzerps/K2-Horizon-MoVA-36B-A4B-MLX-4bit',
    'IFM/K2-Horizon-7B-GGUF:Q4_K_M',
    'ifm/k2-horizon',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'k2-horizon', id);
  }
  assert.notEqual(detectFamily('moonshotai/Kimi-K2-Instruct')?.format.id, 'k2-horizon');
  assert.equal(detectFamily(undefined, tokyo)?.format.id, 'k2-horizon');
  assert.equal(detectFamily(undefined, `work</ifm|think>\n${tokyo}<|ifm|im_end|>`)?.format.id, 'k2-horizon');
  assert.equal(getFamily('k2-horizon').tokenizer.repo, 'IFM/K2-Horizon-7B');
});

test('k2-horizon: analyze — the model id picks K2-Horizon, a broken output is an error, a healthy one and prose are clean', () => {
  const model = 'IFM/K2-Horizon-7B';
  const healthy = analyze({ nativeText: `I should list.\n</ifm|think>Let me look.${tokyo}<|ifm|im_end|>`, model });
  assert.equal(healthy.family, 'k2-horizon');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [['get_weather', { city: 'Tokyo' }]],
  );
  for (const broken of [
    '<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key>\n<ifm|arg_value>Tok',
    tokyo.replace('</ifm|tool_calls>', ''),
  ]) {
    const a = analyze({ nativeText: broken, model });
    assert.ok(
      a.findings.some((x) => x.severity === 'error'),
      `${broken}: ${a.findings.map((x) => x.rule).join()}`,
    );
    const unlabelled = analyze({ nativeText: broken });
    assert.equal(unlabelled.family, 'k2-horizon');
    assert.ok(unlabelled.findings.some((x) => x.severity === 'error'));
  }
  const prose = analyze({ nativeText: 'K2 and <b>bold</b> tags; a | b > c.', model });
  assert.deepEqual(
    prose.findings.filter((x) => x.severity !== 'info'),
    [],
  );
});

test("k2-horizon: render writes the template's XML form, and parse gives the message back", () => {
  const m = {
    reasoning: 'Look.',
    content: 'Checking.',
    toolCalls: [{ index: 0, name: 'get_weather', arguments: '{"city":"Tokyo","days":2}' }],
  };
  const r = f.render(m);
  assert.equal(
    r.text,
    '<ifm|think>Look.</ifm|think>Checking.<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key>\n<ifm|arg_value>Tokyo</ifm|arg_value>\n<ifm|arg_key>days</ifm|arg_key>\n<ifm|arg_value>2</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls><|ifm|im_end|>',
  );
  const p = parse(r.text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, m);
});
