// Engine verdicts by shape: a finding gets the conformance case whose structure its markup has (what is open, what is
// closed, what is missing), and no verdict when its shape is none the engines were measured on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, prepare, runChecks } from '../../../src/core/analyze';
import { verdictsFor } from '../../../src/core/checks/engine-verdicts';
import type { FamilyId, Finding } from '../../../src/core/model';
import { response } from './helpers';

/** Every finding of a raw text, with the case of its verdict (or `-`). */
function cases(family: FamilyId, text: string): { rule: string; message: string; case: string }[] {
  const { ctx } = prepare({ nativeText: text, family });
  return runChecks(ctx).map((f: Finding) => ({ rule: f.rule, message: f.message, case: verdictsFor(ctx, f)?.case ?? '-' }));
}
const caseOf = (family: FamilyId, text: string, rule: string) => cases(family, text).find((c) => c.rule === rule);

describe('orphan closers (5.b) only after a call body', () => {
  test('a lone `</tool_call>` after prose, or alone, is no 5.b: there is no call body for an engine to recover', () => {
    for (const text of ['Hello</tool_call>', '</tool_call>', 'Done. See the result above.\n</tool_call>']) {
      const got = cases('qwen3', text);
      assert.ok(
        got.some((c) => c.rule === 'markup-residue'),
        text,
      );
      assert.deepEqual(
        got.map((c) => c.case),
        got.map(() => '-'),
        text,
      );
    }
    assert.equal(caseOf('minimax-m2', 'Hi</minimax:tool_call>', 'markup-residue')?.case, '-');
    assert.equal(caseOf('deepseek-v32', 'Hi</｜DSML｜function_calls>', 'markup-residue')?.case, '-');
  });

  test('the JSON body before `</tool_call>` is 5.b, and so is MiniMax-M2 `<invoke>…</invoke></minimax:tool_call>`', () => {
    assert.equal(caseOf('qwen3', '{"name": "get_weather", "arguments": {"location": "NYC"}}</tool_call>', 'markup-residue')?.case, '5.b');
    assert.ok(
      cases('minimax-m2', '<invoke name="get_weather">\n<parameter name="location">NYC</parameter>\n</invoke>\n</minimax:tool_call>').some(
        (c) => c.case === '5.b',
      ),
    );
  });

  test('GLM: the value and key closers of a body without its opener carry no verdict, the call closer 5.b', () => {
    const got = cases('glm47', 'get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>');
    const closer = got.filter((c) => c.rule === 'markup-residue' && c.message.startsWith('</tool_call>'));
    assert.deepEqual(
      closer.map((c) => c.case),
      ['5.b'],
    );
    assert.deepEqual(
      got.filter((c) => c.rule === 'markup-residue' && /^<\/arg_(key|value)>/.test(c.message)).map((c) => c.case),
      ['-', '-'],
    );
  });
});

describe('reasoning markup is no tool-call case', () => {
  test('a stray `</think>`, a `</think` cut short, an unclosed think block: no verdict', () => {
    assert.equal(caseOf('qwen3', '<think>thinking here</think>Answer</think>', 'stray-marker')?.case, '-');
    assert.equal(caseOf('qwen3', '<think>abc</think', 'marker-truncated')?.case, '-');
    for (const c of cases('qwen3', '<think>abc <tool_call>{"name": "a", "arguments": {"x": 1}}')) assert.equal(c.case, '-', c.rule);
  });

  test('tool-call markup inside the reasoning of a structured response: no verdict', () => {
    const reasoning =
      'Let me call <|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"a":1}<|tool_call_end|>';
    const { ctx } = prepare({ response: response({ message: { reasoning } }) });
    const found = runChecks(ctx);
    assert.ok(found.some((f) => f.rule === 'section-unclosed' && f.location === 'reasoning'));
    assert.deepEqual(
      found.filter((f) => verdictsFor(ctx, f)),
      [],
    );
  });
});

describe('unclosed shapes', () => {
  test('a section with no call in it, and a bare opener, match no case', () => {
    assert.equal(caseOf('kimi-k2', '<|tool_calls_section_begin|>', 'section-unclosed')?.case, '-');
    const after = caseOf(
      'kimi-k2',
      '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"a":1}<|tool_call_end|><|tool_calls_section_end|>\n<|tool_calls_section_begin|>',
      'section-unclosed',
    );
    assert.equal(after?.case, '-');
  });

  test('31 `<tool_call>` openers after a closed call: no verdict (a call left open before another is no measured case)', () => {
    const text = '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n' + '<tool_call>\n'.repeat(31);
    assert.deepEqual([...new Set(cases('qwen3', text).map((c) => c.case))], ['-']);
  });

  test('a call cut right after `</parameter>` is unclosed-complete (5.a), never "cut off"', () => {
    for (const text of [
      '<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>',
      '<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n',
      '<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</func',
      '<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n</tool_',
    ]) {
      const c = caseOf('qwen3-coder', text, 'call-unclosed');
      assert.equal(c?.case, '5.a', text);
      assert.match(c!.message, /is never closed: its arguments arrived whole, only the closing markup is missing/, text);
      assert.doesNotMatch(c!.message, /cut off/, text);
    }
    const glm = caseOf('glm47', '<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value>', 'call-unclosed');
    assert.equal(glm?.case, '5.a');
    assert.match(glm!.message, /arguments arrived whole/);
  });

  test('a call cut inside the closer of its value, or inside the value, is unclosed-truncated (5.c) and says so', () => {
    for (const text of [
      '<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</param',
      '<tool_call>\n<function=get_weather>\n<parameter=location>\nNY',
    ]) {
      const c = caseOf('qwen3-coder', text, 'call-unclosed');
      assert.equal(c?.case, '5.c', text);
      assert.match(c!.message, /is cut off inside its arguments/, text);
    }
  });

  test('an opener with nothing after it says so, and gets no verdict', () => {
    const c = caseOf('qwen3', 'Let me check.\n<tool_call>\n', 'call-unclosed');
    assert.match(c!.message, /nothing follows its opening marker/);
    assert.equal(c?.case, '-');
  });

  test('through analyze the verdict still lands on the measured cases (Kimi 5.d)', () => {
    const K = { S: '<|tool_calls_section_begin|>', C: '<|tool_call_begin|>', A: '<|tool_call_argument_begin|>', Z: '<|tool_call_end|>' };
    const text = `${K.S}${K.C}functions.w:0${K.A}{"l":"B"}${K.Z}${K.C}functions.w:1${K.A}{"l":"N"}${K.Z}`;
    const { ctx } = prepare({ nativeText: text, family: 'kimi-k2' });
    const a = analyze({ nativeText: text, family: 'kimi-k2' });
    assert.deepEqual(
      a.findings.map((f) => verdictsFor(ctx, f)?.case),
      ['5.d'],
    );
  });
});
