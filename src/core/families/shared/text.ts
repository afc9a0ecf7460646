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
/** What a marker cut short mid-text may lack: its closing punctuation only. */
const CLOSING = /^[|｜]?>$/;

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
    if (n < 3 || text[end] === '>' || WORD.test(text[end]) || !CLOSING.test(marker.slice(n))) continue;
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

/** Letters, digits and spaces are everywhere in text: a scan looks for longer needles that start with them. */
const COMMON = /[\p{L}\p{N}\s]/u;

/** Shorter texts (and shorter ranges of a text) are searched with `indexOf` alone, on a slice of the range. */
const MIN_INDEXED = 1 << 16;
/** Places of one character kept at most; past that the character is common in this text and `indexOf` serves. */
const MAX_PLACES = 1 << 16;

/**
 * The searches made in one long text, shared: `text.indexOf(s, from)` for the many markers a parse, the marker scans
 * and family detection look for, at one native scan per distinct first character rather than one per marker. The
 * places of a rare first character (`<`, `[`, `｜`) are found once, as far as asked, and each marker is tried only
 * there. Markers that start with a letter, digit or space, and short texts, go to `indexOf` itself; `first` keeps
 * each string's first occurrence.
 */
export class TextIndex {
  /** Per first character: its places in [base, done), in order. */
  private readonly places = new Map<string, { at: number[]; base: number; done: number } | null>();
  private readonly firsts = new Map<string, number>();

  constructor(readonly text: string) {}

  private readonly regexes = new Map<string, { from: number; at: number }>();

  /**
   * Where the global regex `re` next matches at or after `from` (-1: nowhere), the last answer per pattern reused
   * while it still holds: scans of the same text for the same needles (the detection's, the marker scan's) share it.
   */
  regexIndexOf(re: RegExp, from: number): number {
    const key = `${re.flags}/${re.source}`;
    const last = this.regexes.get(key);
    if (last && last.from <= from && (last.at < 0 || last.at >= from)) return last.at;
    re.lastIndex = from;
    const at = re.exec(this.text)?.index ?? -1;
    if (this.regexes.size < 256) this.regexes.set(key, { from, at });
    return at;
  }

  /** `text.indexOf(s)`, found once per string. */
  first(s: string): number {
    let at = this.firsts.get(s);
    if (at === undefined) {
      at = this.indexOf(s, 0);
      if (this.firsts.size < 4096) this.firsts.set(s, at);
    }
    return at;
  }

  /** `text.indexOf(s, from)`. */
  indexOf(s: string, from: number): number {
    const text = this.text;
    if (s === '' || text.length < MIN_INDEXED || COMMON.test(s[0])) return text.indexOf(s, from);
    const c = s[0];
    let p = this.places.get(c);
    if (p === null) return text.indexOf(s, from);
    from = Math.max(0, from);
    // A search that starts past what is indexed (a parse reading one part of a long text, a fresh parse of a later
    // part) indexes from there: the places before it are never scanned for. One before the indexed range is a plain
    // search.
    if (p === undefined || from > p.done) this.places.set(c, (p = { at: [], base: from, done: from }));
    else if (from < p.base) return text.indexOf(s, from);
    // Every place of `c` in [base, done) is in `at`, in order.
    let lo = 0;
    let hi = p.at.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (p.at[mid] < from) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; ; k++) {
      if (k < p.at.length) {
        if (text.startsWith(s, p.at[k])) return p.at[k];
        continue;
      }
      if (p.done > text.length) return -1;
      const i = text.indexOf(c, p.done);
      if (i < 0) {
        p.done = text.length + 1;
        return -1;
      }
      p.at.push(i);
      p.done = i + 1;
      if (p.at.length > MAX_PLACES) {
        this.places.set(c, null);
        return text.indexOf(s, from);
      }
      if (i < from) k = p.at.length - 1;
      else k--;
    }
  }
}

let shared: TextIndex | undefined;

/**
 * Runs `fn` with one `TextIndex` of `text` that every search of that text made meanwhile shares (`textIndex`): the
 * analysis of a long output detects its family, parses it and scans it for markers with one index. Nothing is kept
 * after `fn` returns.
 */
export function withTextIndex<T>(text: string | undefined, fn: () => T): T {
  if (text === undefined || text.length < MIN_INDEXED || shared?.text === text) return fn();
  const outer = shared;
  shared = new TextIndex(text);
  try {
    return fn();
  } finally {
    shared = outer;
  }
}

/** The index of `text` that `withTextIndex` shares, or a new one of its own. */
export function textIndex(text: string): TextIndex {
  return shared !== undefined && shared.text.length === text.length && shared.text === text ? shared : new TextIndex(text);
}

/**
 * The next place in `text[from, to)` where one of `needles` starts, for scans that move forward: each needle is found
 * natively (`indexOf`, many times faster on a long text than a regex that walks it a character at a time) and its
 * last hit is reused while it lies ahead, so a scan costs one pass per needle. A long range is searched in the whole
 * text through its `TextIndex` (shared with the parse); a short one on a slice of the range, never past `to`.
 */
export class NeedleScan {
  private readonly at: number[];
  private readonly from: number[];
  /** The searched text: `text` itself, or the slice of the range starting at `base`. */
  private readonly haystack: string;
  private readonly base: number;
  private readonly index?: TextIndex;

  /** `needles`: strings, or global regexes (their `lastIndex` is set before each search). */
  constructor(
    text: string,
    private readonly needles: readonly (string | RegExp)[],
    from = 0,
    private readonly to = text.length,
  ) {
    this.at = needles.map(() => -1);
    this.from = needles.map(() => Infinity);
    if (to - from >= MIN_INDEXED || (from === 0 && to === text.length)) {
      this.haystack = text;
      this.base = 0;
      if (text.length >= MIN_INDEXED) this.index = textIndex(text);
    } else {
      this.haystack = text.slice(from, to);
      this.base = from;
    }
  }

  /** The first position at or after `from` (and before the range's end) where a needle starts; -1 when none does. */
  next(from: number): number {
    const local = Math.max(0, from - this.base);
    let best = -1;
    for (let k = 0; k < this.needles.length; k++) {
      let at = this.at[k];
      if (!(this.from[k] <= local && (at < 0 || at >= local))) {
        const needle = this.needles[k];
        if (typeof needle === 'string') at = this.index ? this.index.indexOf(needle, local) : this.haystack.indexOf(needle, local);
        else if (this.index) at = this.index.regexIndexOf(needle, local);
        else {
          needle.lastIndex = local;
          at = needle.exec(this.haystack)?.index ?? -1;
        }
        this.at[k] = at;
        this.from[k] = local;
      }
      if (at >= 0 && (best < 0 || at < best)) best = at;
    }
    return best < 0 || best + this.base >= this.to ? -1 : best + this.base;
  }
}

/**
 * Needles that find every place where one of `strings` may start: a rare first character (`<`, `[`, `｜`) on its own
 * (one native scan serves all the strings that start with it), and one regex for the strings that start with a common
 * one, as far as their first `length` characters (a literal regex skips through a text faster than `indexOf` does).
 */
export function needlesFor(strings: readonly string[], length = Infinity): (string | RegExp)[] {
  const rare = new Set<string>();
  const common = new Set<string>();
  for (const s of strings) {
    if (s === '') continue;
    if (COMMON.test(s[0])) common.add(s.slice(0, length));
    else rare.add(s[0]);
  }
  const escapeRegex = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...rare, ...(common.size ? [new RegExp([...common].map(escapeRegex).join('|'), 'g')] : [])];
}

/** Per marker list, the needles of the places where one of its markers may start cut short (see `findTruncated`). */
const candidateScans = new Map<string, { needles: (string | RegExp)[]; firsts: Set<string>; seconds: Set<string> }>();

function candidates(markers: readonly string[]): { needles: (string | RegExp)[]; firsts: Set<string>; seconds: Set<string> } {
  const key = markers.join('\u0000');
  let c = candidateScans.get(key);
  if (!c) {
    const live = markers.filter((m) => m !== '');
    // A one-character marker is never reported cut (`truncatedAt`), so the two first characters of the longer ones
    // are enough to look for.
    c = {
      needles: needlesFor(
        live.filter((m) => m.length > 1),
        2,
      ),
      firsts: new Set(live.map((m) => m[0])),
      seconds: new Set(live.filter((m) => m.length > 1).map((m) => m[1])),
    };
    if (candidateScans.size < 256) candidateScans.set(key, c);
  }
  return c;
}

/**
 * Every truncated marker in [from, to), in order (at most `max`). Only places where a marker's first character is
 * followed by one of the markers' second characters (or by the end of the range) can hold one: a cut marker keeps
 * at least two characters unless the text ends after the first (see `truncatedAt`). Native scans (`NeedleScan`) find
 * those places, so a megabyte of prose, or of HTML full of `<div` and `a < b`, is not walked a character at a time,
 * and a short range is never searched past `to`.
 */
export function findTruncated(text: string, markers: readonly string[], from: number, to: number, max = Infinity): MarkerHit[] {
  const hits: MarkerHit[] = [];
  if (from >= to) return hits;
  const { needles, firsts, seconds } = candidates(markers);
  const scan = new NeedleScan(text, needles, from, to);
  const last = to - 1;
  let pos = from;
  for (;;) {
    const i = scan.next(pos);
    if (i < 0 || i >= last) break;
    if (firsts.has(text[i]) && seconds.has(text[i + 1])) {
      const hit = truncatedAt(text, i, markers);
      if (hit && hit.end <= to) {
        if (hits.push(hit) >= max) return hits;
        pos = hit.end;
        continue;
      }
    }
    pos = i + 1;
  }
  // The last character of the range, followed by the range's end, is a place too.
  if (last >= pos && firsts.has(text[last])) {
    const hit = truncatedAt(text, last, markers);
    if (hit && hit.end <= to) hits.push(hit);
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

/**
 * Sum of the weights of the signatures found in `text` (`detectText`). A regex whose matches all hold some literal
 * text is only run when the text holds that literal, and from its first occurrence when every match starts with it:
 * a 20 MB output without `DSML` is not walked by each DSML pattern. A signature that weighs nothing is not looked for.
 * Within `withTextIndex`, every family's signatures share one index of the text.
 */
export function scoreText(text: string, signatures: readonly (readonly [string | RegExp, number])[]): number {
  const index = shared !== undefined && shared.text.length === text.length && shared.text === text ? shared : undefined;
  const first = (s: string) => (index ? index.first(s) : text.indexOf(s));
  let score = 0;
  for (const [sig, weight] of signatures) {
    if (typeof sig === 'string') {
      if (weight !== 0 && first(sig) >= 0) score += weight;
      continue;
    }
    // A global or sticky regex keeps state between tests: it is always run, as before.
    if (sig.global || sig.sticky) {
      if (sig.test(text)) score += weight;
      continue;
    }
    if (weight === 0) continue;
    const { literal, prefixes } = literalInfo(sig);
    if (literal && first(literal) < 0) continue;
    if (prefixes.length) {
      // Every match starts with one of the prefixes: none can start before the first of them.
      let at = -1;
      for (const p of prefixes) {
        const i = first(p);
        if (i >= 0 && (at < 0 || i < at)) at = i;
      }
      if (at < 0) continue;
      const from = fromClone(sig);
      from.lastIndex = at;
      if (from.exec(text)) score += weight;
    } else if (sig.test(text)) score += weight;
  }
  return score;
}

const literals = new WeakMap<RegExp, LiteralInfo>();
const clones = new WeakMap<RegExp, RegExp>();

/** What every match of a regex holds: `literal` somewhere ('' when none is sure), and it starts with one of `prefixes`. */
interface LiteralInfo {
  literal: string;
  /** Empty when a match may start with anything. */
  prefixes: string[];
}

/** `re` made global, to be run from a position. */
function fromClone(re: RegExp): RegExp {
  let g = clones.get(re);
  if (!g) clones.set(re, (g = new RegExp(re.source, `${re.flags}g`)));
  return g;
}

/**
 * The longest run of literal characters every match of `re` holds ('' when none is sure): read from its source at the
 * top level (groups, classes, escapes other than `\.`-style ones and anything quantified end a run; an alternation
 * there means none). Anchored and case-insensitive patterns get none.
 */
export function requiredLiteral(re: RegExp): string {
  return literalInfo(re).literal;
}

function literalInfo(re: RegExp): LiteralInfo {
  let info = literals.get(re);
  if (!info) {
    const none = { literal: '', prefixes: [] };
    if (re.ignoreCase || re.flags.includes('v') || (re.source.startsWith('^') && !re.multiline)) info = none;
    else {
      const branches = topLevelBranches(re.source).map((b) => literalOf(b, re.unicode));
      info =
        branches.length === 1
          ? branches[0]
          : {
              literal: '',
              prefixes: branches.some((b) => b.prefixes.length === 0) ? [] : [...new Set(branches.flatMap((b) => b.prefixes))],
            };
    }
    literals.set(re, info);
  }
  return info;
}

/** The alternatives of a pattern at its top level (one when it has no `|` there). */
function topLevelBranches(src: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '(') i = groupEnd(src, i) - 1;
    else if (c === '[') i = classEnd(src, i) - 1;
    else if (c === '|') {
      out.push(src.slice(from, i));
      from = i + 1;
    }
  }
  out.push(src.slice(from));
  return out;
}

/**
 * The character a `\xHH`, `\uHHHH` or `\u{H…}` escape stands for (the bundled CLI spells non-ASCII characters so);
 * undefined for any other escape, and for a surrogate half (part of a character, not one).
 */
function escapedChar(sequence: string): string | undefined {
  const m = /^\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]+)\})$/.exec(sequence);
  if (!m) return undefined;
  const code = parseInt(m[1] ?? m[2] ?? m[3], 16);
  if ((code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return undefined;
  return String.fromCodePoint(code);
}

/** The plain characters of a class such as `[|｜]` (no range, negation or other escape), else undefined. */
function classChars(cls: string): string[] | undefined {
  const body = cls.slice(1, -1);
  if (!body || body.startsWith('^')) return undefined;
  const chars: string[] = [];
  for (let i = 0; i < body.length; i++) {
    let c: string | undefined = body[i];
    if (c === '\\') {
      const m = /^\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[^A-Za-z0-9])/.exec(body.slice(i));
      if (!m) return undefined;
      c = m[0].length === 2 ? m[0][1] : escapedChar(m[0]);
      if (c === undefined) return undefined;
      i += m[0].length - 1;
    } else if (c === '-' || c === '[') return undefined;
    const code = c.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdfff) return undefined;
    chars.push(c);
  }
  return chars;
}

function literalOf(src: string, unicode: boolean): LiteralInfo {
  const none = { literal: '', prefixes: [] };
  let best = '';
  let prefixes: string[] = [];
  let run = '';
  let runStart = -1;
  const endRun = () => {
    if (runStart === 0) prefixes = [run];
    if (run.length > best.length) best = run;
    run = '';
    runStart = -1;
  };
  for (let i = 0; i < src.length; ) {
    const c = src[i];
    let atom: string | undefined;
    let next = i + 1;
    if (c === '\\') {
      const d = src[i + 1];
      if (d === undefined) return none;
      if (/[A-Za-z0-9]/.test(d)) {
        const skip = escapeLength(src, i, unicode);
        if (skip === 0) return none;
        next = i + skip;
        atom = escapedChar(src.slice(i, next));
      } else {
        atom = d;
        next = i + 2;
      }
    } else if (c === '(') next = groupEnd(src, i);
    else if (c === '[') {
      next = classEnd(src, i);
      // A pattern that opens with a class of plain characters starts with one of them.
      const chars = i === 0 ? classChars(src.slice(0, next)) : undefined;
      const q = src[next];
      if (chars && q !== '*' && q !== '?' && !(q === '{' && /^\{0/.test(src.slice(next)))) prefixes = chars;
    } else if (c === '|' || c === ')' || c === ']') return none;
    else if (!'.^${}*+?'.includes(c)) {
      const low = src.charCodeAt(i + 1);
      atom = c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? src.slice(i, i + 2) : c;
      next = i + atom.length;
    }
    const q = src[next];
    if (q === '*' || q === '+' || q === '?' || (q === '{' && /^\{\d+(?:,\d*)?\}/.test(src.slice(next, next + 24)))) {
      // Repeated or optional: the run ends before it.
      endRun();
      next = q === '{' ? src.indexOf('}', next) + 1 : next + 1;
      if (src[next] === '?') next++;
      i = next;
      continue;
    }
    if (atom === undefined) endRun();
    else {
      if (run === '') runStart = i;
      run += atom;
    }
    i = next;
  }
  endRun();
  return { literal: best, prefixes };
}

/** Length of the letter or digit escape at `i` (`\d`, `\x41`, `\u0041`…); 0 for one this reader does not follow. */
function escapeLength(src: string, i: number, unicode: boolean): number {
  const d = src[i + 1];
  if (d === 'x') return /^[0-9a-fA-F]{2}/.test(src.slice(i + 2, i + 4)) ? 4 : 0;
  if (d === 'u') {
    if (unicode && src[i + 2] === '{') return src.indexOf('}', i) < 0 ? 0 : src.indexOf('}', i) - i + 1;
    return /^[0-9a-fA-F]{4}/.test(src.slice(i + 2, i + 6)) ? 6 : 0;
  }
  if (d === 'p' || d === 'P') return unicode && src[i + 2] === '{' && src.indexOf('}', i) > 0 ? src.indexOf('}', i) - i + 1 : 0;
  if (d === 'c' || d === 'k' || /[0-9]/.test(d)) return 0;
  return 2;
}

function classEnd(src: string, i: number): number {
  for (let k = i + 1; k < src.length; k++) {
    if (src[k] === '\\') k++;
    else if (src[k] === ']') return k + 1;
  }
  return src.length;
}

function groupEnd(src: string, i: number): number {
  let depth = 0;
  for (let k = i; k < src.length; k++) {
    const c = src[k];
    if (c === '\\') k++;
    else if (c === '[') k = classEnd(src, k) - 1;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return k + 1;
  }
  return src.length;
}

/** Model-id test: lower-cased, provider prefix and `:free`/`:exacto`-style suffixes removed. */
export function modelKey(modelId: string): string {
  const lower = modelId
    .trim()
    .toLowerCase()
    .replace(/:[a-z0-9-]+$/, '');
  return lower.slice(lower.lastIndexOf('/') + 1);
}

/**
 * Whitespace from `pos`, including the literal `\n` escapes (backslash, n) some outputs carry between the markers of
 * a key/value body (GLM, LongCat; mlx-lm reads them as `(?:\\n|\s)*`).
 */
export function skipLiteralNewlines(text: string, pos: number, to: number): number {
  for (;;) {
    const at = skipWs(text, pos, to);
    if (!text.startsWith('\\n', at)) return at;
    pos = at + 2;
  }
}

/** The string a JSON member holds (a call's `"name"`); empty when there is no member or its value is not a JSON string. */
export function jsonStringMember(text: string, member: JsonMember | undefined): string {
  if (!member) return '';
  try {
    const v: unknown = JSON.parse(text.slice(...member.valueRange));
    return typeof v === 'string' ? v : '';
  } catch {
    // Not a JSON string: empty, and the call's checks say so.
    return '';
  }
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
