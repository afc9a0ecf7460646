import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { loadFromDir } from '../../../src/core/tokens/resolve';
import { buildTokenStream, decodeIds } from '../../../src/core/tokens/stream';
import type { Tokenizer } from '../../../src/core/tokens/types';
import { MULTILINGUAL_SAMPLES } from './corpus';
import { kimiTokenizerDir, lenmlDir } from './helpers';

/** Token ranges as a streaming TextDecoder gives them, one decode call per token (what the stream did before). */
function referenceRanges(tokenizer: Tokenizer, ids: readonly number[], limit: number): [number, number][] {
  const decoder = new TextDecoder();
  const out: [number, number][] = [];
  let at = 0;
  for (const id of ids) {
    const end = Math.min(limit, at + decoder.decode(tokenizer.tokenBytes(id) ?? new Uint8Array(0), { stream: true }).length);
    out.push([at, end]);
    at = end;
  }
  return out;
}

/** Deterministic pseudo-random ids: whole-character tokens, single bytes (half characters, stray continuations), BOM, specials, unknown ids. */
function idSequences(tokenizer: Tokenizer, count: number): number[][] {
  let seed = 12345;
  const rnd = (n: number) => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
  const words = MULTILINGUAL_SAMPLES.flatMap((s) => tokenizer.encodeOrdinary(s));
  const bytes = Array.from({ length: 256 }, (_, b) => tokenizer.idOfBytes(Uint8Array.of(b))).filter((id): id is number => id !== undefined);
  const bom = tokenizer.idOfBytes(Uint8Array.of(0xef, 0xbb, 0xbf));
  const specials = [...tokenizer.specials.values()].slice(0, 8);
  const seqs: number[][] = [];
  for (let k = 0; k < count; k++) {
    const ids: number[] = [];
    if (bom !== undefined && k % 5 === 0) ids.push(bom); // a BOM first: the decoder drops it
    for (let n = 1 + rnd(40); n > 0; n--) {
      const pick = rnd(10);
      if (pick < 5) ids.push(words[rnd(words.length)]);
      else if (pick < 8) ids.push(bytes[rnd(bytes.length)]);
      else if (pick < 9 && bom !== undefined) ids.push(bom);
      else if (specials.length) ids.push(specials[rnd(specials.length)]);
      else ids.push(10_000_000); // outside the vocabulary
    }
    seqs.push(ids);
  }
  return seqs;
}

function checkRanges(tokenizer: Tokenizer) {
  for (const ids of idSequences(tokenizer, 400)) {
    const text = decodeIds(tokenizer, ids);
    const stream = buildTokenStream({ tokenizer, native: { text, segments: [] }, ids });
    assert.deepEqual(
      stream.tokens.map((t) => [t.start, t.end]),
      referenceRanges(tokenizer, ids, text.length),
      `ids ${ids.join(',')}`,
    );
  }
}

const kimi = kimiTokenizerDir();
const qwen = lenmlDir('qwen3');

describe('token character ranges', () => {
  test('Kimi K2: equal to one streaming decode per token, over whole, half and stray characters, BOMs and specials', {
    skip: 'skip' in kimi ? kimi.skip : false,
  }, () => {
    checkRanges(loadKimiTokenizer({ dir: 'dir' in kimi ? kimi.dir : '' }));
  });

  test('Qwen3 tokenizer.json: the same', { skip: 'skip' in qwen ? qwen.skip : false }, () => {
    checkRanges(loadFromDir('dir' in qwen ? qwen.dir : '', 'Qwen3'));
  });
});
