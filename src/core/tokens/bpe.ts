import { rankOf, type RankTable } from './ranks';
import { literalAlternation } from './specials';
import type { Tokenizer } from './types';

/**
 * tiktoken's byte-pair encoding over a rank table, in plain JS, with ids identical to tiktoken's.
 *
 * Each piece the split pattern yields is looked up in a piece → ids cache first (text repeats the same few
 * thousand pieces, so this skips nearly all work); a miss is UTF-8 encoded once into a scratch buffer, and the
 * rank lookups of BPE hash byte ranges of that buffer in place, without building substrings.
 */

const NONE = -1;
/** Pieces longer than this are not cached (rare, and they would evict the useful entries). */
const CACHE_MAX_PIECE = 64;
const CACHE_MAX_ENTRIES = 200_000;

export interface BpeOptions {
  name: string;
  ranks: RankTable;
  /** Split pattern; it is used with the `g` flag. */
  pattern: RegExp;
  /** Special token names → ids. */
  specials: ReadonlyMap<string, number>;
}

export class TiktokenBpe implements Tokenizer {
  readonly name: string;
  readonly specials: ReadonlyMap<string, number>;
  private readonly table: RankTable;
  private readonly pattern: RegExp;
  private readonly specialPattern: RegExp | undefined;
  private readonly specialById = new Map<number, string>();
  private readonly cache = new Map<string, number | number[]>();
  private readonly utf8 = new TextEncoder();
  private scratch = new Uint8Array(1024);

  constructor(o: BpeOptions) {
    this.name = o.name;
    this.table = o.ranks;
    this.pattern = new RegExp(o.pattern.source, o.pattern.flags.includes('g') ? o.pattern.flags : o.pattern.flags + 'g');
    this.specials = o.specials;
    for (const [name, id] of o.specials) this.specialById.set(id, name);
    this.specialPattern = literalAlternation(o.specials.keys());
  }

  encode(text: string): number[] {
    const out: number[] = [];
    const sp = this.specialPattern;
    if (!sp) {
      this.encodeInto(text, out);
      return out;
    }
    sp.lastIndex = 0;
    let from = 0;
    for (let m = sp.exec(text); m !== null; m = sp.exec(text)) {
      if (m.index > from) this.encodeInto(text.slice(from, m.index), out);
      out.push(this.specials.get(m[0])!);
      from = m.index + m[0].length;
    }
    if (from < text.length) this.encodeInto(from === 0 ? text : text.slice(from), out);
    return out;
  }

  encodeOrdinary(text: string): number[] {
    const out: number[] = [];
    this.encodeInto(text, out);
    return out;
  }

  tokenBytes(id: number): Uint8Array | undefined {
    const special = this.specialById.get(id);
    if (special !== undefined) return this.utf8.encode(special);
    const { bytes, offsets } = this.table;
    if (!Number.isInteger(id) || id < 0 || id + 1 >= offsets.length || offsets[id + 1] === offsets[id]) return undefined;
    return bytes.subarray(offsets[id], offsets[id + 1]);
  }

  specialName(id: number): string | undefined {
    return this.specialById.get(id);
  }

  idOfBytes(bytes: Uint8Array): number | undefined {
    const r = rankOf(this.table, bytes, 0, bytes.length);
    return r === NONE ? undefined : r;
  }

  /** Splits with the pattern and encodes every piece (no special-token handling). */
  private encodeInto(text: string, out: number[]): void {
    const re = this.pattern;
    const cache = this.cache;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const piece = m[0];
      if (piece.length === 0) {
        re.lastIndex++; // a pattern that can match empty must not loop forever
        continue;
      }
      let ids = cache.get(piece);
      if (ids === undefined) {
        ids = this.encodePiece(piece);
        if (piece.length <= CACHE_MAX_PIECE) {
          if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
          cache.set(piece, ids);
        }
      }
      if (typeof ids === 'number') out.push(ids);
      else for (let i = 0; i < ids.length; i++) out.push(ids[i]);
    }
  }

  private encodePiece(piece: string): number | number[] {
    if (this.scratch.length < piece.length * 3) this.scratch = new Uint8Array(piece.length * 3);
    const buf = this.scratch;
    const n = this.utf8.encodeInto(piece, buf).written;
    const whole = rankOf(this.table, buf, 0, n);
    return whole !== NONE ? whole : this.bytePairEncode(buf, n);
  }

  /** tiktoken `byte_pair_merge` over `buf[0..n)`: repeatedly merge the adjacent pair of lowest rank (leftmost on ties). */
  private bytePairEncode(buf: Uint8Array, n: number): number[] {
    const t = this.table;
    if (n === 1) return [rankOf(t, buf, 0, 1)];
    const starts: number[] = new Array(n + 1);
    const pairRank: number[] = new Array(n + 1);
    for (let i = 0; i < n - 1; i++) {
      starts[i] = i;
      pairRank[i] = rankOrMax(rankOf(t, buf, i, i + 2));
    }
    starts[n - 1] = n - 1;
    pairRank[n - 1] = MAX;
    starts[n] = n;
    pairRank[n] = MAX;
    let len = n + 1;
    const rankAt = (i: number) => (i + 3 < len ? rankOrMax(rankOf(t, buf, starts[i], starts[i + 3])) : MAX);
    for (;;) {
      let min = MAX;
      let at = -1;
      for (let i = 0; i < len - 1; i++) {
        if (pairRank[i] < min) {
          min = pairRank[i];
          at = i;
        }
      }
      if (at < 0) break;
      if (at > 0) pairRank[at - 1] = rankAt(at - 1);
      pairRank[at] = rankAt(at);
      starts.splice(at + 1, 1);
      pairRank.splice(at + 1, 1);
      len--;
    }
    const ids: number[] = new Array(len - 1);
    for (let i = 0; i < len - 1; i++) ids[i] = rankOf(t, buf, starts[i], starts[i + 1]);
    return ids;
  }
}

const MAX = 0x7fffffff;
const rankOrMax = (r: number) => (r === NONE ? MAX : r);
