/**
 * Shared scanning for the family modules: marker search, truncated-marker detection, balanced-JSON ends,
 * `<think>` blocks, free-text regions, and the builders that collect segments for `render` and `parse`.
 *
 * Conventions every family follows (so checks can treat them alike):
 * - Parsers never throw. Whatever is not in the family's grammar becomes a `FormatProblem`.
 * - `reasoning` and `content` are recovered trimmed of surrounding whitespace; whitespace-only means absent.
 *   Their segments cover the trimmed text, so a segment's slice equals what it names.
 * - Segments nest only as section ⊃ call ⊃ (call-id | call-name | arguments), plus call-id ⊃ call-name
 *   where the name lives inside the id (Kimi `functions.NAME:IDX`). Markup inside a section or call has
 *   no segment of its own; `marker` segments are markers outside sections and calls.
 * - Truncated calls are kept in the recovered message (with what arrived) and flagged, unlike the
 *   SGLang/vLLM parsers that drop them: Tokenscope shows what the model emitted.
 */
import type {
  AssistantMessage,
  FamilyId,
  FormatProblem,
  NativeText,
  ParsedNative,
  Segment,
  SegmentKind,
  ToolCall,
} from '../model';
import type { RenderOptions } from './types';

export interface MarkerHit {
  /** The full marker (for a truncated hit: the marker it was cut from). */
  marker: string;
  start: number;
  end: number;
}

/** The complete marker starting exactly at `pos`, if any (longest wins). */
export function markerAt(text: string, pos: number, markers: readonly string[]): MarkerHit | undefined {
  let best: MarkerHit | undefined;
  for (const marker of markers) {
    if (text.startsWith(marker, pos) && (!best || marker.length > best.marker.length)) {
      best = { marker, start: pos, end: pos + marker.length };
    }
  }
  return best;
}

const WORD = /[\p{L}\p{N}_]/u;
/** Shortest cut-off prefix reported when a marker is cut by the end of the text. */
const MIN_TAIL_PREFIX = 4;

/**
 * A marker cut short at `pos` (OpenCode #8851: `<|tool_calls_section_end|` without `>`):
 * - at the end of the text, any prefix of at least 4 characters (the stream stopped inside the marker);
 * - mid-text, a prefix that lacks only closing punctuation (`>`, `|>`, `｜>`) and is not followed by a
 *   word character or `>`, so `<thinking>` is not a broken `<think>` nor `<function>` a broken `<function=`.
 * Candidates are tried in the order given, so callers list the marker they expect first.
 */
export function truncatedAt(text: string, pos: number, markers: readonly string[]): MarkerHit | undefined {
  if (markerAt(text, pos, markers)) return undefined;
  for (const marker of markers) {
    let n = 0;
    while (n < marker.length - 1 && pos + n < text.length && text[pos + n] === marker[n]) n++;
    if (n === 0) continue;
    const end = pos + n;
    if (end === text.length) {
      if (n >= Math.min(MIN_TAIL_PREFIX, marker.length - 1)) return { marker, start: pos, end };
      continue;
    }
    if (n < 3 || text[end] === '>' || WORD.test(text[end]) || WORD.test(marker.slice(n))) continue;
    return { marker, start: pos, end };
  }
  return undefined;
}

/**
 * True when the text from `pos` to its end is a start of one of `markers`, however short: the stream
 * stopped there, so it is not stray text (too short to name the marker, it is not reported as cut either).
 */
export function endsInMarker(text: string, pos: number, markers: readonly string[]): boolean {
  const tail = text.slice(pos);
  return tail.length > 0 && markers.some((m) => m.length > tail.length && m.startsWith(tail));
}

/** Per marker list, the regex of the places where one of its markers may start cut short (see `findTruncated`). */
const candidateRes = new Map<string, RegExp>();

function candidateRe(markers: readonly string[]): RegExp {
  const key = JSON.stringify(markers);
  let re = candidateRes.get(key);
  if (!re) {
    const live = markers.filter((m) => m !== '');
    const charClass = (chars: string[]) =>
      `[${[...new Set(chars)].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`;
    const seconds = charClass(live.filter((m) => m.length > 1).map((m) => m[1]));
    re = new RegExp(`${charClass(live.map((m) => m[0]))}(?=${seconds}|$)`, 'g');
    candidateRes.set(key, re);
  }
  return re;
}

/**
 * Every truncated marker in [from, to), in order (at most `max`). Only places where a marker's first character is
 * followed by one of the markers' second characters (or by the end of the range) can hold one: a cut marker keeps
 * at least two characters unless the text ends after the first (see `truncatedAt`). One regex finds those places
 * natively, so a megabyte of prose, or of HTML full of `<div` and `a < b`, is not walked a character at a time. The
 * search runs on a slice of the range (a view for long ranges), so it never reads past `to`.
 */
export function findTruncated(text: string, markers: readonly string[], from: number, to: number, max = Infinity): MarkerHit[] {
  const hits: MarkerHit[] = [];
  if (from >= to) return hits;
  const region = text.slice(from, to);
  const re = candidateRe(markers);
  re.lastIndex = 0;
  for (let m = re.exec(region); m; m = re.exec(region)) {
    const hit = truncatedAt(text, from + m.index, markers);
    if (!hit || hit.end > to) continue;
    if (hits.push(hit) >= max) break;
    re.lastIndex = hit.end - from;
  }
  return hits;
}

/** The first truncated marker in [from, to), scanning no further than it. */
export function firstTruncated(text: string, markers: readonly string[], from: number, to: number): MarkerHit | undefined {
  return findTruncated(text, markers, from, to, 1)[0];
}

const WS = /\s/;

export function skipWs(text: string, pos: number, to = text.length): number {
  while (pos < to && WS.test(text[pos])) pos++;
  return pos;
}

/** [start, end) with surrounding whitespace removed (empty ranges collapse to start). */
export function trimRange(text: string, start: number, end: number): [number, number] {
  let s = start;
  let e = end;
  while (s < e && WS.test(text[s])) s++;
  while (e > s && WS.test(text[e - 1])) e--;
  return [s, e];
}

/**
 * End (exclusive) of the JSON value starting at the first non-space character at or after `pos`, found by
 * bracket balance outside strings. -1 when the value is unterminated (truncated) or there is none.
 * Only structure is checked, not validity: checks judge the JSON itself.
 */
export function jsonValueEnd(text: string, pos: number, to = text.length): number {
  let i = skipWs(text, pos, to);
  if (i >= to) return -1;
  const first = text[i];
  if (first === '"') return stringEnd(text, i, to);
  if (first !== '{' && first !== '[') {
    // A bare scalar: runs to the next delimiter.
    const m = /^[^\s,\]}<]+/.exec(text.slice(i, Math.min(to, i + 64)));
    return m ? i + m[0].length : -1;
  }
  let depth = 0;
  for (; i < to; i++) {
    const c = text[i];
    if (c === '"') {
      const e = stringEnd(text, i, to);
      if (e < 0) return -1;
      i = e - 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** End (exclusive) of the JSON string whose opening quote is at `pos`; -1 when unterminated. */
function stringEnd(text: string, pos: number, to: number): number {
  for (let i = pos + 1; i < to; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return -1;
}

/** Accumulates the segments and problems of one parse. */
export class ParseOut {
  readonly segments: Segment[] = [];
  readonly problems: FormatProblem[] = [];
  readonly calls: ToolCall[] = [];
  private readonly reasoning: string[] = [];
  private readonly content: string[] = [];

  constructor(
    readonly family: FamilyId,
    readonly text: string,
  ) {}

  /** Per marker, the last search: the first occurrence at or after `from` is `at` (-1: none). */
  private readonly seen = new Map<string, { from: number; at: number }>();

  /**
   * Earliest complete occurrence of any of `markers` in [from, to); ties go to the longer marker.
   * Parsing moves forward, so each marker's last hit is reused while it still lies ahead: this keeps a
   * parse linear even when a marker that only ends the turn is looked for after every call.
   */
  find(markers: readonly string[], from = 0, to = this.text.length): MarkerHit | undefined {
    let best: MarkerHit | undefined;
    for (const marker of markers) {
      const at = this.next(marker, from);
      if (at < 0 || at + marker.length > to) continue;
      if (!best || at < best.start || (at === best.start && marker.length > best.marker.length)) {
        best = { marker, start: at, end: at + marker.length };
      }
    }
    return best;
  }

  private next(marker: string, from: number): number {
    const last = this.seen.get(marker);
    if (last && last.from <= from && (last.at < 0 || last.at >= from)) return last.at;
    const at = this.text.indexOf(marker, from);
    this.seen.set(marker, { from, at });
    return at;
  }

  seg(kind: SegmentKind, start: number, end: number, callIndex?: number): void {
    if (end > start) this.segments.push(segment(kind, start, end, callIndex));
  }

  problem(code: FormatProblem['code'], message: string, start: number, end: number, extra: Partial<FormatProblem> = {}): void {
    this.problems.push({ code, message, start, end, ...extra });
  }

  addReasoning(s: string): void {
    if (s.trim()) this.reasoning.push(s.trim());
  }

  addContent(s: string): void {
    if (s.trim()) this.content.push(s.trim());
  }

  addCall(name: string, args: string, id?: string): number {
    const index = this.calls.length;
    this.calls.push(id === undefined ? { index, name, arguments: args } : { index, id, name, arguments: args });
    return index;
  }

  finish(): ParsedNative {
    // Several regions (content before and after a section) are joined by a blank line.
    const message: AssistantMessage = {
      ...(this.reasoning.length ? { reasoning: this.reasoning.join('\n\n') } : {}),
      ...(this.content.length ? { content: this.content.join('\n\n') } : {}),
      toolCalls: this.calls,
    };
    return {
      family: this.family,
      text: this.text,
      segments: sortSegments(this.segments),
      message,
      problems: this.problems.sort((a, b) => a.start - b.start),
    };
  }
}

/** A segment; `callIndex` only when given, so segments compare equal whichever side built them. */
function segment(kind: SegmentKind, start: number, end: number, callIndex?: number): Segment {
  return callIndex === undefined ? { kind, start, end } : { kind, start, end, callIndex };
}

/** Outer kinds before inner ones at the same start, so a sorted list reads as a tree walk. */
const NEST_RANK: Partial<Record<SegmentKind, number>> = { section: 0, call: 1, 'call-id': 2, 'call-name': 3, arguments: 3 };

function sortSegments(segments: Segment[]): Segment[] {
  return segments.sort((a, b) => a.start - b.start || b.end - a.end || (NEST_RANK[a.kind] ?? 9) - (NEST_RANK[b.kind] ?? 9));
}

/** Builds rendered text with exact segments. */
export class RenderOut {
  text = '';
  readonly segments: Segment[] = [];

  /** Appends `s`; when `kind` is given, `s` becomes one segment of that kind. */
  put(s: string, kind?: SegmentKind, callIndex?: number): this {
    const start = this.text.length;
    this.text += s;
    if (kind && s.length) this.segments.push(segment(kind, start, this.text.length, callIndex));
    return this;
  }

  /** Runs `body`, then records everything it appended as one `kind` segment (section, call, call-id…). */
  wrap(kind: SegmentKind, body: () => void, callIndex?: number): this {
    const start = this.text.length;
    body();
    if (this.text.length > start) this.segments.push(segment(kind, start, this.text.length, callIndex));
    return this;
  }

  done(): NativeText {
    return { text: this.text, segments: sortSegments(this.segments) };
  }
}

/** Non-empty trimmed text, or undefined. */
export function present(s: string | undefined): string | undefined {
  const t = s?.trim();
  return t ? t : undefined;
}

/**
 * A free-text region (content or reasoning) in [start, end): adds the trimmed text to the message, and
 * flags what should not be there. Complete family markers become `marker` segments with a `stray-marker`
 * problem (they split the text segments); cut-short markers get `marker-truncated`.
 */
export function freeText(out: ParseOut, kind: 'content' | 'reasoning', start: number, end: number, markers: readonly string[]): void {
  const { text } = out;
  if (kind === 'content') out.addContent(text.slice(start, end));
  else out.addReasoning(text.slice(start, end));
  let pos = start;
  const piece = (to: number) => {
    const [s, e] = trimRange(text, pos, to);
    out.seg(kind, s, e);
  };
  while (pos < end) {
    const full = out.find(markers, pos, end);
    const cut = firstTruncated(text, markers, pos, full ? full.start : end);
    const hit = cut ?? full;
    if (!hit) break;
    piece(hit.start);
    out.seg('marker', hit.start, hit.end);
    if (cut) {
      out.problem('marker-truncated', `${hit.marker} is cut short in ${kind}`, hit.start, hit.end, { marker: hit.marker });
    } else {
      out.problem('stray-marker', `${hit.marker} in ${kind}, outside the family's grammar`, hit.start, hit.end, { marker: hit.marker });
    }
    pos = hit.end;
  }
  piece(end);
}

export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

/**
 * A `<think>…</think>` block at `pos` (after optional whitespace). Returns where the rest of the turn starts.
 * - `implicitOpen`: the prompt already ended with `<think>` (Kimi K2.5, DeepSeek R1), so a `</think>`
 *   with no opening marker still closes reasoning that started at `pos`.
 * - `stops`: markers that end the block even without `</think>` (the tool-call section: K2 Thinking
 *   sometimes skips `</think>`); then `reasoning-unclosed` points at the stop.
 */
export function thinkBlock(out: ParseOut, pos: number, opts: { implicitOpen: boolean; stops: readonly string[]; markers: readonly string[] }): number {
  const { text } = out;
  const at = skipWs(text, pos);
  const opened = text.startsWith(THINK_OPEN, at);
  const bodyStart = opened ? at + THINK_OPEN.length : pos;
  const close = text.indexOf(THINK_CLOSE, bodyStart);
  const stop = out.find(opts.stops, bodyStart);
  if (!opened) {
    // Without `<think>` only a `</think>` ahead of any stop proves the text is reasoning.
    if (!opts.implicitOpen || close < 0 || (stop && stop.start < close)) return pos;
  } else {
    out.seg('marker', at, bodyStart);
  }
  const inner = opts.markers.filter((m) => m !== THINK_CLOSE);
  if (close >= 0 && !(stop && stop.start < close)) {
    freeText(out, 'reasoning', bodyStart, close, inner);
    out.seg('marker', close, close + THINK_CLOSE.length);
    return close + THINK_CLOSE.length;
  }
  // Unclosed: reasoning runs to a cut-short `</think>` (read as the broken close), the stop, or the end.
  let end = stop ? stop.start : text.length;
  const cut = firstTruncated(text, [THINK_CLOSE], bodyStart, end);
  if (cut) end = cut.start;
  freeText(out, 'reasoning', bodyStart, end, inner);
  const [, expectedAt] = trimRange(text, bodyStart, end);
  // When `</think>` does come, but after the tool markup, the calls sit inside the reasoning block.
  const why = stop && close > stop.start ? `tool-call markup inside the think block (${THINK_CLOSE} only comes after it)` : `${THINK_CLOSE} never came`;
  out.problem('reasoning-unclosed', why, opened ? at : bodyStart, end, {
    expectedAt: Math.max(expectedAt, bodyStart),
    marker: THINK_CLOSE,
  });
  if (!cut) return end;
  out.seg('marker', cut.start, cut.end);
  out.problem('marker-truncated', `${THINK_CLOSE} is cut short`, cut.start, cut.end, { marker: THINK_CLOSE });
  return cut.end;
}

/** Sum of the weights of the signatures found in `text` (`detectText`). */
export function scoreText(text: string, signatures: readonly (readonly [string | RegExp, number])[]): number {
  let score = 0;
  for (const [sig, weight] of signatures) {
    if (typeof sig === 'string' ? text.includes(sig) : sig.test(text)) score += weight;
  }
  return score;
}

/** Model-id test: lower-cased, provider prefix and `:free`/`:exacto`-style suffixes removed. */
export function modelKey(modelId: string): string {
  const lower = modelId.trim().toLowerCase().replace(/:[a-z0-9-]+$/, '');
  return lower.slice(lower.lastIndexOf('/') + 1);
}

/**
 * XML-argument families (qwen3-coder, glm45, minimax-m2) carry parameters as text. Their canonical
 * `arguments` is the compact JSON of an object: a value that reads as JSON other than a string
 * (`42`, `true`, `null`, `{…}`, `[…]`) is that value, anything else stays the string as written.
 * Without the tool schema a string `"42"` cannot be told from the number, so schema-aware coercion is
 * left to the checks.
 */
export function paramsToJson(params: readonly (readonly [string, string])[]): string {
  const obj: Record<string, unknown> = {};
  for (const [k, raw] of params) obj[k] = paramValue(raw);
  return JSON.stringify(obj);
}

function paramValue(raw: string): unknown {
  const t = raw.trim();
  if (/^(?:[-\d{[]|true$|false$|null$)/.test(t)) {
    try {
      const v: unknown = JSON.parse(t);
      if (typeof v !== 'string') return v;
    } catch {
      // Not JSON: the text itself.
    }
  }
  return raw;
}

/**
 * The other way: a JSON object's members as parameter texts (strings as written, others as JSON), or
 * undefined when `args` is not a JSON object (render then writes the raw text so it survives a round trip).
 */
export function jsonToParams(args: string): [string, string][] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(args);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  return Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)]);
}

/** Something that opens a section or a call in free text. */
export interface Starter {
  marker: string;
  /** Where the structure really starts when text before the marker belongs to it (default: the marker). */
  lead?(text: string, from: number, at: number): number;
  /** Parses from `start` (`hit` is the marker found); returns where the structure ends. */
  parse(out: ParseOut, start: number, hit: MarkerHit): number;
}

/** The shape of one assistant turn: optional `<think>` block, then free text, sections/calls, and end markers. */
export interface TurnGrammar {
  family: FamilyId;
  markers: readonly string[];
  /** The prompt may already have opened `<think>`, so a completion can start inside reasoning. */
  implicitThink: boolean;
  starters: readonly Starter[];
  /** End-of-turn markers (`end` segments). */
  ends: readonly string[];
}

/** The parse loop the families share: reasoning, then content interleaved with structure and end markers. */
export function parseTurn(g: TurnGrammar, text: string): ParsedNative {
  const out = new ParseOut(g.family, text);
  const structural = [...g.starters.map((s) => s.marker), ...g.ends];
  let pos = thinkBlock(out, 0, { implicitOpen: g.implicitThink, stops: structural, markers: g.markers });
  while (pos < text.length) {
    const next = out.find(structural, pos);
    if (!next) {
      freeText(out, 'content', pos, text.length, g.markers);
      break;
    }
    const starter = g.starters.find((s) => s.marker === next.marker);
    const start = starter?.lead ? starter.lead(text, pos, next.start) : next.start;
    freeText(out, 'content', pos, start, g.markers);
    if (starter) {
      pos = Math.max(starter.parse(out, start, next), next.end);
    } else {
      out.seg('end', next.start, next.end);
      pos = next.end;
    }
  }
  return out.finish();
}

/** A tool-call section: begin marker, calls, end marker (Kimi, DeepSeek, MiniMax). */
export interface SectionGrammar {
  /** Section end markers; the first is the canonical one reported as missing. */
  ends: readonly string[];
  callBegin: string;
  /** Markers that stop the section without closing it: end of turn, another section. */
  breaks: readonly string[];
  markers: readonly string[];
  /** One call from `start` (its begin marker ends at `bodyStart`); `sectioned` is false when the section had no begin. */
  call(out: ParseOut, start: number, bodyStart: number, sectioned: boolean): number;
  /** Text between calls that is not markup; return a new position when the family reads a call from it. */
  loose?(out: ParseOut, pos: number, sectioned: boolean): number | undefined;
}

/**
 * The section from `start`; `begin` is its begin marker, absent when calls appear without one (then the
 * calls report `malformed-call` and no `section-unclosed` is added). Returns where the section ends.
 * An unclosed section expects its end right after the last call (or at a cut-short end marker).
 */
export function parseSection(out: ParseOut, g: SectionGrammar, start: number, begin?: MarkerHit): number {
  const { text } = out;
  const sectioned = begin !== undefined;
  let pos = begin ? begin.end : start;
  let lastEnd = pos;
  let end: number | undefined;
  let expectedAt: number | undefined;
  for (;;) {
    pos = skipWs(text, pos);
    if (pos >= text.length) {
      expectedAt = lastEnd;
      break;
    }
    const m = markerAt(text, pos, [...g.ends, g.callBegin, ...g.breaks]);
    if (m && g.ends.includes(m.marker)) {
      end = m.end;
      break;
    }
    if (m?.marker === g.callBegin) {
      pos = lastEnd = Math.max(g.call(out, m.start, m.end, sectioned), m.end);
      continue;
    }
    if (m) {
      expectedAt = lastEnd;
      break;
    }
    // Between calls a cut-short fragment is read as the section end, else as the next call's begin.
    const cut = truncatedAt(text, pos, [...g.ends, g.callBegin, ...g.markers]);
    if (cut) {
      out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker });
      expectedAt = cut.start;
      end = cut.end;
      break;
    }
    if (endsInMarker(text, pos, [...g.ends, g.callBegin, ...g.markers])) {
      expectedAt = lastEnd;
      end = text.length;
      break;
    }
    const read = g.loose?.(out, pos, sectioned);
    if (read !== undefined) {
      pos = lastEnd = Math.max(read, pos + 1);
      continue;
    }
    const next = out.find([...g.ends, g.callBegin, ...g.breaks], pos);
    const junkEnd = next ? next.start : text.length;
    const [js, je] = trimRange(text, pos, junkEnd);
    out.problem('malformed-call', 'text inside the tool-call section, outside any call', js, je);
    pos = lastEnd = junkEnd;
  }
  const sectionEnd = end ?? lastEnd;
  out.seg('section', start, sectionEnd);
  if (expectedAt !== undefined && begin) {
    out.problem('section-unclosed', `${begin.marker} never closed by ${g.ends[0]}`, begin.start, sectionEnd, {
      expectedAt,
      marker: g.ends[0],
    });
  }
  return sectionEnd;
}

/** How a call body ended: the marker that stopped it, or a cut-short marker. */
export interface BodyEnd {
  /** The body, trimmed. */
  range: [number, number];
  stop?: MarkerHit;
  cut?: MarkerHit;
}

/**
 * JSON arguments from `from`: the balanced JSON value, then anything up to the first of `stops` (so markers
 * quoted inside JSON strings stay in the arguments). A cut-short marker before the stop ends them.
 */
export function jsonBody(out: ParseOut, from: number, stops: readonly string[], markers: readonly string[]): BodyEnd {
  const jsonEnd = jsonValueEnd(out.text, from);
  return bodyUntil(out, from, jsonEnd >= 0 ? jsonEnd : from, stops, markers);
}

/** A body from `from` up to the first of `stops` searched from `searchFrom`, cut short by a truncated marker. */
export function bodyUntil(out: ParseOut, from: number, searchFrom: number, stops: readonly string[], markers: readonly string[]): BodyEnd {
  const { text } = out;
  const stop = out.find(stops, searchFrom);
  const end = stop ? stop.start : text.length;
  const cut = firstTruncated(text, markers, searchFrom, end);
  return { range: trimRange(text, from, cut ? cut.start : end), stop: cut ? undefined : stop, cut };
}

/**
 * Expects `closers` in order after `pos` (whitespace allowed between). Returns where they end and, when
 * one is missing, which one and where it was expected. A closer that is absent while a later one is
 * present is `skipped` (a malformed call, not a cut-off one). A cut-short closer is `marker-truncated`.
 */
export function expectClosers(
  out: ParseOut,
  pos: number,
  closers: readonly string[],
  markers: readonly string[],
  callIndex?: number,
): { end: number; missing?: string; expectedAt?: number; skipped: string[] } {
  const { text } = out;
  const skipped: string[] = [];
  let end = pos;
  for (let i = 0; i < closers.length; i++) {
    const closer = closers[i];
    const at = skipWs(text, end);
    if (text.startsWith(closer, at)) {
      end = at + closer.length;
      continue;
    }
    const cut = truncatedAt(text, at, [closer, ...markers]);
    if (cut?.marker === closer) {
      out.problem('marker-truncated', `${closer} is cut short`, cut.start, cut.end, { marker: closer, callIndex });
      return { end: cut.end, missing: closer, expectedAt: cut.start, skipped };
    }
    if (closers.slice(i + 1).some((c) => text.startsWith(c, at))) {
      skipped.push(closer);
      continue;
    }
    return { end, missing: closer, expectedAt: end, skipped };
  }
  return { end, skipped };
}

/** Reports call `index` as never closed. */
export function callUnclosed(out: ParseOut, index: number, start: number, end: number, marker: string, expectedAt: number): void {
  out.problem('call-unclosed', `call ${index} never closed by ${marker}`, start, end, { expectedAt, marker, callIndex: index });
}

/** One parameter of an XML-argument call, with its raw value text. */
export interface ParamGrammar {
  /** Reads a parameter head at `pos` (`<parameter=K>`): the key and where its value starts. */
  head(out: ParseOut, pos: number, to: number): { key: string; valueStart: number } | undefined;
  /** Text that starts a head, so a value missing its close still ends at the next parameter. */
  headStart: string;
  /** Marker that closes a value. */
  close: string;
  /** Drop one newline on each side of a value (Qwen3-Coder writes `>\nV\n</parameter>`). */
  newlines: boolean;
}

/**
 * The parameters in [from, to). Stops at the first text that is not a parameter (`rest` then tells where).
 * A value without its close runs to the next head or to `to` and is reported through `unclosed`.
 */
export function xmlParams(
  out: ParseOut,
  from: number,
  to: number,
  g: ParamGrammar,
  markers: readonly string[],
): { params: [string, string][]; range?: [number, number]; rest: number; unclosed?: { expectedAt: number } } {
  const { text } = out;
  const params: [string, string][] = [];
  let pos = skipWs(text, from, to);
  let first: number | undefined;
  let last = pos;
  let unclosed: { expectedAt: number } | undefined;
  while (pos < to) {
    const head = g.head(out, pos, to);
    if (!head) break;
    first ??= pos;
    const close = out.find([g.close], head.valueStart, to)?.start ?? -1;
    const nextHead = out.find([g.headStart], head.valueStart, to)?.start ?? -1;
    let valueEnd: number;
    if (close >= 0 && (nextHead < 0 || close < nextHead)) {
      valueEnd = close;
      last = close + g.close.length;
    } else if (nextHead >= 0) {
      // The next parameter starts before this one closed: keep both, flag the missing close.
      valueEnd = nextHead;
      last = trimRange(text, head.valueStart, valueEnd)[1];
      out.problem('malformed-call', `parameter '${head.key}' lacks ${g.close}`, pos, last, { marker: g.close, callIndex: out.calls.length });
    } else {
      valueEnd = to;
      const cut = findTruncated(text, [g.close, ...markers], head.valueStart, to).find((c) => c.end === to);
      if (cut) {
        out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker, callIndex: out.calls.length });
        valueEnd = cut.start;
      }
      last = cut ? cut.end : trimRange(text, head.valueStart, valueEnd)[1];
      unclosed = { expectedAt: cut ? cut.start : last };
    }
    let value = text.slice(head.valueStart, valueEnd);
    if (g.newlines) value = value.replace(/^\n/, '').replace(/\n$/, '');
    params.push([head.key, value]);
    pos = skipWs(text, last, to);
    if (unclosed) break;
  }
  return { params, range: first === undefined ? undefined : [first, last], rest: pos, unclosed };
}

/** One member of a JSON object: key (decoded when its string is complete) and the raw value range. */
export interface JsonMember {
  key?: string;
  /** Value range; runs to the scan end when the value is cut short. */
  valueRange: [number, number];
  complete: boolean;
}

/**
 * The top-level members of the JSON object at `pos` (after whitespace), read as far as the text allows
 * in [pos, to). Used to find `name` and `arguments` inside a Hermes `<tool_call>` object without
 * re-serializing the arguments (they must stay exactly as emitted).
 */
export function jsonMembers(text: string, pos: number, to: number): JsonMember[] | undefined {
  let i = skipWs(text, pos, to);
  if (text[i] !== '{') return undefined;
  const members: JsonMember[] = [];
  i++;
  for (;;) {
    i = skipWs(text, i, to);
    if (i >= to || text[i] !== '"') return members;
    const keyEnd = stringEnd(text, i, to);
    if (keyEnd < 0) return members;
    let key: string | undefined;
    try {
      key = JSON.parse(text.slice(i, keyEnd)) as string;
    } catch {
      key = undefined;
    }
    i = skipWs(text, keyEnd, to);
    if (text[i] !== ':') return members;
    const valueStart = skipWs(text, i + 1, to);
    const valueEnd = jsonValueEnd(text, valueStart, to);
    const complete = valueEnd >= 0;
    members.push({ key, valueRange: complete ? [valueStart, valueEnd] : trimRange(text, valueStart, to), complete });
    if (!complete) return members;
    i = skipWs(text, valueEnd, to);
    if (text[i] !== ',') return members;
    i++;
  }
}

/**
 * Which closing markup a render writes (`RenderOptions.complete`). A complete turn closes everything; a turn cut
 * short closes only what the model provably moved past: the reasoning when content or a call followed it, each call
 * but the last. The last call, its section and the end of turn stay unwritten.
 */
export interface Closing {
  /** The end-of-turn marker, and the section end after the calls. */
  turn: boolean;
  /** The reasoning block's close (`</think>`, Harmony's `<|end|>`). */
  reasoning: boolean;
  /** The close of call `i`. */
  call(i: number): boolean;
}

export function closing(m: AssistantMessage, opts: RenderOptions = {}): Closing {
  const turn = opts.complete ?? true;
  const last = m.toolCalls.length - 1;
  return {
    turn,
    reasoning: turn || present(m.content) !== undefined || m.toolCalls.length > 0,
    call: (i) => turn || i < last,
  };
}

/**
 * Writes `<think>REASONING</think>` when the message has reasoning (without `</think>` when `closed` is false).
 * `newlines`: the Qwen/MiniMax templates put the reasoning on its own lines (`<think>\nR\n</think>\n\n`).
 */
export function renderThink(out: RenderOut, reasoning: string | undefined, newlines: boolean, closed: boolean): void {
  if (!present(reasoning)) return;
  const nl = newlines ? '\n' : '';
  out.put(THINK_OPEN, 'marker').put(nl).put(reasoning!, 'reasoning');
  if (closed) out.put(nl).put(THINK_CLOSE, 'marker').put(nl + nl);
}

/** The start of a `<think>` family's `render`: what it may close, and the text written so far. */
export interface RenderStart {
  out: RenderOut;
  close: Closing;
  /** Whether content was written (calls after it start on a new line in most families). */
  hasContent: boolean;
}

/**
 * Opens a `render` the way every `<think>` family does: the reasoning block (see `renderThink`), then the
 * content as it is. `afterThink` goes between `</think>` and the content (GLM's line break).
 */
export function renderStart(
  m: AssistantMessage,
  opts: RenderOptions | undefined,
  think: { newlines: boolean; afterThink?: string },
): RenderStart {
  const close = closing(m, opts);
  const out = new RenderOut();
  renderThink(out, m.reasoning, think.newlines, close.reasoning);
  const hasContent = present(m.content) !== undefined;
  if (hasContent) {
    if (think.afterThink && present(m.reasoning)) out.put(think.afterThink);
    out.put(m.content!, 'content');
  }
  return { out, close, hasContent };
}

/** One XML-argument call as the family located it (qwen3-coder, glm45, minimax-m2). */
export interface XmlCall {
  start: number;
  nameRange: [number, number];
  /** The markup that should have closed the name (`>`, `">`) when it is missing. */
  nameUnclosed?: string;
  bodyStart: number;
  /** The marker that ends the body (`</function>`, the next call…); absent when the text ends first. */
  stop?: MarkerHit;
  /** Markers expected after the parameters, in order (`</function>`, `</tool_call>`). */
  closers: readonly string[];
  /** Defects already found (the call is then also `malformed-call`). */
  defects: string[];
}

/**
 * Reads the parameters of an XML-argument call, adds the call with canonical JSON arguments, its segments
 * and problems. A body without parameters keeps its raw text as the arguments. Returns where the call ends.
 */
export function xmlCall(out: ParseOut, c: XmlCall, grammar: ParamGrammar, markers: readonly string[]): number {
  const { text } = out;
  const index = out.calls.length;
  const defects = [...c.defects];
  const to = c.stop ? c.stop.start : text.length;
  const params = xmlParams(out, c.bodyStart, to, grammar, markers);
  let restRange = trimRange(text, params.rest, to);
  // A closer cut off by the end of the text is not stray text: the closers below report it when long
  // enough to name.
  if (!c.stop && endsInMarker(text, restRange[0], [...c.closers, ...markers])) restRange = [restRange[0], restRange[0]];
  const rest = text.slice(...restRange);
  let args: string;
  let argRange = params.range;
  if (params.params.length) {
    args = paramsToJson(params.params);
    if (rest) defects.push('text after the parameters');
  } else {
    args = rest || '{}';
    if (rest) {
      argRange = restRange;
      if (c.stop) defects.push('the body is not parameters');
    }
  }
  const bodyEnd = Math.max(params.range?.[1] ?? c.bodyStart, rest ? restRange[1] : 0, c.nameRange[1]);
  let end = bodyEnd;
  let missing: string | undefined;
  let expectedAt = bodyEnd;
  if (c.nameUnclosed) {
    // Cut off inside the head, or the head never closed before other markup.
    if (c.stop) defects.push(`name not closed by ${c.nameUnclosed}`);
    else missing = c.nameUnclosed;
  } else if (params.unclosed && !c.stop) {
    missing = grammar.close;
    expectedAt = params.unclosed.expectedAt;
  } else {
    if (params.unclosed) defects.push(`parameter '${params.params.at(-1)![0]}' lacks ${grammar.close}`);
    const tail = expectClosers(out, bodyEnd, c.closers, markers, index);
    end = tail.end;
    missing = tail.missing;
    expectedAt = tail.expectedAt ?? end;
    defects.push(...tail.skipped.map((s) => `no ${s}`));
  }
  out.addCall(text.slice(...c.nameRange), args);
  out.seg('call', c.start, end, index);
  out.seg('call-name', c.nameRange[0], c.nameRange[1], index);
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (missing) callUnclosed(out, index, c.start, end, missing, expectedAt);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, c.start, end, { callIndex: index });
  return end;
}

/**
 * Writes an XML-argument call's parameters, one per line, as an `arguments` segment (without the line
 * break after the last one). Arguments that are not a JSON object are written raw.
 */
export function renderParams(out: RenderOut, callIndex: number, args: string, param: (key: string, value: string) => string): void {
  const params = jsonToParams(args);
  const body = params ? params.map(([k, v]) => param(k, v)).join('\n') : args;
  out.put(body, 'arguments', callIndex);
  if (body) out.put('\n');
}
