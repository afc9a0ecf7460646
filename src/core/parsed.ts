/**
 * The parse, as output: what a correct parser of the model's family extracts from the text the model wrote (calls
 * with their character ranges, content, reasoning), beside what the provider returned as structured `tool_calls`.
 * `lint --json`, `show`, the exchange view's Parsed tab and the provider-parse-mismatch rule all read it from here.
 *
 * Where the model's own text comes from decides what can be said:
 * - `raw`: the input is the model's output itself (raw text, SGLang `/generate`). The family parse is the parse; no
 *   provider parser ran, so there are no provider calls to compare with.
 * - `logprobs`: a structured response whose per-token logprobs spell the whole output, markers included. The family
 *   parse of that text is the parse, and it can be compared call by call with the structured `tool_calls`.
 * - `reconstruction`: only the structured response is known. The parse is the provider's calls plus any call whose
 *   markup leaked into content; only the leaked calls can show a difference.
 */
import { leaks } from './checks/scan';
import { unclosedCallState } from './checks/call-shape';
import { verdictsFor } from './checks/engine-verdicts';
import type { CheckContext } from './checks/types';
import type { Analysis, FamilyId, Finding, ParsedNative, Segment, ToolCall, ToolDef } from './model';
import { schemaArguments } from './families/shared/schema-types';
import { cutShort } from './wire/index';

export interface ParsedCall {
  index: number;
  id: string | null;
  name: string;
  /** The arguments text as emitted. */
  arguments: string;
  /**
   * The arguments parsed as JSON, or null when they are not JSON. Parameters of a grammar without types (XML-style)
   * are typed by the request's tool schema when the request is known, as vLLM and SGLang type them.
   */
  argumentsJson: unknown;
  /** False for a call the output cut off (no closing marker, or the last call of a turn cut short). */
  complete: boolean;
  /**
   * For a call that is not complete, in the model text: `closers` when its arguments arrived whole and only closing
   * markup is missing, `cut` when the output stopped inside it. Absent otherwise.
   */
  missing?: 'closers' | 'cut';
  /** Range in the analysed native text (the one findings point into); null when the call is not in it. */
  start: number | null;
  end: number | null;
}

export interface ProviderCall {
  index: number;
  id: string | null;
  name: string;
  arguments: string;
  argumentsJson: unknown;
}

export type ParseSource = 'raw' | 'logprobs' | 'reconstruction';

export interface TurnParse {
  source: ParseSource;
  content: string | null;
  reasoning: string | null;
  calls: ParsedCall[];
  /** The structured calls the provider returned; null when no provider parser ran (raw model text). */
  providerCalls: ProviderCall[] | null;
}

/** One difference between the parse and the provider's structured calls. */
export interface CallMismatch {
  kind: 'dropped' | 'arguments-changed' | 'not-in-text';
  /** Index in `TurnParse.calls` (dropped, arguments-changed). */
  parsedIndex?: number;
  /** Index in `TurnParse.providerCalls` (arguments-changed, not-in-text). */
  providerIndex?: number;
  name: string;
}

const cache = new WeakMap<CheckContext, TurnParse>();

/** The parse of one turn (computed once per context). */
export function turnParse(ctx: CheckContext): TurnParse {
  let p = cache.get(ctx);
  if (!p) {
    p = build(ctx);
    cache.set(ctx, p);
  }
  return p;
}

function build(ctx: CheckContext): TurnParse {
  if (ctx.native.source === 'raw') {
    const parsed = ctx.parsed;
    if (!parsed) return { source: 'raw', content: orNull(ctx.native.text.trim()), reasoning: null, calls: [], providerCalls: null };
    return {
      source: 'raw',
      content: orNull(parsed.message.content),
      reasoning: orNull(parsed.message.reasoning),
      calls: fromParse(parsed, 0, ctx.request?.tools),
      providerCalls: null,
    };
  }
  const structured = ctx.message.toolCalls;
  const providerCalls = ctx.response ? structured.map(providerCall) : null;
  const fromLogprobs = logprobParse(ctx);
  if (fromLogprobs) {
    const calls = fromParse(fromLogprobs, null, ctx.request?.tools);
    return {
      source: 'logprobs',
      content: orNull(fromLogprobs.message.content),
      reasoning: orNull(fromLogprobs.message.reasoning),
      calls,
      providerCalls,
    };
  }
  // The provider's calls, as far as they arrived (the last call of a turn cut short is incomplete), plus calls whose
  // markup leaked into content and that the provider did not also deliver.
  const cut = ctx.response !== undefined && cutShort(ctx.response);
  const callSegs = callSegments(ctx.native.segments);
  const delivered: ParsedCall[] = structured.map((c, i) => {
    const seg = callSegs.get(i);
    return { ...providerCall(c, i), complete: !(cut && i === structured.length - 1), start: seg?.start ?? null, end: seg?.end ?? null };
  });
  let content = ctx.message.content;
  const leaked: ParsedCall[] = [];
  const deliveredKeys = new Set(delivered.map(callKey));
  for (const leak of leaks(ctx)) {
    if (leak.region !== 'content') continue;
    const before = ctx.native.text.slice(leak.segment.start, leak.offset);
    content = [before.trim(), leak.parsed.message.content ?? ''].filter(Boolean).join(' ');
    for (const c of fromParse(leak.parsed, leak.offset, ctx.request?.tools)) {
      if (!deliveredKeys.has(callKey(c)) && !(c.argumentsJson === null && delivered.some((d) => sameCall(d, c)))) leaked.push(c);
    }
  }
  const calls = [...leaked, ...delivered].map((c, index) => ({ ...c, index }));
  return { source: 'reconstruction', content: orNull(content), reasoning: orNull(ctx.message.reasoning), calls, providerCalls };
}

/** The calls of a family parse; `shift` places them in the native text (null: the parse is of another text). */
function fromParse(parsed: ParsedNative, shift: number | null, tools: readonly ToolDef[] | undefined): ParsedCall[] {
  const cut = new Set<number>();
  for (const p of parsed.problems) {
    if (p.callIndex !== undefined && (p.code === 'call-unclosed' || p.code === 'malformed-call' || p.code === 'marker-truncated'))
      cut.add(p.callIndex);
  }
  const callSegs = callSegments(parsed.segments);
  return parsed.message.toolCalls.map((c, i) => {
    const seg = callSegs.get(i);
    const at = (n: number | undefined) => (n === undefined || shift === null ? null : n + shift);
    const argumentsJson = parseJson(schemaArguments(c, tools));
    const missing = !cut.has(i)
      ? undefined
      : argumentsJson !== null && unclosedCallState(parsed, i) === 'complete'
        ? ('closers' as const)
        : ('cut' as const);
    return {
      ...providerCall(c, i),
      argumentsJson,
      complete: !cut.has(i),
      ...(missing && { missing }),
      start: at(seg?.start),
      end: at(seg?.end),
    };
  });
}

/** The `call` segment of each call index (the first, as a search from the start would find it). */
function callSegments(segments: readonly Segment[]): Map<number, Segment> {
  const out = new Map<number, Segment>();
  for (const s of segments) if (s.kind === 'call' && s.callIndex !== undefined && !out.has(s.callIndex)) out.set(s.callIndex, s);
  return out;
}

function providerCall(c: ToolCall, index: number): ProviderCall {
  return { index, id: c.id ?? null, name: c.name, arguments: c.arguments, argumentsJson: parseJson(c.arguments) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function orNull(s: string | undefined): string | null {
  return s === undefined || s === '' ? null : s;
}

const utf8 = new TextDecoder();

/**
 * The family parse of the output the logprobs spell, when they spell all of it: the logprob text must hold the
 * content the provider returned, and the family's tool-call markup must be in it (a server that decodes logprob
 * tokens without special tokens shows no markers, and then nothing can be said about the calls).
 */
function logprobParse(ctx: CheckContext): ParsedNative | undefined {
  const tokens = ctx.response?.logprobTokens;
  if (!ctx.format || !tokens || tokens.length === 0) return undefined;
  const text = tokens.every((t) => t.bytes)
    ? utf8.decode(Uint8Array.from(tokens.flatMap((t) => t.bytes!)))
    : tokens.map((t) => t.token).join('');
  const content = ctx.message.content?.trim();
  if (content && !text.includes(content.slice(0, 200))) return undefined;
  if (!ctx.format.toolMarkers.some((m) => m && text.includes(m))) return undefined;
  return ctx.format.parse(text);
}

// ---------------------------------------------------------------------------------------------------------------
// Comparison

/** Values equal as JSON; a string and a number or boolean with the same text count as equal (schema typing). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b) {
    const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
    return scalar(a) && scalar(b) && String(a) === String(b);
  }
  if (typeof a !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  return keys.length === Object.keys(bo).length && keys.every((k) => k in bo && sameJson(ao[k], bo[k]));
}

/**
 * A key two calls share exactly when `sameCall` holds for them, as long as both arguments parse as JSON (`sameJson`
 * compares objects without regard to key order and a string with the number or boolean of the same text): lookups by
 * key keep matching linear in the number of calls. Calls whose arguments are not JSON compare as text (`T…`).
 */
export function callKey(c: { name: string; arguments: string; argumentsJson: unknown }): string {
  return `${c.name}\u0000${c.argumentsJson === null ? `T${c.arguments.trim()}` : canonical(c.argumentsJson)}`;
}

function canonical(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return `s${String(v)}`;
}

/** Same name and the same arguments: compared as parsed JSON when both parse, else as text. */
export function sameCall(
  a: { name: string; arguments: string; argumentsJson: unknown },
  b: { name: string; arguments: string; argumentsJson: unknown },
): boolean {
  if (a.name !== b.name) return false;
  if (a.argumentsJson !== null && b.argumentsJson !== null) return sameJson(a.argumentsJson, b.argumentsJson);
  return a.arguments.trim() === b.arguments.trim();
}

/**
 * Where the provider's structured calls differ from the parse. Only evidence counts: with the whole output (logprobs)
 * every difference; from a reconstruction, only a complete call that leaked into content while the provider delivered
 * other calls structured (a leak with no structured call at all is markup-in-content's). A call the output cut off is
 * not expected to be delivered, so its absence is no difference.
 */
export function callMismatches(p: TurnParse): CallMismatch[] {
  const provider = p.providerCalls;
  if (!provider) return [];
  if (p.source === 'reconstruction') {
    if (provider.length === 0) return [];
    const n = p.calls.length - provider.length;
    return p.calls.slice(0, n).flatMap((c) => (c.complete ? [{ kind: 'dropped' as const, parsedIndex: c.index, name: c.name }] : []));
  }
  if (p.source !== 'logprobs') return [];
  const out: CallMismatch[] = [];
  const used = new Set<number>();
  // The parsed calls by key and by name, each in order (a queue: the first unused one is taken), so matching is
  // linear in the number of calls however many differ.
  const byKey = queues(p.calls, callKey);
  const byName = queues(p.calls, (x) => x.name);
  // A call whose arguments are not JSON compares as text with any call (`sameCall`).
  const textKey = (x: ParsedCall | ProviderCall) => `${x.name}\u0000${x.arguments.trim()}`;
  const byText = queues(p.calls, textKey);
  const byTextOnly = queues(
    p.calls.filter((x) => x.argumentsJson === null),
    textKey,
  );
  const take = (q: Queue | undefined): ParsedCall | undefined => {
    if (!q) return undefined;
    while (q.at < q.items.length && used.has(q.items[q.at].index)) q.at++;
    return q.items[q.at];
  };
  const unmatched: number[] = [];
  provider.forEach((c, i) => {
    const asJson = take(byKey.get(callKey(c)));
    const asText = take((c.argumentsJson === null ? byText : byTextOnly).get(textKey(c)));
    const hit = asJson && asText ? (asJson.index < asText.index ? asJson : asText) : (asJson ?? asText);
    if (hit) used.add(hit.index);
    else unmatched.push(i);
  });
  for (const i of unmatched) {
    const c = provider[i];
    const sameName = take(byName.get(c.name));
    if (sameName) {
      used.add(sameName.index);
      // A cut-off call the provider delivered with what arrived is the truncation's finding, not a changed call.
      if (sameName.complete) out.push({ kind: 'arguments-changed', parsedIndex: sameName.index, providerIndex: i, name: c.name });
    } else out.push({ kind: 'not-in-text', providerIndex: i, name: c.name });
  }
  for (const x of p.calls) if (!used.has(x.index) && x.complete) out.push({ kind: 'dropped', parsedIndex: x.index, name: x.name });
  return out;
}

interface Queue {
  items: ParsedCall[];
  at: number;
}

function queues(calls: readonly ParsedCall[], key: (c: ParsedCall) => string): Map<string, Queue> {
  const out = new Map<string, Queue>();
  for (const c of calls) {
    const k = key(c);
    const q = out.get(k);
    if (q) q.items.push(c);
    else out.set(k, { items: [c], at: 0 });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The machine-readable report

export interface TurnReport {
  family: FamilyId | null;
  /**
   * How the family was chosen: from the model id, from the markers in the text (a guess: the model id named none), or
   * as given (`--family`); `unknown` when nothing told it (the findings then say what markup was seen, if any).
   */
  familySource: 'model-id' | 'markers' | 'given' | 'unknown';
  content: string | null;
  reasoning: string | null;
  calls: ParsedCall[];
  findings: Record<string, unknown>[];
  /** Where the parsed text came from. */
  source: ParseSource;
  providerCalls: ProviderCall[] | null;
  mismatches: CallMismatch[];
}

/**
 * One finding in the machine-readable shape (stable: scripts and CI consume it). With the context, a finding of a
 * class the engines were measured on carries `engines`: what vLLM, SGLang and Dynamo do with it, and the sources.
 */
export function findingJson(f: Finding, ctx?: CheckContext): Record<string, unknown> {
  const engines = ctx ? verdictsFor(ctx, f) : undefined;
  return {
    rule: f.rule,
    severity: f.severity,
    message: f.message,
    start: f.start ?? null,
    end: f.end ?? null,
    location: f.location,
    ...(f.expectedAt === undefined ? {} : { expectedAt: f.expectedAt }),
    ...(f.expectedMarker === undefined ? {} : { expectedMarker: f.expectedMarker }),
    ...(engines ? { engines } : {}),
  };
}

/** `lint --json` and `show --json`: the parse, the provider's calls, and the findings, in one stable shape. */
export function turnReport(analysis: Analysis, ctx: CheckContext | undefined): TurnReport {
  const p: TurnParse = ctx ? turnParse(ctx) : { source: 'reconstruction', content: null, reasoning: null, calls: [], providerCalls: null };
  const source = analysis.familySource;
  return {
    family: analysis.family ?? null,
    familySource: source === 'model-id' || source === 'markers' || source === 'given' ? source : 'unknown',
    content: p.content,
    reasoning: p.reasoning,
    calls: p.calls,
    findings: analysis.findings.map((f) => findingJson(f, ctx)),
    source: p.source,
    providerCalls: p.providerCalls,
    mismatches: callMismatches(p),
  };
}

/** The calls of a parse as text lines for a terminal (names and arguments as emitted; the caller neutralises them). */
export function callLines(p: Pick<TurnReport, 'calls' | 'providerCalls' | 'source' | 'mismatches'>): string[] {
  const lines: string[] = [];
  const FROM: Record<ParseSource, string> = {
    raw: 'parsed from the model text',
    logprobs: 'parsed from the output the logprobs spell',
    reconstruction: 'as the provider returned them, plus any leaked into content',
  };
  lines.push(p.calls.length === 0 ? `calls: none (${FROM[p.source]})` : `calls (${FROM[p.source]}):`);
  for (const c of p.calls) {
    const range = c.start === null ? '' : ` [${c.start}–${c.end})`;
    // A call whose arguments are whole JSON was not closed, not cut off: only its closing markup is missing.
    const open = c.complete ? '' : c.missing === 'closers' ? 'not closed' : 'cut off';
    const state = [open, c.argumentsJson === null ? 'arguments not JSON' : ''].filter(Boolean).join(', ');
    lines.push(
      `  ${c.index}  ${c.name || '(no name)'}${c.id ? ` (id ${c.id})` : ''} ${shorten(c.arguments)}${range}${state ? `  ${state}` : ''}`,
    );
  }
  if (p.providerCalls && p.source !== 'reconstruction') {
    lines.push(p.providerCalls.length === 0 ? 'provider tool_calls: none' : 'provider tool_calls:');
    for (const c of p.providerCalls)
      lines.push(`  ${c.index}  ${c.name || '(no name)'}${c.id ? ` (id ${c.id})` : ''} ${shorten(c.arguments)}`);
  }
  return lines;
}

function shorten(s: string, max = 120): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
