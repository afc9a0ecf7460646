/**
 * What the rules share: the turn's structured message, where each part of it sits in the native text, a scan for
 * the control markers of every family, and the family parse of markup that leaked into free text. The calls'
 * arguments as JSON are in ./arguments.ts.
 * Everything is computed once per CheckContext (WeakMap caches) so a 1 MB response is scanned once, not per rule.
 */
import type { FamilyId, Finding, FormatProblem, ParsedNative, Segment } from '../model';
import { formats, getFormat } from '../families/index';
import type { CheckContext } from './types';
import { markerlessLeak, strippedCalls } from './markerless-leak';
import { unclosedCallState, type CallState } from './call-shape';
import { NeedleScan, needlesFor } from '../families/shared/text';

/** Display name of a family, for messages. */
export function familyName(id: FamilyId): string {
  return formats.find((f) => f.id === id)?.displayName ?? id;
}

// ---------------------------------------------------------------------------------------------------------------
// Markers of every family

export interface MarkerHit {
  /** The full marker string (`<|tool_calls_section_end|>`), even when the text holds a truncated form. */
  marker: string;
  start: number;
  end: number;
  /** The text holds the marker without its final `>`. */
  truncated: boolean;
  /** Families that own this marker string. */
  families: FamilyId[];
  /** True when the marker belongs to tool-call markup in at least one of those families. */
  tool: boolean;
}

interface MarkerInfo {
  families: FamilyId[];
  tool: boolean;
}

let table: { re: RegExp; needles: (string | RegExp)[]; longest: number; info: Map<string, MarkerInfo> } | undefined;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * One regex over the markers of all families, longest first. Special-token style markers (`<|…|>`, `<｜…｜>`) also
 * match without their final `>`, which is how a truncated marker looks; tag-style markers (`<tool_call>`) do not,
 * since `<tool_call` is an ordinary prefix in prose and code. The regex is sticky: it is tried only where a native
 * scan (`needles`) finds a place a marker may start.
 */
function markerTable(): { re: RegExp; needles: (string | RegExp)[]; longest: number; info: Map<string, MarkerInfo> } {
  if (table) return table;
  const info = new Map<string, MarkerInfo>();
  for (const f of formats) {
    for (const m of [...f.markers, ...f.toolMarkers]) {
      const tool = f.toolMarkers.includes(m);
      const cur = info.get(m);
      if (!cur) info.set(m, { families: [f.id], tool });
      else {
        if (!cur.families.includes(f.id)) cur.families.push(f.id);
        cur.tool ||= tool;
      }
    }
  }
  const markers = [...info.keys()].filter((m) => m.length > 0).sort((a, b) => b.length - a.length);
  const sources = markers.map((m) => (/[|｜]>$/.test(m) ? `${escapeRe(m.slice(0, -1))}>?` : escapeRe(m)));
  // Where a match may start: its first character, or for a common one (a letter) the marker as far as it always goes.
  const needles = needlesFor(markers.map((m) => (/[|｜]>$/.test(m) ? m.slice(0, -1) : m)));
  table = { re: new RegExp(sources.join('|'), 'y'), needles, longest: markers[0]?.length ?? 0, info };
  return table;
}

/**
 * Every marker occurrence in `text[from, to)`, in order, with offsets in `text`: at each place, the longest marker
 * there, and the scan goes on after it (what one global regex over the markers finds).
 */
export function findMarkers(text: string, from = 0, to = text.length): MarkerHit[] {
  const { re, needles, longest, info } = markerTable();
  const hits: MarkerHit[] = [];
  if (from >= to) return hits;
  // The places are looked for a marker's length past `to` too: a marker that starts before `to` and runs past it ends
  // the scan, as the regex run over the whole text would.
  const scan = new NeedleScan(text, needles, from, Math.min(text.length, to + longest));
  for (let start = scan.next(from); start >= 0 && start < to; ) {
    re.lastIndex = start;
    const m = re.exec(text);
    if (!m) {
      start = scan.next(start + 1);
      continue;
    }
    let s = m[0];
    if (start + s.length > to) break;
    const truncated = !info.has(s);
    if (truncated) s += '>';
    const i = info.get(s);
    if (i) hits.push({ marker: s, start, end: start + m[0].length, truncated, ...i });
    start = scan.next(start + m[0].length);
  }
  return hits;
}

/**
 * Special-token markers (`<|…|>`, `<｜…｜>`) never occur in ordinary text, nor do the analysed family's own markers
 * where they do not belong. Another family's tag-style markers (`<tool_call>`, `</parameter>`) can be code or XML the
 * model is legitimately writing, so rules report those at a lower severity.
 */
export function unambiguous(hit: MarkerHit, ctx: CheckContext): boolean {
  return /^<[|｜]/.test(hit.marker) || (ctx.format !== undefined && hit.families.includes(ctx.format.id));
}

/** The distinct markers of a list of hits, quoted for a message (at most `max`). */
export function quoteMarkers(hits: MarkerHit[], max = 3): string {
  const seen = [...new Set(hits.map((h) => (h.truncated ? h.marker.slice(0, -1) : h.marker)))];
  const shown = seen.slice(0, max).join(', ');
  return seen.length > max ? `${shown} and ${seen.length - max} more` : shown;
}

// ---------------------------------------------------------------------------------------------------------------
// Where things are in the native text

const segmentIndex = new WeakMap<CheckContext, Map<string, Segment>>();

/** The first segment of `kind` for call `callIndex`. Indexed once per context: rules ask once per call. */
export function segmentFor(ctx: CheckContext, kind: Segment['kind'], callIndex: number): Segment | undefined {
  let index = segmentIndex.get(ctx);
  if (!index) {
    index = new Map();
    for (const s of ctx.native.segments) {
      const key = `${s.kind} ${s.callIndex}`;
      if (s.callIndex !== undefined && !index.has(key)) index.set(key, s);
    }
    segmentIndex.set(ctx, index);
  }
  return index.get(`${kind} ${callIndex}`);
}

const LOCATION_ORDER: Segment['kind'][] = ['arguments', 'call-name', 'call-id', 'call', 'section', 'reasoning'];

/** The user-facing location of an offset: the innermost segment holding it (`tool_calls[1].arguments`, `reasoning`…). */
export function locationAt(ctx: CheckContext, offset: number): string {
  const holding = ctx.native.segments.filter((s) => s.start <= offset && offset < Math.max(s.end, s.start + 1));
  for (const kind of LOCATION_ORDER) {
    const s = holding.find((h) => h.kind === kind);
    if (!s) continue;
    const call = s.callIndex === undefined ? 'tool_calls' : `tool_calls[${s.callIndex}]`;
    switch (kind) {
      case 'arguments':
        return `${call}.arguments`;
      case 'call-name':
        return `${call}.name`;
      case 'call-id':
        return `${call}.id`;
      case 'call':
      case 'section':
        return call;
      default:
        return kind;
    }
  }
  return 'content';
}

// ---------------------------------------------------------------------------------------------------------------
// Markup leaked into free text (content, reasoning)

export interface Leak {
  region: 'content' | 'reasoning';
  /** The free-text segment the markup sits in. */
  segment: Segment;
  /** Family whose markers these are (the analysed family when it owns them). */
  family: FamilyId;
  /** Tool-call markers of that family found in the segment. */
  hits: MarkerHit[];
  /** From the first to the last marker. */
  start: number;
  end: number;
  /** The leaked markup parsed by that family's parser, from `offset` to the end of the segment. */
  parsed: ParsedNative;
  /** Where the parsed text starts in the native text (the parse's offsets are relative to it). */
  offset: number;
}

/**
 * Where to start parsing leaked markup: the word before the first marker (the Fireworks leak's call id,
 * `channel_reply:0<|tool_call_argument_begin|>`), not the start of a long content, so a 1 MB answer with a
 * leak at its end is not parsed twice.
 */
function leakParseStart(text: string, segmentStart: number, firstMarker: number): number {
  const floor = Math.max(segmentStart, firstMarker - 256);
  let i = firstMarker;
  while (i > floor && !/\s/.test(text[i - 1])) i--;
  return i;
}

const leakCache = new WeakMap<CheckContext, Leak[]>();
const freeTextCache = new WeakMap<CheckContext, { segment: Segment; hits: MarkerHit[] }[]>();

/** The content and reasoning segments with every marker in them (scanned once; leak and control-token rules share it). */
export function freeTextMarkers(ctx: CheckContext): { segment: Segment; hits: MarkerHit[] }[] {
  let out = freeTextCache.get(ctx);
  if (!out) {
    out = ctx.native.segments
      .filter((s) => s.kind === 'content' || s.kind === 'reasoning')
      .map((segment) => ({ segment, hits: findMarkers(ctx.native.text, segment.start, segment.end) }));
    freeTextCache.set(ctx, out);
  }
  return out;
}

/**
 * Tool-call markup in content and reasoning, one entry per (segment, family). Markers go to the analysed family when
 * it owns them; the others to the family that owns most of them (`<tool_call>` is Qwen3's, Qwen3-Coder's and GLM's;
 * `<function=` decides), ties broken by the family's own marker score. So a Kimi marker in a Qwen response is still
 * found, and parsed with the Kimi parser to recover the calls that leaked.
 */
export function leaks(ctx: CheckContext): Leak[] {
  const cached = leakCache.get(ctx);
  if (cached) return cached;
  const out: Leak[] = [];
  const text = ctx.native.text;
  for (const { segment, hits: all } of freeTextMarkers(ctx)) {
    let rest = all.filter((h) => h.tool);
    const plain = rest.length === 0 ? markerlessLeak(ctx, segment) : undefined;
    if (plain) out.push(plain);
    while (rest.length > 0) {
      const family = ownerOf(rest, ctx.format?.id, () => text.slice(rest[0].start, segment.end));
      const hits = rest.filter((h) => h.families.includes(family));
      rest = rest.filter((h) => !h.families.includes(family));
      const from = leakParseStart(text, segment.start, hits[0].start);
      const parsed = getFormat(family).parse(text.slice(from, segment.end));
      // Markers left from a call whose other markers were stripped (`to=functions.x <|constrain|>json<|message|>{…}`).
      const stripped = parsed.message.toolCalls.length ? undefined : strippedCalls(family, text, segment);
      out.push({
        region: segment.kind as Leak['region'],
        segment,
        family,
        hits,
        start: hits[0].start,
        end: hits[hits.length - 1].end,
        parsed: stripped?.parsed ?? parsed,
        offset: stripped?.offset ?? from,
      });
    }
  }
  leakCache.set(ctx, out);
  return out;
}

/** The family a set of markers most likely comes from: the analysed one if it owns any, else the one owning most. */
export function ownerOf(hits: MarkerHit[], own: FamilyId | undefined, leaked: () => string): FamilyId {
  if (own && hits.some((h) => h.families.includes(own))) return own;
  const count = new Map<FamilyId, number>();
  for (const h of hits) for (const f of h.families) count.set(f, (count.get(f) ?? 0) + 1);
  const most = Math.max(...count.values());
  const tied = [...count].filter(([, n]) => n === most).map(([f]) => f);
  if (tied.length === 1) return tied[0];
  const sample = leaked();
  return tied.reduce((best, f) => (getFormat(f).detectText(sample) > getFormat(best).detectText(sample) ? f : best));
}

// ---------------------------------------------------------------------------------------------------------------
// Structural problems (unclosed sections and calls, truncated markers…)

export interface LocatedProblem extends FormatProblem {
  location: string;
  family: FamilyId;
  /** Name of the call the problem is about, as the parser recovered it. */
  callName?: string;
  /** For `call-unclosed`: whether the call arrived whole and only lacks its closers, or was cut off (./call-shape.ts). */
  callState?: CallState;
}

function stateOf(parsed: ParsedNative, p: FormatProblem): { callState?: CallState } {
  return p.code === 'call-unclosed' && p.callIndex !== undefined ? { callState: unclosedCallState(parsed, p.callIndex) } : {};
}

function callNameOf(parsed: ParsedNative, callIndex: number | undefined): string | undefined {
  if (callIndex === undefined) return undefined;
  const calls = parsed.message.toolCalls;
  return (calls.find((c) => c.index === callIndex) ?? calls[callIndex])?.name || undefined;
}

const problemCache = new WeakMap<CheckContext, LocatedProblem[]>();

/**
 * The family parser's problems, in native-text offsets. Raw text: the parse of the whole turn, plus the parse of
 * markup of another family leaked into it. Rendered text: the reconstruction is well-formed by construction, so the
 * problems are those of the markup that leaked into content and reasoning.
 */
export function structuralProblems(ctx: CheckContext): LocatedProblem[] {
  const cached = problemCache.get(ctx);
  if (cached) return cached;
  const out: LocatedProblem[] = [];
  const raw = ctx.native.source === 'raw';
  if (raw && ctx.parsed) {
    const parsed = ctx.parsed;
    for (const p of parsed.problems) {
      const location = p.callIndex === undefined ? locationAt(ctx, p.start) : `tool_calls[${p.callIndex}]`;
      out.push({ ...p, location, family: parsed.family, callName: callNameOf(parsed, p.callIndex), ...stateOf(parsed, p) });
    }
  }
  for (const leak of leaks(ctx)) {
    if (raw && leak.family === ctx.parsed?.family) continue;
    const shift = leak.offset;
    for (const p of leak.parsed.problems) {
      out.push({
        ...p,
        start: p.start + shift,
        end: p.end + shift,
        expectedAt: p.expectedAt === undefined ? undefined : p.expectedAt + shift,
        location: leak.region,
        family: leak.family,
        callName: callNameOf(leak.parsed, p.callIndex),
        ...stateOf(leak.parsed, p),
      });
    }
  }
  problemCache.set(ctx, out);
  return out;
}

/** The problems of one code, each turned into a finding with the rule's message. */
export function problemFindings(
  ctx: CheckContext,
  rule: { id: string; severity: Finding['severity'] },
  code: FormatProblem['code'],
  message: (p: LocatedProblem) => string,
): Finding[] {
  return structuralProblems(ctx)
    .filter((p) => p.code === code)
    .map((p) => ({
      rule: rule.id,
      severity: rule.severity,
      message: message(p),
      location: p.location,
      start: p.start,
      end: p.end,
      ...(p.expectedAt === undefined ? {} : { expectedAt: p.expectedAt }),
      ...(p.marker === undefined ? {} : { expectedMarker: p.marker }),
    }));
}

/** `call 1 (read)`, naming the call the way the user's agent would. */
export function callLabel(index: number | undefined, name: string | undefined): string {
  if (index === undefined) return name ? `the call to ${name}` : 'a call';
  return name ? `call ${index} (${name})` : `call ${index}`;
}

/** Where this problem sits, for messages: `in content`, `in reasoning`, or nothing for the tool-call section itself. */
export function where(p: { location: string }): string {
  return p.location === 'content' || p.location === 'reasoning' ? ` in ${p.location}` : '';
}

/** One finding per leak in `region`: which family's markup, which markers, and which calls the parser recovers. */
export function leakFindings(
  ctx: CheckContext,
  rule: { id: string; severity: Finding['severity'] },
  region: Leak['region'],
  consequence: string,
): Finding[] {
  return leaks(ctx)
    .filter((l) => l.region === region)
    .map((l) => {
      const foreign = ctx.format && ctx.format.id !== l.family ? ` (in a ${ctx.format.displayName} response)` : '';
      const calls = l.parsed.message.toolCalls;
      const recovered =
        calls.length === 0
          ? 'No complete call can be recovered from it.'
          : `It holds ${calls.length} call${calls.length > 1 ? 's' : ''}: ${calls
              .slice(0, 5)
              .map((c) => (c.id ? `${c.name || '(no name)'} (id ${c.id})` : c.name || '(no name)'))
              .join(', ')}${calls.length > 5 ? ', …' : ''}.`;
      return {
        rule: rule.id,
        severity: l.hits.some((h) => unambiguous(h, ctx)) ? rule.severity : 'warning',
        message: `${familyName(l.family)} tool-call markup${foreign} leaked into ${region} (${quoteMarkers(l.hits)}): ${consequence} ${recovered}`,
        location: region,
        start: l.start,
        end: l.end,
      };
    });
}
