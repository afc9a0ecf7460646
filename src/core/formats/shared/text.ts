/**
 * Markers and text primitives the family grammars are written in: complete and cut-short marker search,
 * whitespace and trimming, balanced-JSON scanning, marker-score detection and model-id keys. Pure functions
 * over a string; no parse state.
 */

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
export function stringEnd(text: string, pos: number, to: number): number {
  for (let i = pos + 1; i < to; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return -1;
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
