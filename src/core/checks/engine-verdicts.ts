/**
 * Engine verdicts for a finding: which conformance class the turn's trouble is (closing markers missing after
 * complete calls, output cut inside a call, an orphan closer), and what vLLM, SGLang and Dynamo do with that class for
 * the family. One cited data file per family; this file only picks the case, from the shape of the markup the finding
 * points at (what is open, what is closed, what is missing), never from the rule's name alone: a finding whose shape
 * is none the engines were measured on gets no verdict rather than a wrong one. The data files are in each family's
 * folder (`families/<id>/verdicts.ts`); this reader sits with the checks, whose scan it reuses.
 */
import type { CheckContext } from './types';
import { leaks } from './scan';
import { BODY_CLOSE, closesValue, unclosedCallState } from './call-shape';
import type { FamilyId, Finding, FormatProblem, ParsedNative } from '../model';
import { families, getFormat } from '../families/index';
import {
  ENGINE_NAMES,
  type Engine,
  type EngineInfo,
  type FamilyVerdicts,
  type Outcome,
  type VerdictCase,
} from '../families/shared/verdicts';

const ALL: readonly FamilyVerdicts[] = families.map((f) => f.verdicts);
const byFamily = new Map<FamilyId, FamilyVerdicts>(ALL.map((v) => [v.family, v]));

/** The verdict data of a family (undefined for a family no data file covers yet). */
export function familyVerdicts(family: FamilyId): FamilyVerdicts | undefined {
  return byFamily.get(family);
}

/** Every family with a verdict file. */
export function verdictFamilies(): FamilyId[] {
  return ALL.map((v) => v.family);
}

/** One engine's verdict on the case a finding belongs to, ready to show. */
export interface ShownVerdict {
  engine: Engine;
  release: string;
  parser: string;
  outcome: Outcome;
  text: string;
  source: string;
  note?: string;
}

export interface FindingVerdicts {
  family: FamilyId;
  case: string;
  what: string;
  engines: ShownVerdict[];
}

/** A message of the parser saying a call's opening marker is missing (the call body and its closer are there). */
const NO_OPENER = /no tool-call section begin|outside (?:a tool-call section|<)|without (?:<|its opening)/;

/**
 * The verdicts for one finding of the turn, or undefined when the finding is of no class the engines were measured
 * on (or the family has no data file).
 */
export function verdictsFor(ctx: CheckContext, finding: Finding): FindingVerdicts | undefined {
  // Markup inside reasoning never reaches the engines' tool-call parsers (their reasoning parser takes it first).
  if (finding.location === 'reasoning' || inReasoning(ctx, finding.start)) return undefined;
  const where = parseOf(ctx, finding);
  if (!where) return undefined;
  const data = byFamily.get(where.family);
  if (!data) return undefined;
  const c = pickCase(data, finding, where.parsed, where.shift);
  if (!c) return undefined;
  return {
    family: data.family,
    case: c.id,
    what: c.what,
    engines: (Object.keys(ENGINE_NAMES) as Engine[]).map((e) => shown(e, data.engines[e], c)),
  };
}

function inReasoning(ctx: CheckContext, at: number | undefined): boolean {
  return at !== undefined && ctx.native.segments.some((s) => s.kind === 'reasoning' && s.start <= at && at < s.end);
}

function shown(engine: Engine, info: EngineInfo, c: VerdictCase): ShownVerdict {
  const v = c.verdicts[engine];
  return {
    engine,
    release: info.release,
    parser: info.parser,
    outcome: v.outcome,
    text: v.text,
    source: info.evidence,
    ...(info.note ? { note: info.note } : {}),
  };
}

/**
 * The family parse the finding is about: the raw turn's, or that of the markup leaked into content or reasoning, and
 * where that parse's text starts in the native text (`shift`).
 */
function parseOf(ctx: CheckContext, f: Finding): { family: FamilyId; parsed: ParsedNative; shift: number } | undefined {
  const covering = leaks(ctx).find((l) => f.start === undefined || (f.start >= l.offset && f.start <= l.segment.end));
  if (ctx.native.source === 'raw' && ctx.parsed) {
    const foreign = covering && covering.family !== ctx.parsed.family && (f.location === 'content' || f.location === 'reasoning');
    return foreign
      ? { family: covering.family, parsed: covering.parsed, shift: covering.offset }
      : { family: ctx.parsed.family, parsed: ctx.parsed, shift: 0 };
  }
  return covering ? { family: covering.family, parsed: covering.parsed, shift: covering.offset } : undefined;
}

/**
 * The case of a finding, from the parse problems at its place: those with exactly its range (the structural rules
 * report the parser's problems as they are), else those that start inside it (a leak's span). Then:
 * - orphan close (5.b): a call whose opening marker is missing while its body and closer are there, or a lone closing
 *   marker of the family's calls or section right after a complete call body. A lone `</tool_call>` after prose, a
 *   value's closer (`</arg_value>`) or a reasoning closer (`</think>`) is no such case;
 * - unclosed (5.a/5.d complete, 5.c/5.e cut): a section or call left open, or the family's closer cut short, where
 *   only the last call of the turn is open. The last call decides the class: its arguments whole and only closers
 *   missing (`…</parameter>` and no `</function>`) is `unclosed-complete`; cut inside them is `unclosed-truncated`.
 *   A section with no call in it, a bare opener, a call left open before another call, or markup inside reasoning
 *   that was never closed (the engines' reasoning parsers keep it all as reasoning) match no measured case.
 */
function pickCase(data: FamilyVerdicts, f: Finding, parsed: ParsedNative, shift: number): VerdictCase | undefined {
  if (f.start === undefined) return undefined;
  if (parsed.problems.some((p) => p.code === 'reasoning-unclosed')) return undefined;
  const s = f.start - shift;
  const e = (f.end ?? f.start) - shift;
  const exact = parsed.problems.filter((p) => p.start === s && p.end === e);
  const here = exact.length > 0 ? exact : parsed.problems.filter((p) => p.start >= s && p.start < Math.max(e, s + 1));
  const tool = new Set(getFormat(parsed.family).toolMarkers);

  if (here.some((p) => orphanClose(parsed, p, tool))) return data.cases.find((c) => c.class === 'orphan-close');

  const open = here.filter(
    (p) =>
      p.code === 'section-unclosed' ||
      p.code === 'call-unclosed' ||
      (p.code === 'marker-truncated' && p.marker !== undefined && tool.has(p.marker) && isCloser(p.marker)),
  );
  if (open.length === 0) return undefined;
  const calls = parsed.message.toolCalls.length;
  if (calls === 0) return undefined;
  const last = calls - 1;
  const openCalls = new Set(
    parsed.problems.filter((p) => p.code === 'call-unclosed' && p.callIndex !== undefined).map((p) => p.callIndex!),
  );
  if ([...openCalls].some((i) => i !== last)) return undefined;
  for (const p of open) {
    if (p.callIndex !== undefined && p.callIndex !== last) return undefined;
    if (
      p.code === 'section-unclosed' &&
      !parsed.segments.some((g) => g.kind === 'call' && g.start >= p.start && g.start < Math.max(p.end, p.start + 1))
    )
      return undefined;
  }
  const state = openCalls.has(last) ? unclosedCallState(parsed, last) : 'complete';
  if (state === 'empty') return undefined;
  const cls = state === 'complete' ? 'unclosed-complete' : 'unclosed-truncated';
  return data.cases.find((c) => c.class === cls && c.calls === (calls > 1 ? 'multi' : 'single'));
}

/** A closing marker: `</…>`, `[/…]`, `<…|>` (Gemma), `<|…_end|>` / `<｜…▁end｜>`, Kimi K3's `<|close|>…`, Harmony's `<|call|>`. */
function isCloser(marker: string): boolean {
  return /^(?:<\/|\[\/|<[a-z_]+\|>|<[|｜][^\s>]*(?:_end|▁end)[|｜]>|<\|close\|>|<\|call\|>$)/.test(marker) || marker.includes('</');
}

/** Whether a parse problem is the orphan-close shape: a complete call that lacks only its opening marker. */
function orphanClose(parsed: ParsedNative, p: FormatProblem, tool: Set<string>): boolean {
  if (p.code === 'malformed-call') {
    if (listWithoutOpener(parsed, p)) return true;
    if (!NO_OPENER.test(p.message)) return false;
    // The calls of the body: the one the problem names, else those inside its range. Each must have arrived whole.
    const inside =
      p.callIndex !== undefined
        ? [p.callIndex]
        : parsed.segments.filter((g) => g.kind === 'call' && g.start >= p.start && g.end <= p.end).map((g) => g.callIndex!);
    return inside.length > 0 && inside.every((i) => wholeCall(parsed, i));
  }
  if (
    p.code !== 'stray-marker' ||
    !p.marker ||
    !tool.has(p.marker) ||
    !isCloser(p.marker) ||
    closesValue(p.marker) ||
    /arg_key>$/.test(p.marker)
  )
    return false;
  return BODY_CLOSE.test(parsed.text.slice(0, p.start).trimEnd());
}

/** A call that arrived whole: present, never reported open, its arguments JSON. */
function wholeCall(parsed: ParsedNative, index: number): boolean {
  const call = parsed.message.toolCalls[index];
  if (!call || parsed.problems.some((q) => q.code === 'call-unclosed' && q.callIndex === index)) return false;
  try {
    JSON.parse(call.arguments);
    return true;
  } catch {
    return false;
  }
}

/** A call list that ends with its `]` but never opened with `[` (Phi-4 `functools{…}]`). */
function listWithoutOpener(parsed: ParsedNative, p: FormatProblem): boolean {
  if (!/is not followed by a JSON array of calls/.test(p.message)) return false;
  const body = parsed.text.slice(p.start, p.end).trimEnd();
  return body.endsWith(']') && !body.includes('[');
}

/** `vLLM 0.23.0: no call, empty content`, one line per engine. */
export function verdictLines(v: FindingVerdicts): string[] {
  return v.engines.map((e) => `${ENGINE_NAMES[e.engine]} ${e.release} (${e.parser}): ${e.text}`);
}

/** The sources of a set of verdicts, one line each, without repeats. */
export function verdictSources(v: FindingVerdicts): string[] {
  return [...new Set(v.engines.map((e) => `${ENGINE_NAMES[e.engine]}: ${e.source}${e.note ? ` (${e.note})` : ''}`))];
}
