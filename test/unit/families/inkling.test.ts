// Inkling (Thinking Machines): typed blocks, the call payload {"args": {…}, "name": …} after <|content_invoke_tool_json|>.
// Fixtures from the engines' tests, source beside each:
// - SGLang: sgl-project/sglang test/registered/unit/function_call/test_inkling_detector.py @ 4d9d5463471c51ebba11e22afa37aac988a3e5fa
// - vLLM: vllm-project/vllm tests/parser/engine/test_inkling.py @ 019dd4b7dbcb072cea2aae9458bf08615c0ceb93
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('inkling');
const MSG_MODEL = '<|message_model|>';
const TEXT_START = '<|content_text|>';
const THINK_START = '<|content_thinking|>';
const TOOL_JSON = '<|content_invoke_tool_json|>';
const END_MESSAGE = '<|end_message|>';
const END_SAMPLING = '<|content_model_end_sampling|>';

/** SGLang `_canonical_call`: `<|message_model|>weather<|content_invoke_tool_json|>{"name":"weather","args":…}<|end_message|>`. */
const canonical = (args: unknown) => `${MSG_MODEL}weather${TOOL_JSON}${JSON.stringify({ name: 'weather', args })}${END_MESSAGE}`;
/** vLLM `_tool_block`. */
const block = (name: string, args: string) => `${TOOL_JSON}{"name":"${name}","args":${args}}${END_MESSAGE}`;

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (text: string) => parse(text).message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);

test('inkling: healthy outputs from SGLang test_inkling_detector.py parse to the reference calls with no problem', () => {
  // test_visible_prefix_survives_header_stripping: the header is not content.
  let p = parse(`Sure, let me check.${canonical({ city: 'SF' })}`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Sure, let me check.');
  assert.deepEqual(calls(p.text), [['weather', { city: 'SF' }]]);
  // test_batch_calls_get_sequential_indices
  p = parse(canonical({ city: 'SF' }) + canonical({ city: 'NY' }));
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p.text), [
    ['weather', { city: 'SF' }],
    ['weather', { city: 'NY' }],
  ]);
  assert.deepEqual(
    p.message.toolCalls.map((c) => c.index),
    [0, 1],
  );
  assert.equal(p.message.content, undefined);
});

test('inkling: healthy outputs from vLLM test_inkling.py (reasoning, text, headers, parallel, nested, end of sampling)', () => {
  // test_reasoning_text_tool
  let p = parse(
    `${THINK_START}I should check the weather.${END_MESSAGE}${MSG_MODEL}${TEXT_START}Let me check.${END_MESSAGE}${MSG_MODEL}${block('get_weather', '{"city":"SF"}')}`,
  );
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.reasoning, 'I should check the weather.');
  assert.equal(p.message.content, 'Let me check.');
  assert.deepEqual(calls(p.text), [['get_weather', { city: 'SF' }]]);
  // test_tool_header_name_is_not_visible_content: the first block's header right after the prompt.
  p = parse(`get_weather${block('get_weather', '{"city":"SF"}')}`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, undefined);
  // test_parallel_tool_calls
  assert.deepEqual(calls(`${block('a', '{}')}${MSG_MODEL}${block('b', '{"x":[1,2]}')}`), [
    ['a', {}],
    ['b', { x: [1, 2] }],
  ]);
  // test_nested_args: a `}` inside a string does not end the payload.
  const nested = '{"q":{"deep":{"list":[{"k":"v"}]}},"s":"a}b"}';
  p = parse(block('f', nested));
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.toolCalls[0].arguments, nested);
  // test_bare_text_after_model_opener, test_plain_text, test_end_sampling_closes_blocks
  for (const t of ['hello world', `hello world${END_MESSAGE}`, `hello world${END_SAMPLING}`, `${TEXT_START}hello world${END_MESSAGE}`]) {
    const q = parse(t);
    assert.deepEqual(q.problems, [], t);
    assert.equal(q.message.content, 'hello world', t);
  }
  p = parse(`${THINK_START}hm${END_MESSAGE}${MSG_MODEL}${TEXT_START}hi${END_SAMPLING}`);
  assert.deepEqual([p.message.reasoning, p.message.content, p.problems], ['hm', 'hi', []]);
  // test_end_sampling_tool_closer_round_trips: the stop token closes the call block.
  p = parse(`${TOOL_JSON}{"name":"f","args":{}}${END_SAMPLING}`);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p.text), [['f', {}]]);
  // test_text_after_tool_call
  p = parse(`${block('f', '{}')}${MSG_MODEL}${TEXT_START}done${END_MESSAGE}`);
  assert.deepEqual([p.message.content, p.problems], ['done', []]);
});

test('inkling: the chat template writes "args" before "name"; both orders read alike', () => {
  const text = `${MSG_MODEL}read_file${TOOL_JSON}{"args":{"path":"a.txt"},"name":"read_file"}${END_MESSAGE}${END_SAMPLING}`;
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(text), [['read_file', { path: 'a.txt' }]]);
  // render writes the template's order, and parse gives the message back.
  const m = { reasoning: 'Look first.', content: 'Reading.', toolCalls: [{ index: 0, name: 'read_file', arguments: '{"path":"a.txt"}' }] };
  const r = f.render(m);
  assert.equal(
    r.text,
    `${MSG_MODEL}${THINK_START}Look first.${END_MESSAGE}${MSG_MODEL}${TEXT_START}Reading.${END_MESSAGE}${MSG_MODEL}read_file${TOOL_JSON}{"args":{"path":"a.txt"},"name":"read_file"}${END_MESSAGE}${END_SAMPLING}`,
  );
  assert.deepEqual(parse(r.text).message, m);
});

test('inkling: broken outputs are flagged and the calls keep what arrived', () => {
  // SGLang test_unterminated_json_frame_is_recovered_through_end_of_response: <|end_message|> never came.
  let p = parse(`Sure, let me check.${TOOL_JSON}{"name":"weather","args":{"city":"SF"}}`);
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.deepEqual(calls(p.text), [['weather', { city: 'SF' }]]);
  // vLLM test_incomplete_tool_call_at_eos: cut inside the arguments.
  p = parse(`${TOOL_JSON}{"name":"d","args":{"k":"v"`);
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.equal(p.message.toolCalls[0].name, 'd');
  // Cut before "name" arrived (args first): the header names the call.
  p = parse(`${MSG_MODEL}get_weather${TOOL_JSON}{"args":{"location":"N`);
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.deepEqual(
    p.message.toolCalls.map((c) => [c.name, c.arguments]),
    [['get_weather', '{"location":"N']],
  );
  // <|end_message|> cut short.
  p = parse(`${block('f', '{}').slice(0, -3)}`);
  assert.deepEqual(codes(p).sort(), ['call-unclosed', 'marker-truncated']);
  // Reasoning that never closed.
  assert.deepEqual(codes(parse(`${THINK_START}I should`)), ['reasoning-unclosed']);
  // SGLang test_degenerate_payloads_yield_no_call, test_payload_missing_name_yields_no_call, test_payload_missing_args_yields_no_call.
  for (const body of ['', '[1, 2, 3]', '{"args":{}}', '{"name":"weather"}', '{not json at all']) {
    const q = parse(`${TOOL_JSON}${body}${END_MESSAGE}`);
    assert.deepEqual(codes(q), ['malformed-call'], body);
  }
  // A payload with no "name" seen in a real leak: the header names it, the engines drop it.
  p = parse(`${MSG_MODEL}bash_exec${TOOL_JSON}{"args":{"command":"ls"}}${END_MESSAGE}`);
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.equal(p.message.toolCalls[0].name, 'bash_exec');
  // The header and the payload disagree on the name (SGLang's first detector dropped such a call).
  assert.deepEqual(codes(parse(`${MSG_MODEL}other${TOOL_JSON}{"name":"weather","args":{}}${END_MESSAGE}`)), ['malformed-call']);
  // An orphan closer: the payload and <|end_message|> without <|content_invoke_tool_json|>.
  p = parse(`{"args":{"location":"NYC"},"name":"get_weather"}${END_MESSAGE}`);
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.deepEqual(calls(p.text), [['get_weather', { location: 'NYC' }]]);
});

test('inkling: model ids and markers pick the family', () => {
  for (const id of [
    'thinkingmachines/Inkling',
    'thinkingmachines/Inkling-Small',
    'thinkingmachines/Inkling-NVFP4',
    'openrouter/thinkingmachines/inkling-small:free',
    'thinkingmachines/inkling:free',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'inkling', id);
  }
  assert.notEqual(detectFamily('acme/inklingo-7b')?.format.id, 'inkling');
  assert.equal(detectFamily(undefined, canonical({ city: 'SF' }))?.format.id, 'inkling');
  assert.equal(detectFamily(undefined, `${THINK_START}hm${END_MESSAGE}${MSG_MODEL}${TEXT_START}hi${END_SAMPLING}`)?.format.id, 'inkling');
  assert.equal(getFamily('inkling').tokenizer.repo, 'thinkingmachines/Inkling');
});

test('inkling: analyze — the model id picks Inkling, a broken output is an error, a healthy one and prose are clean', () => {
  const model = 'thinkingmachines/inkling';
  const healthy = analyze({
    nativeText: `${THINK_START}Check.${END_MESSAGE}${MSG_MODEL}${TEXT_START}Done.${END_MESSAGE}${MSG_MODEL}write_file${TOOL_JSON}{"args":{"path":"x.txt"},"name":"write_file"}${END_MESSAGE}${END_SAMPLING}`,
    model,
  });
  assert.equal(healthy.family, 'inkling');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [['write_file', { path: 'x.txt' }]],
  );
  for (const broken of [
    `${MSG_MODEL}write_file${TOOL_JSON}{"args":{"path":"x.t`,
    `${MSG_MODEL}write_file${TOOL_JSON}{"args":{"path":"x.txt"},"name":"write_file"}`,
  ]) {
    const a = analyze({ nativeText: broken, model });
    assert.ok(
      a.findings.some((x) => x.severity === 'error'),
      `${broken}: ${a.findings.map((x) => x.rule).join()}`,
    );
    const unlabelled = analyze({ nativeText: broken });
    assert.equal(unlabelled.family, 'inkling');
    assert.ok(unlabelled.findings.some((x) => x.severity === 'error'));
  }
  const prose = analyze({ nativeText: 'Use {"args": 1} in JSON; the name is "x".', model });
  assert.deepEqual(
    prose.findings.filter((x) => x.severity !== 'info'),
    [],
  );
});
