import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('functiongemma');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'google/functiongemma-270m-it';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_functiongemma_tool_parser.py @ 26c3628ca8265f4f5007ed8e3e28ac66dd23c8ae
const VLLM_SINGLE = '<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>';
const VLLM_TWO_ARGS =
  '<start_function_call>call:get_weather{location:<escape>San Francisco<escape>,unit:<escape>celsius<escape>}<end_function_call>';
const VLLM_CONTENT =
  'Let me check the weather for you. <start_function_call>call:get_weather{location:<escape>Paris<escape>}<end_function_call>';
const VLLM_MULTI =
  '<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call><start_function_call>call:get_time{timezone:<escape>UTC<escape>}<end_function_call>';
// ollama/ollama model/parsers/functiongemma_test.go @ fb30760996871fa9460115c753afd2c60d4ab0f7 (chunks joined):
// numeric_arguments, boolean_arguments, array_argument, nested_object_argument, tool_call_with_no_arguments, float_argument.
const OLLAMA = {
  numeric: '<start_function_call>call:add{a:1,b:2}<end_function_call>',
  boolean: '<start_function_call>call:set_flag{enabled:true,verbose:false}<end_function_call>',
  array: '<start_function_call>call:process{items:[<escape>a<escape>,<escape>b<escape>,<escape>c<escape>]}<end_function_call>',
  nested: '<start_function_call>call:create{config:{settings:{enabled:true,name:<escape>test<escape>}}}<end_function_call>',
  empty: '<start_function_call>call:get_time{}<end_function_call>',
  float: '<start_function_call>call:set_temp{value:3.14}<end_function_call>',
};

test("functiongemma: the engines' healthy outputs parse to their calls", () => {
  const one = parse(VLLM_SINGLE);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['get_weather', { location: 'London' }]]);
  assert.deepEqual(slices(one, 'call-name', 0), ['get_weather']);
  assert.deepEqual(slices(one, 'arguments', 0), ['{location:<escape>London<escape>}']);
  assert.deepEqual(calls(parse(VLLM_TWO_ARGS)), [['get_weather', { location: 'San Francisco', unit: 'celsius' }]]);
  const content = parse(VLLM_CONTENT);
  assert.deepEqual(content.problems, []);
  assert.equal(content.message.content, 'Let me check the weather for you.');
  assert.deepEqual(calls(parse(VLLM_MULTI)), [
    ['get_weather', { location: 'London' }],
    ['get_time', { timezone: 'UTC' }],
  ]);

  const expected: Record<keyof typeof OLLAMA, [string, unknown]> = {
    numeric: ['add', { a: 1, b: 2 }],
    boolean: ['set_flag', { enabled: true, verbose: false }],
    array: ['process', { items: ['a', 'b', 'c'] }],
    nested: ['create', { config: { settings: { enabled: true, name: 'test' } } }],
    empty: ['get_time', {}],
    float: ['set_temp', { value: 3.14 }],
  };
  for (const [k, text] of Object.entries(OLLAMA) as [keyof typeof OLLAMA, string][]) {
    const p = parse(text);
    assert.deepEqual(p.problems, [], k);
    assert.deepEqual(calls(p), [expected[k]], k);
  }
  // The template follows calls with <start_function_response>, other turns end with <end_of_turn>.
  assert.deepEqual(slices(parse(`${VLLM_SINGLE}<start_function_response>`), 'end'), ['<start_function_response>']);
  assert.deepEqual(parse('Hello, world!<end_of_turn>').problems, []);
});

test('functiongemma: broken outputs are flagged', () => {
  // The closer missing after complete arguments: vLLM still delivers the call.
  const unclosed = parse('<start_function_call>call:get_weather{location:<escape>NYC<escape>}');
  assert.deepEqual(codes(unclosed), ['call-unclosed']);
  assert.deepEqual(calls(unclosed), [['get_weather', { location: 'NYC' }]]);
  // Cut inside a value: the call is kept with what arrived.
  const cut = parse('<start_function_call>call:get_weather{location:<escape>N');
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.equal(cut.message.toolCalls[0].arguments, '{location:<escape>N');
  // A cut-short closer.
  assert.deepEqual(codes(parse('<start_function_call>call:get_time{}<end_function')).sort(), ['call-unclosed', 'marker-truncated']);
  // A body that is not the syntax, a string never closed before the call ends, no call: prefix.
  assert.deepEqual(codes(parse('<start_function_call>call:f{"path": "a"}<end_function_call>')), ['malformed-call']);
  assert.deepEqual(codes(parse('<start_function_call>call:f{a:<escape>x}<end_function_call>')), ['malformed-call']);
  assert.deepEqual(codes(parse('<start_function_call>f{a:1}<end_function_call>')), ['malformed-call']);
  // Plain prose, with angle brackets, is not flagged (Ollama content_with_angle_brackets, partial_start_tag_in_content).
  for (const prose of ['The result is a <value> tag', 'Hello <start world']) assert.deepEqual(parse(prose).problems, [], prose);
});

test('functiongemma: model ids and markers pick the family; Gemma 4 keeps its own', () => {
  for (const id of ['google/functiongemma-270m-it', 'unsloth/functiongemma-270m-it-GGUF', 'functiongemma', 'functiongemma:270m']) {
    assert.equal(detectFamily(id)?.format.id, 'functiongemma', id);
  }
  assert.equal(detectFamily('google/gemma-4-31b-it')?.format.id, 'gemma4');
  assert.notEqual(detectFamily('google/gemma-3-270m-it')?.format.id, 'functiongemma');
  assert.equal(detectFamily(undefined, VLLM_CONTENT)?.format.id, 'functiongemma');
  assert.equal(detectFamily(undefined, '<|tool_call>call:get_weather{location:<|"|>Paris<|"|>}<tool_call|>')?.format.id, 'gemma4');
});

test('functiongemma: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: VLLM_MULTI, model: MODEL });
  assert.equal(healthy.family, 'functiongemma');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => c.name),
    ['get_weather', 'get_time'],
  );
  assert.ok(errors('<start_function_call>call:get_weather{location:<escape>N').some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors('Hello, how can I help you today?'), []);
});
