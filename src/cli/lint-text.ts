/**
 * The text report of one analysis: the family line, the parse, each finding with its excerpt and what the engines do
 * with it. Shared by `lint` on a response and `lint --request` on a request body.
 */
import type { CheckContext } from '../core/checks/types';
import { verdictLines, verdictSources, verdictsFor } from '../core/checks/engine-verdicts';
import { callLines, turnReport } from '../core/parsed';
import { formats } from '../core/families/index';
import type { Analysis, Finding } from '../core/model';
import { plural } from '../core/tokens/accounting';
import { columns as width, escapeChar, MAX_TEXT, palette, safeLine, type Palette } from './terminal';

const SOURCE: Record<NonNullable<Analysis['familySource']>, string> = {
  given: 'as given',
  'model-id': 'from the model id',
  markers: 'guessed from the markers in the text: no model id named it',
  none: '',
};

export function formatText(label: string, a: Analysis, ctx?: CheckContext, p: Palette = palette(false)): string {
  const family = a.family
    ? `${formats.find((f) => f.id === a.family)?.displayName ?? a.family} (${SOURCE[a.familySource ?? 'none']})`
    : 'family unknown';
  const counts = (['error', 'warning', 'info'] as const)
    .map((s) => [s, a.findings.filter((f) => f.severity === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => plural(n, s));
  const lines = [`${safeLine(label)}: ${family}, ${counts.length ? counts.join(', ') : 'no findings'}`];
  if (ctx) lines.push(...callLines(turnReport(a, ctx)).map((l) => safeLine(l, MAX_TEXT)));
  const text = a.native.text;
  const shownCases = new Set<string>();
  const sources = new Set<string>();
  for (const f of a.findings) {
    lines.push(
      '',
      `${p.severity(f.severity, f.severity.padEnd(7))} ${p.rule(f.rule)}  ${safeLine(f.location, 200)}${rangeLabel(f)}`,
      `  ${safeLine(f.message)}`,
    );
    if (f.start !== undefined && f.end !== undefined && text.length > 0)
      lines.push(...excerpt(text, f.start, f.end).map((l) => `    ${l}`));
    if (f.expectedAt !== undefined && text.length > 0) {
      const [code, caret] = excerpt(text, f.expectedAt, f.expectedAt);
      lines.push(`    ${code}`, `    ${caret} expected ${f.expectedMarker ?? 'a marker'} here`);
    }
    const engines = ctx ? verdictsFor(ctx, f) : undefined;
    if (engines && shownCases.has(engines.case)) lines.push(`  Engines: as above (conformance case ${engines.case}).`);
    else if (engines) {
      shownCases.add(engines.case);
      lines.push(
        `  What the engines do with this (conformance case ${engines.case}: ${engines.what}):`,
        ...verdictLines(engines).map((l) => `    ${l}`),
      );
      for (const src of verdictSources(engines)) sources.add(src);
    }
  }
  if (sources.size > 0) lines.push('', 'Engine verdicts from:', ...[...sources].map((s) => `  ${s}`));
  if (a.native.source === 'rendered' && a.findings.some((f) => f.start !== undefined)) {
    lines.push(
      '',
      `(offsets are in the ${a.family ? 'native text rendered from the structured response' : 'response laid out as plain text'})`,
    );
  }
  return lines.join('\n');
}

function rangeLabel(f: Finding): string {
  if (f.start === undefined) return '';
  return f.end !== undefined && f.end > f.start + 1 ? ` [${f.start}–${f.end})` : ` [${f.start}]`;
}

// ---------------------------------------------------------------------------------------------------------------
// Excerpts: the offending text on one line, markers visible, every character shown as terminal.ts shows it (the one
// terminal-safe formatter), with a caret underline whose columns count those escapes.

const BEFORE = 32;
const AFTER = 24;
/** Longest underlined stretch shown in full; longer ranges show their head and tail around `…`. */
const MAX_RANGE = 72;

/**
 * Two lines: the text around [start, end) and a `^^^` line under the range (a single `^` for an empty range, at the
 * insertion point). Columns account for escapes and East Asian wide characters (DeepSeek's `｜` markers).
 */
export function excerpt(text: string, start: number, end: number): [string, string] {
  start = clamp(start, 0, text.length);
  end = clamp(Math.max(end, start), 0, text.length);
  const pieces: { s: number; e: number }[] = [];
  const from = Math.max(0, start - BEFORE);
  const to = Math.min(text.length, end + AFTER);
  if (end - start > MAX_RANGE) {
    pieces.push({ s: from, e: start + MAX_RANGE - 24 }, { s: end - 20, e: to });
  } else {
    pieces.push({ s: from, e: to });
  }
  let code = from > 0 ? '…' : '';
  let caret = from > 0 ? ' ' : '';
  pieces.forEach((p, i) => {
    if (i > 0) {
      code += ' … ';
      caret += '^^^';
    }
    for (const ch of iterate(text, p.s, p.e)) {
      const shown = escapeChar(ch.c);
      const w = width(shown);
      code += shown;
      caret += (ch.i >= start && ch.i < end ? '^' : ' ').repeat(w);
    }
  });
  if (to < text.length) code += '…';
  if (end === start) caret = caretAt(text, from, start) + '^';
  return [code, caret.trimEnd()];
}

function* iterate(text: string, s: number, e: number): Generator<{ c: string; i: number }> {
  for (let i = s; i < e; ) {
    const cp = text.codePointAt(i)!;
    const c = String.fromCodePoint(cp);
    yield { c, i };
    i += c.length;
  }
}

/** Spaces up to the column of `at` in the excerpt that starts at `from`. */
function caretAt(text: string, from: number, at: number): string {
  let col = from > 0 ? 1 : 0;
  for (const ch of iterate(text, from, at)) col += width(escapeChar(ch.c));
  return ' '.repeat(col);
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}
