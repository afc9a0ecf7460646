import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { schemaArguments } from '../../../src/core/families/shared';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('poolside-v1');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'poolside/Laguna-XS.2';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// sgl-project/sglang test/registered/unit/function_call/test_poolside_v1_detector.py @ 199614ee743d0dd65722d6362d26f88c795a91b4
const SINGLE = '<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>San Francisco</arg_value>\n</tool_call>';
const MIXED =
  '<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>London</arg_value>\n<arg_key>count</arg_key>\n<arg_value>3</arg_value>\n<arg_key>options</arg_key>\n<arg_value>{"verbose": true}</arg_value>\n</tool_call>';
const MULTIPLE =
  '<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n</tool_call>\n<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>pizza</arg_value>\n</tool_call>';
const LEADING = 'Sure, checking now. <tool_call>search\n<arg_key>query</arg_key>\n<arg_value>tacos</arg_value>\n</tool_call>';
const TRUNCATED_PRE_VALUE = '<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>San Fr';
const TRUNCATED_POST_VALUE = '<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>SF</arg_value>\n';
const TRUNCATED_AFTER_COMPLETE =
  '<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n</tool_call>\n<tool_call>search\n<arg_key>q';
// ollama/ollama model/parsers/laguna_test.go @ fb30760996871fa9460115c753afd2c60d4ab0f7
const OLLAMA_THINKING =
  '<think>Need current weather.</think>\n<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>SF</arg_value>\n</tool_call>';
// The laguna v8 chat template's own layout (ollama model/renderers/testdata/laguna_v8_chat_template.jinja2, same commit).
const V8 =
  'Need the weather.</think>Checking.<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call></assistant>';

test("poolside-v1: the engines' healthy outputs parse to their calls", () => {
  const one = parse(SINGLE);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['get_weather', { location: 'San Francisco' }]]);
  assert.deepEqual(slices(one, 'call-name', 0), ['get_weather']);
  assert.deepEqual(calls(parse(MIXED)), [['get_weather', { location: 'London', count: 3, options: { verbose: true } }]]);
  assert.deepEqual(calls(parse(MULTIPLE)), [
    ['get_weather', { location: 'NYC' }],
    ['search', { query: 'pizza' }],
  ]);
  const leading = parse(LEADING);
  assert.equal(leading.message.content, 'Sure, checking now.');
  assert.deepEqual(calls(leading), [['search', { query: 'tacos' }]]);
  assert.deepEqual(calls(parse('<tool_call>now\n</tool_call>')), [['now', {}]]);
  assert.deepEqual(calls(parse('<tool_call>now</tool_call>')), [['now', {}]]);
  const thinking = parse(OLLAMA_THINKING);
  assert.deepEqual(thinking.problems, []);
  assert.equal(thinking.message.reasoning, 'Need current weather.');
  assert.deepEqual(calls(thinking), [['get_weather', { location: 'SF' }]]);
  const v8 = parse(V8);
  assert.deepEqual(v8.problems, []);
  assert.equal(v8.message.reasoning, 'Need the weather.');
  assert.equal(v8.message.content, 'Checking.');
  assert.deepEqual(calls(v8), [['get_weather', { location: 'Paris', days: 3 }]]);
  assert.deepEqual(slices(v8, 'end'), ['</assistant>']);
  // Typed by the request's schema, as the engines do: a string stays a string.
  const call = parse('<tool_call>get_weather<arg_key>location</arg_key><arg_value>1234</arg_value></tool_call>').message.toolCalls[0];
  assert.equal(
    schemaArguments(call, [{ name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }]),
    '{"location":"1234"}',
  );
});

test("poolside-v1: the detector tests' truncated outputs are flagged", () => {
  const pre = parse(TRUNCATED_PRE_VALUE);
  assert.deepEqual(codes(pre), ['call-unclosed']);
  assert.deepEqual(calls(pre), [['get_weather', { location: 'San Fr' }]]);
  assert.deepEqual(codes(parse(TRUNCATED_POST_VALUE)), ['call-unclosed']);
  const after = parse(TRUNCATED_AFTER_COMPLETE);
  assert.deepEqual(codes(after), ['call-unclosed']);
  assert.equal(after.problems[0].callIndex, 1);
  assert.deepEqual(calls(after)[0], ['get_weather', { location: 'NYC' }]);
  // A key without its value, and an orphan closer.
  assert.deepEqual(codes(parse('<tool_call>get_weather\n<arg_key>location</arg_key></tool_call>')), ['malformed-call']);
  assert.ok(codes(parse('get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>')).includes('stray-marker'));
  assert.deepEqual(parse('just a sentence.').problems, []);
});

test('poolside-v1: vLLM test_poolside_v1_tool_parser.py — string values verbatim, a name without its line break, a nameless call', () => {
  // vllm-project/vllm tests/tool_parsers/test_poolside_v1_tool_parser.py @ 2a8137f637c3827eff3dd1a61223274e67fb8851
  const code = '    def f():\n        return 1\n';
  // test_string_arg_preserves_whitespace: the value keeps its indent and its last line break.
  const kept = parse(`<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>${code}</arg_value>\n</tool_call>`);
  assert.deepEqual([kept.problems, calls(kept)], [[], [['write_file', { content: code }]]]);
  // test_non_string_arg_still_deserialized
  assert.deepEqual(
    calls(
      parse(
        '<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>hi</arg_value>\n<arg_key>mode</arg_key>\n<arg_value> 420 </arg_value>\n</tool_call>',
      ),
    ),
    [['write_file', { content: 'hi', mode: 420 }]],
  );
  // test_no_newline_after_name_non_streaming / _streaming: every prefix is only cut off.
  const tight = '<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>';
  assert.deepEqual([parse(tight).problems, calls(parse(tight))], [[], [['get_weather', { city: 'Paris' }]]]);
  for (let i = 1; i < tight.length; i++) {
    assert.deepEqual(
      codes(parse(tight.slice(0, i))).filter((c) => !['call-unclosed', 'marker-truncated', 'section-unclosed'].includes(c)),
      [],
      tight.slice(0, i),
    );
  }
  // test_function_name_with_internal_whitespace_still_parses
  assert.deepEqual(calls(parse('<tool_call>  get weather  <arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>')), [
    ['get weather', { city: 'Paris' }],
  ]);
  // test_whitespace_only_tool_call_name_is_rejected: vLLM skips the call; it is flagged.
  assert.deepEqual(codes(parse('<tool_call>   </tool_call>')), ['malformed-call']);
  assert.ok(errors('<tool_call>   </tool_call>').length > 0);
  // test_whitespace_padded_tool_call_is_not_quadratic: not a call, flagged, and read at once.
  const padded = `<tool_call>${' '.repeat(4096)}<x</tool_call>`;
  assert.deepEqual(codes(parse(padded)), ['malformed-call']);
});

test('poolside-v1: model ids and markers pick the family; GLM text stays GLM', () => {
  for (const id of ['poolside/Laguna-XS.2', 'poolside/laguna-m.1', 'openrouter/poolside/laguna-xs.2', 'Laguna-XS.2-GGUF']) {
    assert.equal(detectFamily(id)?.format.id, 'poolside-v1', id);
  }
  assert.equal(detectFamily(undefined, V8)?.format.id, 'poolside-v1');
  assert.equal(
    detectFamily(undefined, '<tool_call>ls\n<arg_key>dirPath</arg_key>\n<arg_value>src</arg_value>\n</tool_call>')?.format.id,
    'glm45',
  );
});

test('poolside-v1: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: V8, model: MODEL });
  assert.equal(healthy.family, 'poolside-v1');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.ok(errors(TRUNCATED_PRE_VALUE).some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors('just a sentence.'), []);
});
