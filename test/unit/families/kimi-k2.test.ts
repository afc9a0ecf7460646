// Kimi K2 calls left in content by a provider that decoded with `skip_special_tokens` (SGLang's default): the section and
// call markers are special tokens, so only `functions.NAME:IDX{…}` stays, with a space where each marker was when
// `spaces_between_special_tokens` is on.
// Sources:
// - SGLang sgl-project/sglang test/registered/unit/function_call/test_kimik2_detector.py @ 5c57d4c3bcd7b2f9d5478c7a76e557c014211b7d
//   (test_single_tool_call, test_multiple_tool_calls: here as the text those outputs decode to once their special
//   tokens are skipped; test_tool_call_inside_think_without_close_tag: the section begin ends an open `<think>`).
// - vLLM vllm-project/vllm vllm/reasoning/kimi_k2_reasoning_parser.py @ 01a703487ceb168659d63f5a71c84a6f9fef937b
//   ("may implicitly end reasoning by starting a tool call section").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import markupInContent from '../../../src/core/checks/markup-in-content';
import { parseStrippedKimi } from '../../../src/core/families/kimi-k2/grammar';
import { getFormat } from '../../../src/core/families/index';
import { KIMI, response, run } from '../checks/helpers';

const K = {
  S: '<|tool_calls_section_begin|>',
  E: '<|tool_calls_section_end|>',
  C: '<|tool_call_begin|>',
  A: '<|tool_call_argument_begin|>',
  Z: '<|tool_call_end|>',
};
const SINGLE = `${K.S}${K.C}functions.ReadFile:0${K.A}{"path": "/test.py"}${K.Z}${K.E}`;
const MULTIPLE = `${K.S}${K.C}functions.ReadFile:0${K.A}{"path": "/a.py"}${K.Z}${K.C}functions.get_weather:1${K.A}{"city": "Tokyo"}${K.Z}${K.E}`;
const strip = (text: string, sep = '') => text.replace(/<\|[a-z_]+\|>/g, sep);

test('kimi-k2: calls with their special tokens stripped, in content, are an error naming the calls', () => {
  for (const [text, calls] of [
    [strip(SINGLE), 'ReadFile \\(id functions\\.ReadFile:0\\)'],
    [strip(SINGLE, ' '), 'ReadFile'],
    [`I'll read both.${strip(MULTIPLE)}`, '2 calls: ReadFile \\(id functions\\.ReadFile:0\\), get_weather'],
    [strip(MULTIPLE, ' '), '2 calls'],
  ] as const) {
    const a = analyze({ nativeText: text, model: KIMI });
    assert.equal(a.family, 'kimi-k2');
    assert.deepEqual(a.message.toolCalls, [], text);
    const leak = a.findings.filter((f) => f.rule === 'markup-in-content');
    assert.equal(leak.length, 1, `${text}: ${JSON.stringify(a.findings)}`);
    assert.equal(leak[0].severity, 'error', text);
    assert.match(leak[0].message, /Kimi K2 tool-call markup leaked into content \(functions\.ReadFile:0\)/, text);
    assert.match(leak[0].message, new RegExp(calls), text);
    const r = run(markupInContent, { response: response({ message: { content: text }, finishReason: 'stop' }) });
    assert.equal(r.findings.length, 1, text);
  }
  assert.deepEqual(parseStrippedKimi(strip(MULTIPLE, ' ')).message.toolCalls, [
    { index: 0, id: 'functions.ReadFile:0', name: 'ReadFile', arguments: '{"path": "/a.py"}' },
    { index: 1, id: 'functions.get_weather:1', name: 'get_weather', arguments: '{"city": "Tokyo"}' },
  ]);
});

test('kimi-k2: ids in prose, and the healthy section, are not flagged', () => {
  for (const content of [
    'The call functions.ReadFile:0 returned the file.',
    'Use ids like `functions.NAME:IDX`.',
    'myfunctions.read:0{"a":1} is not an id.',
  ]) {
    assert.deepEqual(run(markupInContent, { response: response({ message: { content }, finishReason: 'stop' }) }).findings, [], content);
  }
  const a = analyze({ nativeText: SINGLE, model: KIMI });
  assert.deepEqual(
    a.findings.filter((f) => f.severity !== 'info'),
    [],
  );
  assert.equal(a.message.toolCalls.length, 1);
});

test('kimi-k2: the section begin still ends a <think> left open (both engines); the call runs, a warning', () => {
  // SGLang test_tool_call_inside_think_without_close_tag
  const text = `<think>Let me read this file...${SINGLE}`;
  const p = getFormat('kimi-k2').parse(text);
  assert.equal(p.message.reasoning, 'Let me read this file...');
  assert.equal(p.message.toolCalls[0].name, 'ReadFile');
  assert.deepEqual(
    p.problems.map((x) => [x.code, x.stuck]),
    [['reasoning-unclosed', undefined]],
  );
  assert.equal(analyze({ nativeText: text, model: KIMI }).findings.find((f) => f.rule === 'reasoning-unclosed')?.severity, 'warning');
});
