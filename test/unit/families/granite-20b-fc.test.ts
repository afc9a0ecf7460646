import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('granite-20b-fc');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'ibm-granite/granite-20b-functioncalling';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_granite_20b_fc_tool_parser.py @ 41c5903d049b80b83a6e570f52f0f55e31316e49
const SINGLE = '<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}';
const PARALLEL =
  '<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}\n<function_call> {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}';
const TYPES = `<function_call> {
  "name": "test_function",
  "arguments": {
    "string_field": "hello",
    "int_field": 42,
    "float_field": 3.14,
    "bool_field": true,
    "null_field": null,
    "array_field": ["a", "b", "c"],
    "object_field": {"nested": "value"},
    "empty_array": [],
    "empty_object": {}
  }
}`;
const EMPTY = '<function_call> {"name": "refresh", "arguments": {}}';
const SURROUNDING = 'Let me check the weather for you.\n<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}';
// The same test's malformed_input_outputs.
const MALFORMED = [
  '<function_call> {"name": "func", "arguments": {',
  '<function_call> [{"name": "func", "arguments": {}}]',
  '<function_call> {"name": 123}',
];

test("granite-20b-fc: vLLM's healthy outputs parse to their calls", () => {
  const one = parse(SINGLE);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['get_weather', { city: 'Tokyo' }]]);
  assert.deepEqual(slices(one, 'arguments', 0), ['{"city": "Tokyo"}']);
  assert.deepEqual(calls(parse(PARALLEL)), [
    ['get_weather', { city: 'Tokyo' }],
    ['get_time', { timezone: 'Asia/Tokyo' }],
  ]);
  const types = parse(TYPES);
  assert.deepEqual(types.problems, []);
  assert.deepEqual(calls(types)[0][1], {
    string_field: 'hello',
    int_field: 42,
    float_field: 3.14,
    bool_field: true,
    null_field: null,
    array_field: ['a', 'b', 'c'],
    object_field: { nested: 'value' },
    empty_array: [],
    empty_object: {},
  });
  assert.deepEqual(calls(parse(EMPTY)), [['refresh', {}]]);
  const surrounding = parse(SURROUNDING);
  assert.deepEqual(surrounding.problems, []);
  assert.equal(surrounding.message.content, 'Let me check the weather for you.');
  assert.deepEqual(parse('This is a regular response without any tool calls.').problems, []);
  // As the chat template writes a turn: no separator between calls, then <|endoftext|>.
  const templated = parse(`${SINGLE}${EMPTY}<|endoftext|>`);
  assert.deepEqual(templated.problems, []);
  assert.equal(templated.message.toolCalls.length, 2);
});

test('granite-20b-fc: broken outputs are flagged', () => {
  const [cut, list, badName] = MALFORMED.map(parse);
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.deepEqual(codes(list), ['malformed-call']);
  assert.deepEqual(codes(badName), ['malformed-call']);
  // The call object's own } missing after complete arguments.
  const unclosed = parse(SINGLE.slice(0, -1));
  assert.deepEqual(codes(unclosed), ['call-unclosed']);
  assert.deepEqual(calls(unclosed), [['get_weather', { city: 'Tokyo' }]]);
  // An object without a call opener is prose to every engine.
  assert.deepEqual(parse('{"name": "func", "arguments": {}}').problems, []);
});

test('granite-20b-fc: model ids and markers pick the family; other Granites keep theirs', () => {
  for (const id of ['ibm-granite/granite-20b-functioncalling', 'granite-20b-functioncalling-GGUF', 'ibm/granite-20b-functioncalling']) {
    assert.equal(detectFamily(id)?.format.id, 'granite-20b-fc', id);
  }
  assert.equal(detectFamily('ibm-granite/granite-3.3-8b-instruct')?.format.id, 'granite3');
  assert.notEqual(detectFamily('ibm-granite/granite-20b-code-instruct')?.format.id, 'granite-20b-fc');
  assert.equal(detectFamily(undefined, SURROUNDING)?.format.id, 'granite-20b-fc');
  assert.equal(f.detectText('We set <function_call> tags in the XML.'), 0);
});

test('granite-20b-fc: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: PARALLEL, model: MODEL });
  assert.equal(healthy.family, 'granite-20b-fc');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.ok(errors(MALFORMED[0]).some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors('This is a regular response without any tool calls.'), []);
});
