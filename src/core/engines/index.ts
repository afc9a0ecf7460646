/**
 * Engine verdicts for a finding: which conformance class the turn's trouble is (closing markers missing after
 * complete calls, output cut inside a call, an orphan closer), and what vLLM, SGLang and Dynamo do with that class for
 * the family. One cited data file per family; this file only picks the case.
 */
import type { CheckContext } from '../checks/types';
import { leaks } from '../checks/scan';
import type { FamilyId, Finding, ParsedNative } from '../model';
import { families } from '../families/index';
import { ENGINE_NAMES, type Engine, type EngineInfo, type FamilyVerdicts, type Outcome, type VerdictCase } from './types';

export type { Engine, FamilyVerdicts, Outcome, VerdictCase } from './types';

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

/** A stray-marker / residue message that starts with a closing marker: `</tool_call>`, `[/TOOL_CALLS]`, `<tool_call|>`, `…_end|>`. */
const CLOSER_FIRST = /^(?:<\/|\[\/|<[a-z_]+\|>|<[|｜][^\s>]*(?:_end|▁end)[|｜]>)/;
const UNCLOSED_RULES = new Set(['section-unclosed', 'call-unclosed', 'marker-truncated']);
/** Where a call's body is complete: it ends with the close of its JSON, fence, parameter, function, value or invoke. */
const BODY_CLOSE = /(?:[}\]]|```|parameter>|function>|arg_value>|invoke>|<\|close\|>argument<\|sep\|>)$/;
/** A malformed-call message that says a call's opening marker is missing (the call and its closer are there). */
const NO_OPENER = /no tool-call section begin|outside (?:a tool-call section|<)|without (?:<|its opening)/;

/**
 * The verdicts for one finding of the turn, or undefined when the finding is of no class the engines were measured
 * on (or the family has no data file).
 */
export function verdictsFor(ctx: CheckContext, finding: Finding): FindingVerdicts | undefined {
  const where = parseOf(ctx, finding);
  if (!where) return undefined;
  const data = byFamily.get(where.family);
  if (!data) return undefined;
  const c = pickCase(data, finding, where.parsed);
  if (!c) return undefined;
  return {
    family: data.family,
    case: c.id,
    what: c.what,
    engines: (Object.keys(ENGINE_NAMES) as Engine[]).map((e) => shown(e, data.engines[e], c)),
  };
}

function shown(engine: Engine, info: EngineInfo, c: VerdictCase): ShownVerdict {
  const v = c.verdicts[engine];
  return { engine, release: info.release, parser: info.parser, outcome: v.outcome, text: v.text, source: info.evidence, ...(info.note ? { note: info.note } : {}) };
}

/** The family parse the finding is about: the raw turn's, or that of the markup leaked into content or reasoning. */
function parseOf(ctx: CheckContext, f: Finding): { family: FamilyId; parsed: ParsedNative } | undefined {
  const covering = leaks(ctx).find((l) => f.start === undefined || (f.start >= l.offset && f.start <= l.segment.end));
  if (ctx.native.source === 'raw' && ctx.parsed) {
    const foreign = covering && covering.family !== ctx.parsed.family && (f.location === 'content' || f.location === 'reasoning');
    return foreign ? { family: covering.family, parsed: covering.parsed } : { family: ctx.parsed.family, parsed: ctx.parsed };
  }
  return covering ? { family: covering.family, parsed: covering.parsed } : undefined;
}

function pickCase(data: FamilyVerdicts, f: Finding, parsed: ParsedNative): VerdictCase | undefined {
  const multi = parsed.message.toolCalls.length > 1 ? 'multi' : 'single';
  if (UNCLOSED_RULES.has(f.rule) || (f.rule === 'markup-in-content' && parsed.problems.some((p) => p.code === 'section-unclosed' || p.code === 'call-unclosed'))) {
    const cls = cutInsideCall(parsed) ? 'unclosed-truncated' : 'unclosed-complete';
    return data.cases.find((c) => c.class === cls && c.calls === multi) ?? data.cases.find((c) => c.class === cls);
  }
  if ((f.rule === 'malformed-call' && (NO_OPENER.test(f.message) || listWithoutOpener(parsed, f))) || ((f.rule === 'stray-marker' || f.rule === 'markup-residue') && CLOSER_FIRST.test(f.message))) {
    return data.cases.find((c) => c.class === 'orphan-close');
  }
  return undefined;
}

/** A call list that ends with its `]` but never opened with `[` (Phi-4 `functools{…}]`). */
function listWithoutOpener(parsed: ParsedNative, f: Finding): boolean {
  if (!/is not followed by a JSON array of calls/.test(f.message) || f.start === undefined || f.end === undefined) return false;
  const body = parsed.text.slice(f.start, f.end).trimEnd();
  return body.endsWith(']') && !body.includes('[');
}

/** True when output stopped inside a call: an unclosed call whose arguments are not JSON or whose body ends unclosed. */
function cutInsideCall(parsed: ParsedNative): boolean {
  return parsed.problems.some((p) => {
    if (p.code !== 'call-unclosed' || p.callIndex === undefined) return false;
    const call = parsed.message.toolCalls[p.callIndex];
    if (!call) return true;
    try {
      JSON.parse(call.arguments);
    } catch {
      return true;
    }
    const seg = parsed.segments.find((s) => s.kind === 'call' && s.callIndex === p.callIndex);
    return seg ? !BODY_CLOSE.test(parsed.text.slice(seg.start, seg.end).trimEnd()) : false;
  });
}

/** `vLLM 0.23.0: no call, empty content`, one line per engine. */
export function verdictLines(v: FindingVerdicts): string[] {
  return v.engines.map((e) => `${ENGINE_NAMES[e.engine]} ${e.release} (${e.parser}): ${e.text}`);
}

/** The sources of a set of verdicts, one line each, without repeats. */
export function verdictSources(v: FindingVerdicts): string[] {
  return [...new Set(v.engines.map((e) => `${ENGINE_NAMES[e.engine]}: ${e.source}${e.note ? ` (${e.note})` : ''}`))];
}
