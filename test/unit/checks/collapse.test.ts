// Findings as the user reads them: the same defect at many places is one finding "(repeated N×)" at the first place,
// and one span reported by two rules keeps only the more severe finding.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { collapseFindings, repeatsOf } from '../../../src/core/checks/collapse';
import type { Finding } from '../../../src/core/model';

describe('repeated findings collapse', () => {
  test('31 `<tool_call>` openers in a row, each unclosed: one call-unclosed error, repeated 31×, at the first opener', () => {
    const text = '<tool_call>\n'.repeat(31);
    const a = analyze({ nativeText: text, family: 'qwen3' });
    const unclosed = a.findings.filter((f) => f.rule === 'call-unclosed');
    assert.equal(unclosed.length, 1);
    const [f] = unclosed;
    assert.equal(f.severity, 'error');
    assert.match(f.message, /^Qwen3 .*call 0 is never closed: .*\(repeated 31×\)$/);
    assert.equal(f.start, 0);
    const rep = repeatsOf(f)!;
    assert.equal(rep.count, 31);
    assert.equal(rep.positions.length, 31);
    assert.deepEqual(rep.positions[0], { start: f.start, end: f.end, location: f.location });
    assert.equal(rep.positions[30].start, 30 * '<tool_call>\n'.length);
  });

  test('the same stray marker 31 times is one finding', () => {
    const text = 'Done.</tool_call>\n'.repeat(31);
    const a = analyze({ nativeText: text, family: 'qwen3' });
    assert.equal(a.findings.length, 1, a.findings.map((f) => f.message).join('\n'));
    assert.match(a.findings[0].message, /\(repeated 31×\)$/);
    assert.equal(a.findings[0].start, 'Done.'.length);
  });

  test('different defects stay apart: other names, other markers, other rules', () => {
    const f = (rule: string, message: string, start: number): Finding => ({
      rule,
      severity: 'error',
      message,
      location: 'content',
      start,
      end: start + 1,
    });
    const out = collapseFindings([
      f('call-unclosed', 'call 0 (read) is never closed (expected at offset 10).', 0),
      f('call-unclosed', 'call 1 (write) is never closed (expected at offset 20).', 11),
      f('call-unclosed', 'call 2 (read) is never closed (expected at offset 30).', 21),
      f('stray-marker', '</tool_call> at offset 40', 40),
      f('stray-marker', '</function> at offset 50', 50),
    ]);
    assert.deepEqual(
      out.map((x) => x.message),
      [
        'call 0 (read) is never closed (expected at offset 10). (repeated 2×)',
        'call 1 (write) is never closed (expected at offset 20).',
        '</tool_call> at offset 40',
        '</function> at offset 50',
      ],
    );
  });
});

describe('one finding per span', () => {
  test('a lone `</tool_call>`: markup-residue (error) stays, the stray-marker warning on the same range goes', () => {
    const a = analyze({ nativeText: 'Hello</tool_call>', family: 'qwen3' });
    assert.deepEqual(
      a.findings.map((f) => [f.rule, f.severity]),
      [['markup-residue', 'error']],
    );
  });

  test('findings on different ranges, or of the same severity, all stay', () => {
    const f = (rule: string, severity: Finding['severity'], start: number, end: number): Finding => ({
      rule,
      severity,
      message: rule,
      location: 'content',
      start,
      end,
    });
    const out = collapseFindings([
      f('a', 'warning', 0, 5),
      f('b', 'error', 0, 6),
      f('c', 'error', 10, 12),
      f('d', 'error', 10, 12),
      f('e', 'info', 20, 20),
      f('g', 'error', 20, 20),
    ]);
    assert.deepEqual(
      out.map((x) => x.rule),
      ['a', 'b', 'c', 'd', 'e', 'g'],
    );
  });
});
