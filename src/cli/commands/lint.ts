import { analyzeWithContext } from '../../core/analyze';
import { repeatsOf } from '../../core/checks/collapse';
import type { CheckContext } from '../../core/checks/types';
import { verdictLines, verdictSources, verdictsFor } from '../../core/engines/index';
import { callLines, turnReport, type TurnReport } from '../../core/parsed';
import { formats } from '../../core/families/index';
import { UserError, type Analysis, type FamilyId, type Finding } from '../../core/model';
import { plural } from '../../core/tokens/accounting';
import { parseArgs } from '../args';
import { familiesMapOutput } from '../families-map';
import { paletteOf, type Command } from '../io';
import { columns as width, escapeChar, MAX_TEXT, palette, safeLine, type Palette } from '../terminal';
import { loadTurnInput } from '../turn-input';
import { printJson, reportJson } from '../json-out';
import { LINT_FLAGS } from '../preread';
import { fragmentFindings, fragmentInput } from './lint-fragment';

const USAGE = `usage: tokenscope lint [--model ID] [--request REQUEST.json] [--family F] [--json] [--data-dir DIR] FILE
       tokenscope lint --where content|reasoning|arguments [--tool NAME] [--model ID] [--family F] [--json] FILE

Flags broken tool calls in one model response. FILE is raw model text, a JSON response body, an SSE dump
(OpenAI Chat, Anthropic Messages, OpenAI Responses, SGLang), a repro bundle (*.tokenscope.json), or a capture id.
A capture id gets the capture store's analysis (what \`show\` and the Problems panel report); --model, --family
or --request analyse it again with what they change, and say so on stderr.

  --model ID        model id to pick the family when FILE names none (e.g. moonshotai/kimi-k2-0905)
  --request FILE    the request body: enables the tool, schema and history checks
  --family F        force the family (${formats.map((f) => f.id).join(', ')})
  --where FIELD     FILE is a fragment pasted from one field of a structured response (the provider already
                    parsed the turn), judged as that field: content (markup in it leaked out of the calls),
                    reasoning (the reasoning_content), or arguments (the arguments string of one tool call:
                    markup in it, invalid JSON). Without --where, FILE is the model's whole raw output.
  --tool NAME       with --where arguments: the name of the call (else it is unknown)
  --json            print {"family", "familySource", "content", "reasoning", "calls": [{index, id, name,
                    arguments, argumentsJson, complete, start, end}], "providerCalls", "findings": [{rule,
                    severity, message, start, end, location}]}; a finding that stands for the same defect at
                    several places says "(repeated N×)" and adds "repeated": {count, positions: [{start, end,
                    location}]}
  --data-dir DIR    capture store for capture ids (default: TOKENSCOPE_DATA_DIR or ~/.tokenscope)
  --families        print, instead of linting a FILE, the tool-call parsers vLLM, SGLang, llama.cpp and Ollama
                    register and the family that reads each (or why none does); with --json as JSON

Exit status: 0 no error-level finding, 1 at least one, 2 unusable input.`;

const lint: Command = async (argv, io) => {
  const args = parseArgs(argv, LINT_FLAGS);
  if (args.bool('help')) {
    io.out(USAGE);
    return 0;
  }
  if (args.bool('families')) {
    io.out(familiesMapOutput({ json: args.bool('json'), positional: args.positional }));
    return 0;
  }
  if (args.str('where') !== undefined) {
    const fragment = fragmentInput(args);
    const { analysis, ctx } = analyzeWithContext(fragment);
    analysis.findings = fragmentFindings(analysis.findings);
    if (args.bool('json')) printJson(io, reportJson(toJson(analysis, ctx), ctx));
    else io.out(formatText(fragment.label, analysis, ctx, paletteOf(io)));
    return analysis.findings.some((f) => f.severity === 'error') ? 1 : 0;
  }
  if (args.str('tool') !== undefined) throw new UserError('--tool goes with --where arguments');
  // A capture id is judged as `show` and the Problems panel judge it: the store's one analysis. Options that change
  // the result (another model, family or request) analyse it again, and say so.
  const changed = (['model', 'family', 'request'] as const).filter((k) => args.str(k) !== undefined);
  const { input, request, family } = await loadTurnInput(args, args.str('data-dir'), changed.length === 0);
  const { analysis, ctx } = input.stored ?? analyzeWithContext({ response: input.response, request, model: args.str('model') ?? input.model, family });
  if (input.captureId && changed.length > 0) {
    const flags = changed.map((k) => `--${k}`).join(', ');
    io.err(`${input.label}: analysed again for ${flags}; \`tokenscope show ${input.captureId}\` and the Problems panel show the stored analysis`);
  }

  if (args.bool('json')) printJson(io, reportJson(toJson(analysis, ctx), ctx));
  else io.out(formatText(input.label, analysis, ctx, paletteOf(io)));
  return analysis.findings.some((f) => f.severity === 'error') ? 1 : 0;
};
export default lint;

/**
 * The machine-readable shape (stable: scripts and CI consume it): the parse, the provider's calls and the findings. A
 * finding standing for the same defect at several places also carries `repeated` (an added key: readers of the older
 * shape see nothing change).
 */
export function toJson(a: Analysis, ctx?: CheckContext): TurnReport {
  const report = turnReport(a, ctx);
  report.findings = report.findings.map((f, i) => {
    const repeated = repeatsOf(a.findings[i]);
    return repeated ? { ...f, repeated } : f;
  });
  return report;
}

const SOURCE: Record<NonNullable<Analysis['familySource']>, string> = {
  given: 'as given',
  'model-id': 'from the model id',
  markers: 'guessed from the markers in the text: no model id named it',
  none: '',
};

export function formatText(label: string, a: Analysis, ctx?: CheckContext, p: Palette = palette(false)): string {
  const family = a.family ? `${formats.find((f) => f.id === a.family)?.displayName ?? a.family} (${SOURCE[a.familySource ?? 'none']})` : 'family unknown';
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
    lines.push('', `${p.severity(f.severity, f.severity.padEnd(7))} ${p.rule(f.rule)}  ${safeLine(f.location, 200)}${rangeLabel(f)}`, `  ${safeLine(f.message)}`);
    if (f.start !== undefined && f.end !== undefined && text.length > 0) lines.push(...excerpt(text, f.start, f.end).map((l) => `    ${l}`));
    if (f.expectedAt !== undefined && text.length > 0) {
      const [code, caret] = excerpt(text, f.expectedAt, f.expectedAt);
      lines.push(`    ${code}`, `    ${caret} expected ${f.expectedMarker ?? 'a marker'} here`);
    }
    const engines = ctx ? verdictsFor(ctx, f) : undefined;
    if (engines && shownCases.has(engines.case)) lines.push(`  Engines: as above (conformance case ${engines.case}).`);
    else if (engines) {
      shownCases.add(engines.case);
      lines.push(`  What the engines do with this (conformance case ${engines.case}: ${engines.what}):`, ...verdictLines(engines).map((l) => `    ${l}`));
      for (const src of verdictSources(engines)) sources.add(src);
    }
  }
  if (sources.size > 0) lines.push('', 'Engine verdicts from:', ...[...sources].map((s) => `  ${s}`));
  if (a.native.source === 'rendered' && a.findings.some((f) => f.start !== undefined)) {
    lines.push('', `(offsets are in the ${a.family ? 'native text rendered from the structured response' : 'response laid out as plain text'})`);
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
