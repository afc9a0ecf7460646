import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('internlm');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const errors = (text: string, model = 'internlm/internlm2_5-7b-chat') =>
  analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_internlm2_tool_parser.py @ 0661799351bff0ebe06a5c4799b0be7a96fa6ff0
const SINGLE = '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>';
const TYPES = `<|action_start|><|plugin|>{
  "name": "test_function",
  "parameters": {
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
}<|action_end|>`;
const ESCAPED = `<|action_start|><|plugin|>{
  "name": "test_function",
  "parameters": {
    "quoted": "He said \\"hello\\"",
    "path": "C:\\\\Users\\\\file.txt",
    "newline": "line1\\nline2",
    "unicode": "emoji: 🎉"
  }
}<|action_end|>`;
const MALFORMED = [
  '<|action_start|><|plugin|>{"name": "func", "parameters": {',
  '<|action_start|><|plugin|>not json<|action_end|>',
  '<|action_start|><|plugin|>',
  '<|action_start|>{"name": "func"}',
];
// sgl-project/sglang test/registered/unit/function_call/test_internlm_detector.py @ 4dc7b6d7325341a7521052c64bfd1d9956e69086
const SGLANG_FULL = '<|action_start|> <|plugin|>\n{"name": "get_weather", "arguments": {"city": "Paris"}}<|action_end|>';
const SGLANG_PARTIAL = "hi <|action_start|> <|plugin|>get_weather('par";

test("internlm: the engines' healthy outputs (both spellings of the opener, parameters or arguments) parse to their calls", () => {
  const single = parse(SINGLE);
  assert.deepEqual(single.problems, []);
  assert.deepEqual(calls(single), [['get_weather', { city: 'Tokyo' }]]);

  const surrounded = parse(`Let me check the weather for you. ${SINGLE}`);
  assert.equal(surrounded.message.content, 'Let me check the weather for you.');
  assert.deepEqual(calls(surrounded), [['get_weather', { city: 'Tokyo' }]]);

  assert.deepEqual(calls(parse(TYPES)), [
    [
      'test_function',
      {
        string_field: 'hello',
        int_field: 42,
        float_field: 3.14,
        bool_field: true,
        null_field: null,
        array_field: ['a', 'b', 'c'],
        object_field: { nested: 'value' },
        empty_array: [],
        empty_object: {},
      },
    ],
  ]);
  assert.deepEqual(calls(parse(ESCAPED)), [
    ['test_function', { quoted: 'He said "hello"', path: 'C:\\Users\\file.txt', newline: 'line1\nline2', unicode: 'emoji: 🎉' }],
  ]);
  assert.deepEqual(calls(parse('<|action_start|><|plugin|>{"name": "refresh", "parameters": {}}<|action_end|>')), [['refresh', {}]]);

  const spaced = parse(SGLANG_FULL);
  assert.deepEqual(spaced.problems, []);
  assert.deepEqual(calls(spaced), [['get_weather', { city: 'Paris' }]]);

  const two = parse(`${SINGLE}\n${SGLANG_FULL}<|im_end|>`);
  assert.deepEqual(two.problems, []);
  assert.deepEqual(calls(two), [
    ['get_weather', { city: 'Tokyo' }],
    ['get_weather', { city: 'Paris' }],
  ]);

  // Intern-S1 reasons first.
  const s1 = parse(`<think>Need the weather.</think>${SINGLE}<|im_end|>`);
  assert.deepEqual(s1.problems, []);
  assert.equal(s1.message.reasoning, 'Need the weather.');
});

test("internlm: the engines' malformed and cut outputs are flagged; an orphan <|action_end|> too", () => {
  for (const text of [...MALFORMED, SGLANG_PARTIAL]) {
    const p = parse(text);
    assert.ok(p.problems.length > 0, text);
    assert.ok(errors(text).length > 0, text);
  }
  assert.deepEqual(codes(parse(MALFORMED[0])), ['call-unclosed']);
  assert.deepEqual(codes(parse(MALFORMED[1])), ['malformed-call']);
  assert.deepEqual(codes(parse(MALFORMED[3])), ['call-unclosed', 'malformed-call']);
  const noEnd = parse(SINGLE.replace('<|action_end|>', ''));
  assert.deepEqual(codes(noEnd), ['call-unclosed']);
  assert.deepEqual(calls(noEnd), [['get_weather', { city: 'Tokyo' }]]);
  assert.deepEqual(codes(parse('{"name": "get_weather", "parameters": {}}<|action_end|>')), ['stray-marker']);

  for (let i = 0; i <= SINGLE.length; i++) parse(SINGLE.slice(0, i));
  assert.deepEqual(errors(SINGLE), []);
  assert.deepEqual(errors(SGLANG_FULL, 'internlm/Intern-S1'), []);
});

test('internlm: plain prose is not flagged', () => {
  const p = parse('This is a regular response without any tool calls.');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(errors('This is a regular response without any tool calls.'), []);
});

test('internlm: model ids of InternLM2 / 2.5 / 3 and Intern-S1 pick the family; the markers tell it too', () => {
  for (const id of [
    'internlm/internlm2-chat-7b',
    'internlm/internlm2_5-7b-chat',
    'internlm/internlm2_5-20b-chat',
    'internlm/internlm3-8b-instruct',
    'internlm/Intern-S1',
    'internlm/Intern-S1-mini',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'internlm', id);
  }
  for (const id of ['internlm/internlm-7b', 'OpenGVLab/InternVL3-8B']) assert.notEqual(detectFamily(id)?.format.id, 'internlm', id);
  assert.equal(detectFamily(undefined, SINGLE)?.format.id, 'internlm');
  assert.equal(detectFamily(undefined, SGLANG_FULL)?.format.id, 'internlm');
});
