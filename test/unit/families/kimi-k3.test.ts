// Kimi K3: a thinking channel closed by `<|close|>think` with no `<|sep|>`.
// Sources:
// - SGLang sgl-project/sglang test/registered/unit/parser/test_kimik3_reasoning_parser.py @ 03a4a692f7dc8c8ea9327b39aa024d4750db1087
//   (test_non_stream_recovers_missing_think_separator: `thought<|close|>think<|open|>response<|sep|>reply<|close|>response<|sep|>`
//   gives reasoning "thought", content "reply"; SGLang strips the fragment, python/sglang/srt/function_call/kimik3_format.py
//   `_PARTIAL_MARKER_SUFFIXES` @ 0396a0526bdc9deb22e3aa0c50157b62a75ff7a3).
// - vLLM vllm-project/vllm vllm/frontend/processing/reasoning/kimi_k3_reasoning_parser.py @ 055e47c28003156421365af985d676fc921cb075
//   (`extract_reasoning`: no `<|close|>think<|sep|>` → "think not closed -> still reasoning, no content yet": the reply
//   and the tools channel stay in the reasoning).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('kimi-k3');
const tools = (name: string, k: string, v: string) =>
  `<|open|>tools<|sep|><|open|>call tool="${name}" index="0"<|sep|><|open|>argument key="${k}" type="string"<|sep|>${v}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>`;

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const SGLANG = 'thought<|close|>think<|open|>response<|sep|>reply<|close|>response<|sep|>';

test('kimi-k3: `<|close|>think` without `<|sep|>` ends the reasoning where the model meant, and is an error', () => {
  const p = parse(SGLANG);
  assert.deepEqual(p.message, { reasoning: 'thought', content: 'reply', toolCalls: [] });
  assert.deepEqual(codes(p), ['reasoning-unclosed', 'marker-truncated']);
  assert.equal(p.problems[0].stuck, 'answer');
  assert.equal(p.problems[0].expectedAt, 'thought'.length);
  assert.deepEqual(slices(p, 'marker')[0], '<|close|>think');
  const a = analyze({ nativeText: SGLANG, model: 'moonshotai/Kimi-K3' });
  const unclosed = a.findings.find((x) => x.rule === 'reasoning-unclosed');
  assert.equal(unclosed?.severity, 'error', JSON.stringify(a.findings));
  assert.match(unclosed!.message, /answer the model wrote stays in the reasoning/);
});

test('kimi-k3: with the think opener and a tools channel, the calls after the broken close are parsed and reported stuck', () => {
  const text = `<|open|>think<|sep|>Let me look.<|close|>think<|open|>response<|sep|>On it.<|close|>response<|sep|>${tools('ls', 'dir', 'src')}<|end_of_msg|>`;
  const p = parse(text);
  assert.deepEqual(p.message, {
    reasoning: 'Let me look.',
    content: 'On it.',
    toolCalls: [{ index: 0, name: 'ls', arguments: '{"dir":"src"}' }],
  });
  assert.equal(p.problems[0].stuck, 'answer-and-calls');
  const a = analyze({ nativeText: text, model: 'moonshotai/kimi-k3' });
  assert.ok(
    a.findings.some((x) => x.rule === 'reasoning-unclosed' && x.severity === 'error' && /answer and the tool calls/.test(x.message)),
    JSON.stringify(a.findings),
  );
});

test('kimi-k3: with no close at all, the reply channel stays in the reasoning (vLLM), an error', () => {
  const text = '<|open|>think<|sep|>thought<|open|>response<|sep|>reply<|close|>response<|sep|><|end_of_msg|>';
  const p = parse(text);
  assert.equal(p.message.content, undefined);
  assert.deepEqual(
    p.problems.map((x) => [x.code, x.stuck, x.expectedAt]),
    [['reasoning-unclosed', 'answer', text.indexOf('<|open|>response')]],
  );
  assert.equal(
    analyze({ nativeText: text, model: 'moonshotai/kimi-k3' }).findings.find((x) => x.rule === 'reasoning-unclosed')?.severity,
    'error',
  );
});

test('kimi-k3: a healthy thinking channel, and one the prompt opened, stay clean', () => {
  const healthy = 'thought<|close|>think<|sep|><|open|>response<|sep|>reply<|close|>response<|sep|><|end_of_msg|>';
  assert.deepEqual(parse(healthy).problems, []);
  assert.deepEqual(parse(healthy).message, { reasoning: 'thought', content: 'reply', toolCalls: [] });
  assert.deepEqual(parse(`<|open|>think<|sep|>${healthy}`).problems, []);
  // Cut off right after the broken close (SGLang test_non_stream_strips_partial_marker_suffixes): a truncation.
  const cut = analyze({ nativeText: 'deep thought<|close|>think', model: 'moonshotai/kimi-k3' });
  assert.equal(cut.findings.find((x) => x.rule === 'reasoning-unclosed')?.severity, 'warning');
  assert.equal(cut.message.reasoning, 'deep thought');
});
