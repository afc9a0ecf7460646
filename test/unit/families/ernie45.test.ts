import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('ernie45');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'baidu/ERNIE-4.5-21B-A3B-Thinking';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_ernie45_moe_tool_parser.py @ 0a26f84cc20c2dae0b6af221007a9a26d507a417
const SINGLE = '<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "Beijing"}}\n</tool_call>\n';
const MULTI =
  '<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "Beijing"}}\n</tool_call>\n<tool_call>\n{"name": "get_temperature_unit", "arguments": {"location": "Guangzhou", "unit": "c"}}\n</tool_call>\n';
const AFTER_THINK = `I need to call two tools to handle these two issues separately.\n</think>\n\n${MULTI}`;
// vllm-project/vllm vllm/reasoning/ernie45_reasoning_parser.py @ 391c1585d8ae48019b590e666efbc04faad1e71a (docstring).
const RESPONSE = 'abc\n</think>\n\n<response>\ndef\n</response>\n';

test("ernie45: vLLM's healthy outputs parse to their calls", () => {
  const one = parse(SINGLE);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['get_current_temperature', { location: 'Beijing' }]]);
  assert.deepEqual(slices(one, 'call-name', 0), ['get_current_temperature']);
  const two = parse(MULTI);
  assert.deepEqual(two.problems, []);
  assert.deepEqual(calls(two), [
    ['get_current_temperature', { location: 'Beijing' }],
    ['get_temperature_unit', { location: 'Guangzhou', unit: 'c' }],
  ]);
  // The prompt opened the reasoning: the text before </think> is reasoning (vLLM's tool parser alone keeps it as content).
  const think = parse(AFTER_THINK);
  assert.deepEqual(think.problems, []);
  assert.equal(think.message.reasoning, 'I need to call two tools to handle these two issues separately.');
  assert.equal(think.message.content, undefined);
  assert.equal(think.message.toolCalls.length, 2);
  // The reply wrapped in <response>: the wrapper is no part of the content.
  const response = parse(RESPONSE);
  assert.deepEqual(response.problems, []);
  assert.equal(response.message.reasoning, 'abc');
  assert.equal(response.message.content, 'def');
  assert.deepEqual(parse('This is a test').problems, []);
});

test('ernie45: broken outputs are flagged', () => {
  const unclosed = parse('<tool_call>\n{"name": "get_weather", "arguments": {"location": "NYC"}}');
  assert.deepEqual(codes(unclosed), ['call-unclosed']);
  assert.deepEqual(calls(unclosed), [['get_weather', { location: 'NYC' }]]);
  const cut = parse('<tool_call>\n{"name": "get_weather", "arguments": {"location": "N');
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.equal(cut.message.toolCalls[0].arguments, '{"location": "N');
  // The last of two calls never closed.
  assert.deepEqual(codes(parse(MULTI.replace(/\n<\/tool_call>\n$/, ''))), ['call-unclosed']);
  // An orphan closer, and a body that is not a call object.
  assert.deepEqual(codes(parse('{"name": "get_weather", "arguments": {}}\n</tool_call>')), ['stray-marker']);
  assert.deepEqual(codes(parse('<tool_call>\nnot json\n</tool_call>')), ['malformed-call']);
});

test("ernie45: model ids pick the family; its markers are Qwen3's and stay Qwen3's", () => {
  for (const id of [
    'baidu/ERNIE-4.5-21B-A3B-Thinking',
    'baidu/ernie-4.5-21b-a3b-thinking',
    'baidu/ERNIE-4.5-300B-A47B-PT',
    'baidu/ernie-4.5-vl-28b-a3b',
    'ERNIE-4.5-21B-A3B-Thinking-Q4_K_M.gguf',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'ernie45', id);
  }
  for (const id of ['baidu/ernie-5.0', 'baidu/cobuddy']) assert.notEqual(detectFamily(id)?.format.id, 'ernie45', id);
  assert.equal(detectFamily(undefined, SINGLE)?.format.id, 'qwen3');
  assert.equal(f.detectText(AFTER_THINK), 0);
});

test('ernie45: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: AFTER_THINK, model: MODEL });
  assert.equal(healthy.family, 'ernie45');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => c.name),
    ['get_current_temperature', 'get_temperature_unit'],
  );
  assert.ok(errors('<tool_call>\n{"name": "get_weather", "arguments": {"location": "N').some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors(RESPONSE), []);
});
