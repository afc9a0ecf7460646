/**
 * Moonshot's split pattern (`KIMI_PATTERN` in ./kimi.ts) as a hand-written scanner: the same pieces as a global
 * `exec` loop of the regex (which the tests check on random text of every character class), at a fraction of the
 * cost. Each code point's Unicode properties are looked up once per process in a table (filled on first sight of
 * the code point, with the same property tests the regex uses), so scanning is table lookups and compares.
 *
 * The pattern's alternatives, in the order the regex tries them at a piece's start:
 *   1. `\p{Han}+`
 *   2. `[^\r\n\p{L}\p{N}]? UPPERISH* LOWERISH+ CONTRACTION?`
 *   3. `[^\r\n\p{L}\p{N}]? UPPERISH+ LOWERISH* CONTRACTION?`
 *   4. `\p{N}{1,3}`
 *   5. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
 *   6. `\s*[\r\n]+`
 *   7. `\s+(?!\S)`
 *   8. `\s+`
 * where UPPERISH is `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` minus Han, LOWERISH `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` minus Han,
 * and `\s` is Unicode White_Space. Every code point starts a non-empty piece, so the pieces tile the text.
 */

/** Class bits of a code point. */
const HAN = 1;
const LETTER = 2;
const NUMBER = 4;
const UPPERISH = 8;
const LOWERISH = 16;
const SPACE = 32;
const CRLF = 64;
const KNOWN = 128;
/** Set in `classAt`'s result when the code point is a surrogate pair (two code units). */
const PAIR = 256;

const RE_HAN = /\p{Script=Han}/u;
const RE_LETTER = /\p{L}/u;
const RE_NUMBER = /\p{N}/u;
const RE_UPPERISH = /[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]/u;
const RE_LOWERISH = /[\p{Ll}\p{Lm}\p{Lo}\p{M}]/u;
/** Unicode White_Space (what `\s` means in tiktoken's regex engine; JS `\s` differs: ./kimi.ts). */
const WHITE_SPACE = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009,
  0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
];

/** Classes of the BMP code points seen so far (0: not yet classified). */
const BMP = new Uint8Array(0x10000);
/** Classes of the astral code points seen so far. */
const ASTRAL = new Map<number, number>();

function classify(cp: number): number {
  const s = String.fromCodePoint(cp);
  let k = KNOWN;
  if (RE_HAN.test(s)) k |= HAN;
  if (RE_LETTER.test(s)) k |= LETTER;
  if (RE_NUMBER.test(s)) k |= NUMBER;
  if (!(k & HAN)) {
    if (RE_UPPERISH.test(s)) k |= UPPERISH;
    if (RE_LOWERISH.test(s)) k |= LOWERISH;
  }
  if (WHITE_SPACE.includes(cp)) k |= SPACE;
  if (cp === 0x0a || cp === 0x0d) k |= CRLF;
  return k;
}

for (let c = 0; c < 0x80; c++) BMP[c] = classify(c);

function bmpClass(c: number): number {
  const k = BMP[c];
  return k !== 0 ? k : (BMP[c] = classify(c));
}

/** The class of the code point at `i` (a lone surrogate is a code point of its own), with PAIR for two code units. */
function classAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c < 0x80 ? BMP[c] : classOfNonAscii(text, i, c);
}

function classOfNonAscii(text: string, i: number, c: number): number {
  if (c < 0xd800 || c > 0xdbff) return bmpClass(c);
  const d = text.charCodeAt(i + 1);
  if (!(d >= 0xdc00 && d <= 0xdfff)) return bmpClass(c);
  const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  let k = ASTRAL.get(cp);
  if (k === undefined) ASTRAL.set(cp, (k = classify(cp)));
  return k | PAIR;
}

const width = (k: number) => 1 + (k >> 8);

/**
 * The end of the piece that starts at `p` in `text[..end)` (`end` counts as the end of the text: a lookahead
 * does not see past it). `p < end`.
 */
export function kimiPieceEnd(text: string, p: number, end: number): number {
  const k = classAt(text, p);
  const w = width(k);
  if (k & HAN) {
    let i = p + w;
    for (let c; i < end && (c = classAt(text, i)) & HAN; ) i += width(c);
    return i;
  }
  if (k & LETTER) {
    // A letter is no prefix: alternative 2 or 3 from here (one of them matches: a non-Han letter is upperish or lowerish).
    let e = lettersLowerEnd(text, p, end);
    if (e < 0) e = lettersUpperEnd(text, p, end);
    return e < end && text.charCodeAt(e) === 0x27 ? contractionEnd(text, e, end) : e;
  }
  if (k & NUMBER) {
    let i = p + w;
    for (let n = 1, c; n < 3 && i < end && (c = classAt(text, i)) & NUMBER; n++) i += width(c);
    return i;
  }
  if (!(k & CRLF)) {
    // `[^\r\n\p{L}\p{N}]` may lead letters; a mark is such a character and a letter-ish one at once, so it is tried
    // both as the prefix and as the first letter.
    const markish = k & (UPPERISH | LOWERISH);
    const q = p + w;
    let e = q < end ? lettersLowerEnd(text, q, end) : -1;
    if (e < 0 && markish) e = lettersLowerEnd(text, p, end);
    if (e < 0 && q < end) e = lettersUpperEnd(text, q, end);
    if (e < 0 && markish) e = lettersUpperEnd(text, p, end);
    if (e >= 0) return e < end && text.charCodeAt(e) === 0x27 ? contractionEnd(text, e, end) : e;
    if (!(k & SPACE)) return punctuationEnd(text, p, end);
    if (text.charCodeAt(p) === 0x20 && q < end && !(classAt(text, q) & (SPACE | LETTER | NUMBER))) return punctuationEnd(text, q, end);
  }
  // Whitespace (every White_Space character is one code unit).
  let u = p;
  let lastNewline = -1;
  for (; u < end; u++) {
    const c = classAt(text, u);
    if (!(c & SPACE)) break;
    if (c & CRLF) lastNewline = u;
  }
  if (lastNewline >= 0) return lastNewline + 1; // `\s*[\r\n]+`: through the last line break of the run
  if (u === end || u - p === 1) return u; // `\s+(?!\S)` at the end, or `\s+`
  return u - 1; // `\s+(?!\S)`: the run but its last character, which goes with what follows
}

/** `UPPERISH* LOWERISH+` from `q` (with the regex's backtracking), or -1. */
function lettersLowerEnd(text: string, q: number, end: number): number {
  let i = q;
  let lastLower = -1;
  let c = 0;
  for (; i < end; i += 1 + (c >> 8)) {
    const u = text.charCodeAt(i);
    c = u < 0x80 ? BMP[u] : classOfNonAscii(text, i, u);
    if (!(c & UPPERISH)) break;
    if (c & LOWERISH) lastLower = i + 1 + (c >> 8);
  }
  if (i < end && c & LOWERISH) {
    // `UPPERISH*` stopped at a lowerish character: `LOWERISH+` takes the run from there.
    for (i += 1 + (c >> 8); i < end; i += 1 + (c >> 8)) {
      const u = text.charCodeAt(i);
      c = u < 0x80 ? BMP[u] : classOfNonAscii(text, i, u);
      if (!(c & LOWERISH)) break;
    }
    return i;
  }
  // Backtracking: `UPPERISH*` gives back its characters until one is lowerish; `LOWERISH+` is then that one alone.
  return lastLower;
}

/** `UPPERISH+ LOWERISH*` from `q`, or -1. */
function lettersUpperEnd(text: string, q: number, end: number): number {
  let i = q;
  for (let c; i < end && (c = classAt(text, i)) & UPPERISH; ) i += width(c);
  if (i === q) return -1;
  for (let c; i < end && (c = classAt(text, i)) & LOWERISH; ) i += width(c);
  return i;
}

/** `[^\s\p{L}\p{N}]+[\r\n]*` from `q` (whose character is of the first class). */
function punctuationEnd(text: string, q: number, end: number): number {
  let i = q;
  for (let c; i < end && !((c = classAt(text, i)) & (SPACE | LETTER | NUMBER)); ) i += width(c);
  for (let c; i < end && ((c = text.charCodeAt(i)) === 0x0a || c === 0x0d); ) i++;
  return i;
}

/** `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `e` (an apostrophe): the end past it. Case folding maps `s` to U+017F (ſ) too. */
function contractionEnd(text: string, e: number, end: number): number {
  if (e + 1 >= end) return e;
  const a = text.charCodeAt(e + 1) | 0x20;
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return e + 2; // s t m d
  if (text.charCodeAt(e + 1) === 0x17f) return e + 2;
  if (e + 2 >= end) return e;
  const b = text.charCodeAt(e + 2) | 0x20;
  if ((a === 0x72 || a === 0x76) && b === 0x65) return e + 3; // re ve
  if (a === 0x6c && b === 0x6c) return e + 3; // ll
  return e;
}
