// Reasoning that never closes, read as the engines read it (the shared turn engine, families/shared/turn.ts): calls
// written inside a `<think>` block left open are reasoning, not calls, and the turn is an error.
// Sources:
// - vLLM vllm-project/vllm tests/reasoning/test_qwen3_reasoning_parser.py @ 049d8df27dda4fd0caffa289ea12bfe5a47ac794
//   (ONLY_OPEN_TAG: `<think>…` with no `</think>` is all reasoning; TOOL_CALL_WITH_THINK_NO_END: `<tool_call>` followed by
//   `<function=` ends the reasoning), vllm/reasoning/qwen3_reasoning_parser.py @ 00a4c6a1d828f0de294a8eac028c60a2b522efa2
//   (`<tool_call>` ends the reasoning only when `<function=` follows; otherwise "Everything generated so far is
//   reasoning"), vllm/frontend/processing/reasoning/basic_parsers.py @ 055e47c28003156421365af985d676fc921cb075
//   (`<think>`-family parsers without an implicit end: no end token, all reasoning).
// - SGLang sgl-project/sglang python/sglang/srt/parser/reasoning_parser.py @ 002e9bfc90a037dc912d3e8525dee06d5d789aa8
//   (DeepSeekR1Detector: "Assume reasoning was truncated before end token"; Qwen3Detector ends at `<tool_call>`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

function parse(id: Parameters<typeof getFormat>[0], text: string) {
  const p = getFormat(id).parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

// vLLM TOOL_CALL_WITH_THINK_NO_END, with the Qwen3 (Hermes JSON) call body vLLM's qwen3 parser does not take as the end
// of the reasoning (its `<function=` lookahead fails), so the whole output stays reasoning.
const JSON_CALL = '<tool_call>\n{"name": "bash", "arguments": {"command": "cat /etc/hosts"}}\n</tool_call>';
const OPEN_THINK_CALL = `<think>I need to read the file.\n\n${JSON_CALL}`;

test('qwen3: a call inside a <think> that never closes is reasoning, not a call, and the turn is an error', () => {
  const p = parse('qwen3', OPEN_THINK_CALL);
  assert.deepEqual(p.message.toolCalls, []);
  assert.equal(p.message.reasoning, `I need to read the file.\n\n${JSON_CALL}`);
  assert.deepEqual(codes(p), ['reasoning-unclosed']);
  assert.equal(p.problems[0].stuck, 'calls');
  // The close belonged before the call.
  assert.equal(p.problems[0].expectedAt, OPEN_THINK_CALL.indexOf('I need to read the file.') + 'I need to read the file.'.length);
  const a = analyze({ nativeText: OPEN_THINK_CALL, model: 'Qwen/Qwen3-8B' });
  assert.equal(a.family, 'qwen3');
  assert.deepEqual(a.message.toolCalls, []);
  const unclosed = a.findings.find((f) => f.rule === 'reasoning-unclosed');
  assert.equal(unclosed?.severity, 'error', JSON.stringify(a.findings));
  assert.match(unclosed!.message, /tool calls the model wrote stay in the reasoning/);
  assert.ok(
    a.findings.some((f) => f.rule === 'markup-in-reasoning' && f.severity === 'error' && /1 call: bash/.test(f.message)),
    JSON.stringify(a.findings),
  );
});

test('every <think> family: Hermes and DeepSeek R1 calls in an open block stay reasoning', () => {
  assert.deepEqual(parse('hermes', OPEN_THINK_CALL).message.toolCalls, []);
  const D = {
    S: '<｜tool▁calls▁begin｜>',
    E: '<｜tool▁calls▁end｜>',
    C: '<｜tool▁call▁begin｜>',
    P: '<｜tool▁sep｜>',
    Z: '<｜tool▁call▁end｜>',
  };
  const r1 = `<think>I need the weather.${D.S}${D.C}function${D.P}get_weather\n\`\`\`json\n{"location": "SF"}\n\`\`\`${D.Z}${D.E}`;
  const p = parse('deepseek-v3', r1);
  assert.deepEqual(p.message.toolCalls, []);
  assert.deepEqual(
    p.problems.map((x) => [x.code, x.stuck]),
    [['reasoning-unclosed', 'calls']],
  );
});

test('qwen3: reasoning cut off with nothing after it is only a warning (truncation), and a closed block is clean', () => {
  // vLLM ONLY_OPEN_TAG.
  const a = analyze({ nativeText: '<think>This is a reasoning section', model: 'Qwen/Qwen3-8B' });
  assert.equal(a.findings.find((f) => f.rule === 'reasoning-unclosed')?.severity, 'warning');
  const closed = parse('qwen3', `<think>I need to read the file.</think>\n\n${JSON_CALL}`);
  assert.deepEqual(closed.problems, []);
  assert.deepEqual(closed.message.toolCalls, [{ index: 0, name: 'bash', arguments: '{"command": "cat /etc/hosts"}' }]);
});

test('qwen3-coder: `<tool_call><function=` ends an open block as both engines read it; the call is kept, a warning', () => {
  // vLLM TOOL_CALL_WITH_THINK_NO_END, verbatim.
  const text =
    '<think>I need to read the file.\n\n<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>';
  const p = parse('qwen3-coder', text);
  assert.equal(p.message.reasoning, 'I need to read the file.');
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'bash', arguments: '{"command":"cat /etc/hosts"}' }]);
  assert.deepEqual(
    p.problems.map((x) => [x.code, x.stuck]),
    [['reasoning-unclosed', undefined]],
  );
  const a = analyze({ nativeText: text, model: 'Qwen/Qwen3-Coder-30B-A3B-Instruct' });
  assert.deepEqual(
    a.findings.filter((f) => f.severity === 'error'),
    [],
  );
});
