// The Kimi encoder's hand-written pre-tokenizer (src/core/tokens/kimi-split.ts) against the split pattern it stands
// for, piece by piece, on every BMP code point and on random text of every character class; and the encoder's ids
// against tiktoken's on a hard mixed corpus and on every shared recording.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Tiktoken } from 'tiktoken';
import { TiktokenBpe } from '../../../src/core/tokens/bpe';
import { KIMI_PAT_STR, KIMI_PATTERN, loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { kimiPieceEnd } from '../../../src/core/tokens/kimi-split';
import { loadRanks } from '../../../src/core/tokens/rank-cache';
import { prng } from '../../helpers/prng';
import { sharedDir } from '../../helpers/shared';
import { KIMI_SAMPLE_TURNS, MULTILINGUAL_SAMPLES, mixedCorpus } from './corpus';
import { kimiTokenizerDir } from './helpers';

/** The pieces of a global `exec` loop of the pattern. */
function regexPieces(text: string): string[] {
  return [...text.matchAll(new RegExp(KIMI_PATTERN.source, 'gv'))].map((m) => m[0]);
}

function scannerPieces(text: string): string[] {
  const out: string[] = [];
  for (let p = 0; p < text.length; ) {
    const e = kimiPieceEnd(text, p, text.length);
    assert.ok(e > p && e <= text.length, `piece end ${e} after ${p} in ${JSON.stringify(text)}`);
    out.push(text.slice(p, e));
    p = e;
  }
  return out;
}

function samePieces(text: string, what: string): void {
  const want = regexPieces(text);
  const got = scannerPieces(text);
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    assert.deepEqual(got, want, `${what}: ${JSON.stringify(text)}`);
  }
}

/** Characters of every class the pattern tells apart, alone and in the sequences that make it backtrack. */
const PALETTE = [
  'a',
  'z',
  'q',
  'A',
  'Z',
  'Q',
  'ß',
  'é',
  'Ä',
  'İ',
  'ﬁ',
  'Ω',
  'ω', // Ll, Lu
  'ǅ',
  'ǈ',
  'ᾈ', // Lt
  'ʰ',
  'ˆ',
  'ー', // Lm (ー is Lm, Script=Common: letter-ish, not Han)
  'ª',
  'א',
  'ก',
  'ア',
  'あ',
  '가', // Lo, not Han
  '中',
  '国',
  '々',
  '〇',
  '⺀',
  '\u{20000}',
  '\u{2F800}', // Han: Lo, Lm, Nl, So, astral
  '\u0301',
  '\u0903',
  '\u20dd',
  '\u{1D167}', // Mn, Mc, Me, astral Mn
  '1',
  '0',
  '٣',
  '߀',
  'Ⅻ',
  '½',
  '²',
  '𝟘',
  '\u{10107}', // Nd, Nl, No, astral
  '𐐀',
  '𐐨',
  '𝐀',
  '𝐚', // astral Lu, Ll
  '😀',
  '👍🏽',
  '\u200d',
  '\ufe0f',
  '🇯🇵', // emoji, ZWJ, VS16
  ' ',
  '  ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  '\n\n',
  '\v',
  '\f',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u2029',
  '\u0085',
  '\u1680',
  '\u2009',
  '\u202f',
  '\u205f', // White_Space
  '\ufeff',
  '\u200b',
  '\u180e', // not White_Space (JS \s has U+FEFF)
  "'",
  "'s",
  "'S",
  "'ſ",
  "'t",
  "'T",
  "'re",
  "'rE",
  "'ve",
  "'VE",
  "'m",
  "'M",
  "'ll",
  "'lL",
  "'d",
  "'D",
  "'x",
  "'r",
  "'l",
  "'v",
  '.',
  ',',
  '!',
  '<',
  '>',
  '/',
  '-',
  '_',
  '{',
  '}',
  '"',
  '`',
  '$',
  '€',
  '→',
  '│',
  '─',
  '、',
  '。',
  '，',
  '「',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff', // lone surrogates
];

describe('Kimi pre-tokenizer: the same pieces as the split pattern', () => {
  test('every BMP code point (lone surrogates too), among characters of every class', () => {
    const rand = prng(0x6b696d69);
    const pick = () => PALETTE[Math.floor(rand() * PALETTE.length)];
    let text = '';
    let strings = 0;
    for (let c = 0; c <= 0xffff; c++) {
      text += pick() + String.fromCharCode(c) + (rand() < 0.5 ? String.fromCharCode(c) : '');
      if (text.length >= 48 || c === 0xffff) {
        samePieces(text, `BMP around U+${c.toString(16)}`);
        text = '';
        strings++;
      }
    }
    assert.ok(strings > 2000, `${strings} strings`);
  });

  test('astral code points: every 61st, and whole blocks of letters, digits, Han and emoji', () => {
    const rand = prng(0x61737472);
    const points: number[] = [];
    for (let c = 0x10000; c <= 0x10ffff; c += 61) points.push(c);
    for (const [from, to] of [
      [0x10400, 0x1044f], // Deseret: Lu, Ll
      [0x1d400, 0x1d7ff], // mathematical alphanumerics: L, Nd
      [0x1f300, 0x1faff], // emoji
      [0x20000, 0x200ff], // CJK extension B
      [0xe0000, 0xe007f], // tags
    ]) {
      for (let c = from; c <= to; c++) points.push(c);
    }
    let text = '';
    for (let i = 0; i < points.length; i++) {
      text += PALETTE[Math.floor(rand() * PALETTE.length)] + String.fromCodePoint(points[i]);
      if (text.length >= 48 || i === points.length - 1) {
        samePieces(text, 'astral');
        text = '';
      }
    }
  });

  test('random text of every class: 30,000 strings', () => {
    const seed = 20_251_207;
    const rand = prng(seed);
    for (let i = 0; i < 30_000; i++) {
      let text = '';
      const n = 1 + Math.floor(rand() * 14);
      for (let k = 0; k < n; k++) text += PALETTE[Math.floor(rand() * PALETTE.length)];
      samePieces(text, `seed ${seed}, string ${i}`);
    }
  });

  test('the end of a range is the end of the text: a lookahead does not see past it', () => {
    const text = 'ab   <|im_end|>  \n  x';
    // `\s+(?!\S)` before a special token takes every space when the text ends there, and all but one otherwise.
    assert.equal(kimiPieceEnd(text, 2, 5), 5);
    assert.equal(kimiPieceEnd(text, 2, text.length), 4);
    assert.deepEqual(scannerPieces(text.slice(0, 5)), regexPieces(text.slice(0, 5)));
  });
});

const found = kimiTokenizerDir();
const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-kimi-split-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Text that is hard on a tokenizer: what the mixed corpus lacks, in pieces tiktoken sees whole. */
function hardCorpus(specials: Iterable<string>): string {
  const rand = prng(0x68617264);
  const parts: string[] = [mixedCorpus(256 * 1024)];
  // Every special token, alone, glued to text and to each other.
  const names = [...specials];
  parts.push(names.join(''), names.map((n, i) => `x${n}${i % 2 ? ' ' : '\n'}`).join(''));
  // Long whitespace runs, alone, before text, before a special token, mixed with line breaks.
  for (const n of [1, 2, 3, 17, 64, 65, 129, 300, 1000, 3000]) {
    parts.push(
      ' '.repeat(n),
      `${' '.repeat(n)}x`,
      `${'\t'.repeat(n)}<|im_end|>`,
      `${' \n'.repeat(n)}y`,
      `${'\u3000'.repeat(n)}z`,
      `\r\n${' '.repeat(n)}\r\n`,
    );
  }
  // Long pieces with no split (the heap merge): one letter, random letters, box-drawing rules, CJK runs, digits.
  for (const n of [100, 129, 257, 1000, 2500]) {
    parts.push('a'.repeat(n), Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join(''));
    parts.push('─'.repeat(n) + '\n', '='.repeat(n), '中文'.repeat(n / 2), '9'.repeat(n));
  }
  parts.push(
    '┌────────────────────────┬─────────┬────────────────────┐\n│ a │ b │\n└────────────────────────┴─────────┴────────────────────┘',
  );
  // Numbers.
  parts.push('0 00 000 0000 1234567890 3.14159 -1e-10 0xdeadBEEF 12,345,678 ١٢٣٤٥ ½¾ Ⅻ 𝟘𝟙𝟚𝟛 ①②③');
  // Emoji sequences, flags, keycaps, skin tones, ZWJ families.
  parts.push('👋🏽 👨‍👩‍👧‍👦 🇯🇵🇫🇷 1️⃣ #️⃣ 🏳️‍🌈 ❤️‍🔥 🧑🏿‍💻 😀😃😄😁');
  // Invalid UTF-16: lone surrogates of both kinds, reversed pairs, at the ends and between every class.
  parts.push(
    '\ud800',
    'a\udc00b',
    '\udc00\ud800',
    '中\ud83d',
    '\ude00文',
    ' \ud83d ',
    "x\ud800's",
    '1\udfff2',
    '\ud83d\ud83d\ude00',
    '\ud800\n\udbff',
  );
  // Code.
  parts.push(readFileSync(join(__dirname, '..', '..', '..', 'src', 'core', 'tokens', 'kimi-split.ts'), 'utf8'));
  // Random mixtures of the palette.
  for (let i = 0; i < 2000; i++) {
    let s = '';
    for (let k = 0, n = 1 + Math.floor(rand() * 24); k < n; k++) s += PALETTE[Math.floor(rand() * PALETTE.length)];
    parts.push(s);
  }
  return parts.join('\n');
}

describe('Kimi encoder: ids identical to tiktoken', { skip: 'skip' in found ? found.skip : false }, () => {
  const dir = 'dir' in found ? found.dir : '';
  const kimi = loadKimiTokenizer({ dir, cacheDir: join(tmp, 'cache') });
  const oracle = new Tiktoken(readFileSync(join(dir, 'tiktoken.model'), 'utf8'), Object.fromEntries(kimi.specials), KIMI_PAT_STR);
  after(() => oracle.free());

  const sameIds = (ours: number[], theirs: ArrayLike<number>, what: string) => {
    const t = Array.from(theirs);
    const at = ours.findIndex((id, i) => id !== t[i]);
    assert.equal(
      at,
      -1,
      `${what}: first difference at token ${at} (${ours.slice(Math.max(0, at - 3), at + 3)} vs ${t.slice(Math.max(0, at - 3), at + 3)})`,
    );
    assert.equal(ours.length, t.length, `${what}: token count`);
  };

  test('a hard mixed corpus: code, CJK, emoji, long whitespace runs, numbers, every special token, lone surrogates', () => {
    const corpus = hardCorpus(kimi.specials.keys());
    sameIds(kimi.encode(corpus), oracle.encode(corpus, 'all'), 'encode');
    sameIds(kimi.encodeOrdinary(corpus), oracle.encode_ordinary(corpus), 'encodeOrdinary');
    // Piece by piece on a cold tokenizer: no help from a warm cache.
    const cold = loadKimiTokenizer({ dir, cacheDir: join(tmp, 'cache') });
    for (const part of corpus.split('\n').slice(-3000))
      sameIds(cold.encode(part), oracle.encode(part, 'all'), JSON.stringify(part.slice(0, 80)));
  });

  test('the hand-written split and the regex give the same ids', () => {
    const ranks = loadRanks(join(dir, 'tiktoken.model'), join(tmp, 'cache'));
    const byRegex = new TiktokenBpe({ name: 'regex split', ranks, pattern: KIMI_PATTERN, specials: kimi.specials });
    const corpus = hardCorpus(kimi.specials.keys());
    sameIds(kimi.encode(corpus), byRegex.encode(corpus), 'encode');
    for (const s of [...KIMI_SAMPLE_TURNS, ...MULTILINGUAL_SAMPLES]) sameIds(kimi.encodeOrdinary(s), byRegex.encodeOrdinary(s), s);
  });

  test('every shared recording, each file whole and every string in it', (t) => {
    const root = sharedDir();
    const recordings = root ? join(root, 'recordings') : undefined;
    if (!recordings || !statSync(recordings, { throwIfNoEntry: false })?.isDirectory())
      return t.skip('shared recordings not found (../shared/recordings)');
    let files = 0;
    for (const name of readdirSync(recordings)) {
      const folder = join(recordings, name);
      if (!statSync(folder).isDirectory()) continue;
      for (const f of readdirSync(folder)) {
        const text = readFileSync(join(folder, f), 'utf8');
        files++;
        sameIds(kimi.encode(text), oracle.encode(text, 'all'), `${name}/${f}`);
        const strings: string[] = [];
        if (f.endsWith('.json')) collectStrings(JSON.parse(text), strings);
        if (f.endsWith('.sse')) for (const m of text.matchAll(/^data: (\{.*\})$/gm)) collectStrings(JSON.parse(m[1]), strings);
        for (const s of strings) sameIds(kimi.encode(s), oracle.encode(s, 'all'), `${name}/${f}: ${JSON.stringify(s.slice(0, 60))}`);
      }
    }
    assert.ok(files >= 7, `${files} recording files`);
  });
});

function collectStrings(v: unknown, out: string[]): void {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) collectStrings(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) collectStrings(x, out);
}
