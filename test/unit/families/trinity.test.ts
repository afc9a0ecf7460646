import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('trinity');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'arcee-ai/Trinity-Mini';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// sgl-project/sglang test/registered/unit/function_call/test_trinity_detector.py @ 2f4ea05fd5d4d60222cfc25b1cced3c9a3e249fb
const THINK_TAG = '<think>reasoning</think>hello';
const CALL_IN_THINK = '<think><tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call></think>';
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

test("trinity: the detector's outputs parse to their calls, calls inside <think> included", () => {
  const plain = parse(THINK_TAG);
  assert.deepEqual(plain.problems, []);
  assert.equal(plain.message.reasoning, 'reasoning');
  assert.equal(plain.message.content, 'hello');
  const inThink = parse(CALL_IN_THINK);
  assert.deepEqual(inThink.problems, []);
  assert.deepEqual(calls(inThink), [['get_weather', { city: 'Paris' }]]);
  assert.deepEqual(slices(inThink, 'call-name', 0), ['get_weather']);
  // Reasoning around a call inside it stays reasoning; content after it is content.
  const around = parse(`<think>Check Paris.\n${CALL}\nThen answer.</think>\nIt is sunny.<|im_end|>`);
  assert.deepEqual(around.problems, []);
  assert.equal(around.message.reasoning, 'Check Paris.\n\nThen answer.');
  assert.equal(around.message.content, 'It is sunny.');
  assert.deepEqual(calls(around), [['get_weather', { city: 'Paris' }]]);
  // After the reasoning, the Qwen 2.5 layout; the prompt may have opened <think>.
  const after = parse(`Plan.\n</think>\n\nSure.\n${CALL}\n${CALL.replace('Paris', 'Rome')}<|im_end|>`);
  assert.deepEqual(after.problems, []);
  assert.equal(after.message.reasoning, 'Plan.');
  assert.deepEqual(calls(after), [
    ['get_weather', { city: 'Paris' }],
    ['get_weather', { city: 'Rome' }],
  ]);
  assert.deepEqual(parse('<thing>data').problems, []);
});

test('trinity: broken outputs are flagged', () => {
  assert.deepEqual(codes(parse(CALL.replace(/\n<\/tool_call>$/, ''))), ['call-unclosed']);
  assert.deepEqual(codes(parse('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa')), ['call-unclosed']);
  assert.deepEqual(codes(parse(`<think>${CALL.replace(/\n<\/tool_call>$/, '')}</think>`)), ['call-unclosed']);
  assert.deepEqual(codes(parse('<think>Still thinking')), ['reasoning-unclosed']);
  assert.deepEqual(codes(parse('<think>Still thinking</thi')).sort(), ['marker-truncated', 'reasoning-unclosed']);
  assert.deepEqual(codes(parse('{"name": "f", "arguments": {}}\n</tool_call>')), ['stray-marker']);
});

test("trinity: model ids pick the family; its markup alone is Qwen3's", () => {
  for (const id of [
    'arcee-ai/Trinity-Mini',
    'arcee-ai/trinity-large-thinking',
    'arcee-ai/Trinity-Nano-Preview',
    'openrouter/arcee-ai/trinity-mini:free',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'trinity', id);
  }
  assert.notEqual(detectFamily('arcee-ai/virtuoso-large')?.format.id, 'trinity');
  assert.equal(f.detectText(CALL_IN_THINK), 0);
  assert.equal(detectFamily(undefined, CALL)?.format.id, 'qwen3');
});

test('trinity: analyze by model id: a call inside <think> is a call, a broken one an error', () => {
  const healthy = analyze({ nativeText: `${CALL_IN_THINK}<|im_end|>`, model: MODEL });
  assert.equal(healthy.family, 'trinity');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity !== 'info'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => c.name),
    ['get_weather'],
  );
  assert.ok(errors('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa').some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors(THINK_TAG), []);
});
