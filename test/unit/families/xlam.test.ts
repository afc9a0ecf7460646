import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('xlam');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'Salesforce/Llama-xLAM-2-8b-fc-r';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_xlam_tool_parser.py @ 10a67515200ceb7bd3f91f6e5aba0c4c13e6ef8f (test_extract_tool_calls)
const DALLAS = '{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}';
const ORLANDO = '{"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}';
const PARALLEL = `[${DALLAS}, ${ORLANDO}]`;
const THINK = `<think>I'll help you with that.</think>[${DALLAS}]`;
const FENCED = `I'll help you with that.\n\`\`\`json\n[${DALLAS}]\n\`\`\``;
const TOOL_CALLS = `I'll check the weather for you.[TOOL_CALLS][${DALLAS}]`;
const TOOL_CALL_TAGS = `I'll help you check the weather.<tool_call>[${DALLAS}]</tool_call>`;
const dallas = ['get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' }];

test("xlam: vLLM's healthy outputs parse to their calls, in every wrapping", () => {
  const parallel = parse(PARALLEL);
  assert.deepEqual(parallel.problems, []);
  assert.deepEqual(calls(parallel), [dallas, ['get_current_weather', { city: 'Orlando', state: 'FL', unit: 'fahrenheit' }]]);
  assert.deepEqual(slices(parallel, 'call-name', 0), ['get_current_weather']);
  const think = parse(THINK);
  assert.deepEqual(think.problems, []);
  assert.equal(think.message.reasoning, "I'll help you with that.");
  assert.deepEqual(calls(think), [dallas]);
  for (const [text, content] of [
    [FENCED, "I'll help you with that."],
    [TOOL_CALLS, "I'll check the weather for you."],
    [TOOL_CALL_TAGS, "I'll help you check the weather."],
  ]) {
    const p = parse(text);
    assert.deepEqual(p.problems, [], text);
    assert.equal(p.message.content, content, text);
    assert.deepEqual(calls(p), [dallas], text);
  }
  // A fenced block that is no call list, and prose, stay content and are not flagged.
  for (const prose of ['This is a test', 'Here is the config:\n```json\n{"debug": true}\n```', 'A list: [1, 2, 3]']) {
    const p = parse(prose);
    assert.deepEqual(p.problems, [], prose);
    assert.deepEqual(p.message.toolCalls, [], prose);
  }
});

test('xlam: broken outputs are flagged', () => {
  // The list's ] missing after a complete call (vLLM: the whole output becomes content).
  const unclosed = parse(`[${DALLAS}`);
  assert.deepEqual(codes(unclosed), ['section-unclosed']);
  assert.deepEqual(calls(unclosed), [dallas]);
  // Cut inside a value.
  const cut = parse('[{"name": "get_current_weather", "arguments": {"city": "Dal');
  assert.deepEqual(codes(cut).sort(), ['call-unclosed', 'section-unclosed']);
  // The fence's closing ``` missing.
  assert.deepEqual(codes(parse(FENCED.replace(/\n```$/, ''))), ['section-unclosed']);
  // A call object whose name is no string.
  assert.deepEqual(codes(parse('[{"name": 7, "arguments": {}}]')), ['malformed-call']);
});

test("xlam: model ids and the list's own shape pick the family; other lists keep theirs", () => {
  for (const id of [
    'Salesforce/Llama-xLAM-2-8b-fc-r',
    'Salesforce/xLAM-2-32b-fc-r',
    'Salesforce/xLAM-7b-r',
    'Salesforce/xLAM-1b-fc-r',
    'Salesforce/xLAM-2-3b-fc-r-gguf',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'xlam', id);
  }
  assert.equal(detectFamily('meta-llama/llama-3.3-70b-instruct')?.format.id, 'llama3-json');
  assert.equal(detectFamily(undefined, PARALLEL)?.format.id, 'xlam');
  assert.equal(detectFamily(undefined, FENCED)?.format.id, 'xlam');
  assert.equal(detectFamily(undefined, `[TOOL_CALLS][${DALLAS}]`)?.format.id, 'mistral');
  assert.equal(detectFamily(undefined, `<tool_calls>[${DALLAS}]</tool_calls>`)?.format.id, 'jamba');
  assert.equal(f.detectText('We compared [1, 2] with {"name": "x"} in the text.'), 0);
});

test('xlam: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: PARALLEL, model: MODEL });
  assert.equal(healthy.family, 'xlam');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.equal(healthy.message.toolCalls.length, 2);
  assert.ok(errors('[{"name": "get_current_weather", "arguments": {"city": "Dal').some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors('This is a test'), []);
});
