import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Tiktoken } from 'tiktoken';
import { TiktokenBpe } from '../../../src/core/tokens/bpe';
import { KIMI_PAT_STR, KIMI_PATTERN, loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { PieceCache } from '../../../src/core/tokens/piece-cache';
import { loadRanks } from '../../../src/core/tokens/rank-cache';
import { MULTILINGUAL_SAMPLES, mixedCorpus } from './corpus';
import { kimiTokenizerDir } from './helpers';

describe('piece cache', () => {
  test('holds what was set, by text range, through growth, and empties itself at its limit', () => {
    const text = mixedCorpus(64 * 1024);
    const cache = new PieceCache(64, 1_000, 16);
    const want = new Map<string, number[]>();
    let cleared = 0;
    for (let i = 0, k = 0; i + 8 < text.length && k < 5_000; i += 7, k++) {
      const end = i + 1 + (k % 8);
      const piece = text.slice(i, end);
      if (want.has(piece)) continue;
      const ids = Array.from({ length: 1 + (k % 5) }, (_, j) => k * 10 + j);
      if (cache.entries === 1_000) {
        want.clear();
        cleared++;
      }
      cache.set(text, i, end, ids.length === 1 ? ids[0] : ids);
      want.set(piece, ids);
      const out: number[] = [7];
      assert.equal(cache.pushIds(text, i, end, out), true);
      assert.deepEqual(out, [7, ...ids]);
    }
    assert.ok(cleared >= 2, `the cache reached its limit ${cleared} times`);
    assert.equal(cache.entries, want.size);
    // Every piece set since the last clear is found again, now from another string holding the same text.
    for (const [piece, ids] of want) {
      const out: number[] = [];
      const other = `«${piece}»`;
      assert.equal(cache.pushIds(other, 1, 1 + piece.length, out), true, piece);
      assert.deepEqual(out, ids, piece);
    }
    const out: number[] = [];
    assert.equal(cache.pushIds('never set \u{1F600}', 0, 12, out), false);
    assert.deepEqual(out, []);
  });

  test('pieces longer than the limit are not cached', () => {
    const cache = new PieceCache(4, 100);
    cache.set('abcdef', 0, 5, 1);
    assert.equal(cache.pushIds('abcdef', 0, 5, []), false);
    assert.equal(cache.entries, 0);
  });
});

const found = kimiTokenizerDir();
const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-bpe-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('BPE pieces as text ranges', { skip: 'skip' in found ? found.skip : false }, () => {
  const dir = 'dir' in found ? found.dir : '';
  const kimi = loadKimiTokenizer({ dir, cacheDir: join(tmp, 'cache') });
  const ranks = loadRanks(join(dir, 'tiktoken.model'), join(tmp, 'cache'));
  const oracle = new Tiktoken(readFileSync(join(dir, 'tiktoken.model'), 'utf8'), Object.fromEntries(kimi.specials), KIMI_PAT_STR);
  after(() => oracle.free());

  test('a cache emptied every 64 pieces gives tiktoken ids on a 256 kB mixed corpus', () => {
    const small = new TiktokenBpe({ name: 'small cache', ranks, pattern: KIMI_PATTERN, specials: kimi.specials, cacheEntries: 64 });
    const corpus = mixedCorpus(256 * 1024);
    const ours = small.encode(corpus);
    const theirs = Array.from(oracle.encode(corpus, 'all'));
    assert.equal(
      ours.findIndex((id, i) => id !== theirs[i]),
      -1,
    );
    assert.equal(ours.length, theirs.length);
    // Warm: the same text again, now from the cache.
    assert.deepEqual(small.encode(corpus.slice(0, 20_000)), Array.from(oracle.encode(corpus.slice(0, 20_000), 'all')));
  });

  /** The pieces `matchAll` yields (a global exec loop; an empty match steps over one character), each encoded alone. */
  const reference = (pattern: RegExp, text: string) => {
    const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g');
    return [...text.matchAll(re)].flatMap((m) => (m[0] ? kimi.encodeOrdinary(m[0]) : []));
  };

  test('a pattern that leaves gaps or matches empty splits as an exec loop does', () => {
    // Lowercase runs are one Kimi piece each, so encoding them alone is what the split must give.
    // The `v` pattern is built at run time: TypeScript's target does not take the `v` flag in a literal.
    // biome-ignore lint/complexity/useRegexLiterals: see above
    for (const pattern of [/[a-z]+/u, /[a-z]*/u, new RegExp('[a-z]+|(?=X)', 'v')]) {
      const bpe = new TiktokenBpe({ name: 'gaps', ranks, pattern, specials: new Map() });
      for (const text of [
        'hello, world',
        '  leading and trailing  ',
        'XXabcXXdefX',
        'ünïcode wörds ok',
        '',
        'x',
        ...MULTILINGUAL_SAMPLES,
      ]) {
        assert.deepEqual(bpe.encode(text), reference(pattern, text), `${pattern} on ${JSON.stringify(text)}`);
        assert.deepEqual(bpe.encode(text), reference(pattern, text), `${pattern} on ${JSON.stringify(text)}, warm`);
      }
    }
  });
});
