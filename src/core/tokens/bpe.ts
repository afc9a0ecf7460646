import { PieceCache } from './piece-cache';
import { rankOf, type RankTable } from './ranks';
import { literalAlternation } from './specials';
import type { Tokenizer } from './types';

/**
 * tiktoken's byte-pair encoding over a rank table, in plain JS, with ids identical to tiktoken's.
 *
 * The split pattern runs sticky with `test`, which only moves `lastIndex`: the pieces are ranges of the text, with
 * no match array or substring each. Each piece is looked up by its range in a piece → ids cache first (text
 * repeats the same few thousand pieces, so this skips nearly all work); a miss is UTF-8 encoded once into a
 * scratch buffer, and the rank lookups of BPE hash byte ranges of that buffer in place, without building substrings.
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
  /** Pieces kept in the cache before it is emptied (default 200,000). */
  cacheEntries?: number;
}

export class TiktokenBpe implements Tokenizer {
  readonly name: string;
  readonly specials: ReadonlyMap<string, number>;
  private readonly table: RankTable;
  private readonly pattern: RegExp;
  /** The split pattern, sticky: a piece must start where the previous one ended. */
  private readonly sticky: RegExp;
  private readonly unicode: boolean;
  private readonly specialPattern: RegExp | undefined;
  private readonly specialById = new Map<number, string>();
  private readonly cache: PieceCache;
  private readonly utf8 = new TextEncoder();
  private scratch = new Uint8Array(1024);

  constructor(o: BpeOptions) {
    this.name = o.name;
    this.table = o.ranks;
    const flags = o.pattern.flags.replace(/[gy]/g, '');
    this.pattern = new RegExp(o.pattern.source, flags + 'g');
    this.sticky = new RegExp(o.pattern.source, flags + 'y');
    this.unicode = /[uv]/.test(flags);
    this.specials = o.specials;
    this.cache = new PieceCache(CACHE_MAX_PIECE, o.cacheEntries ?? CACHE_MAX_ENTRIES);
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

  /**
   * Splits with the pattern and encodes every piece (no special-token handling). The pieces are those of a global
   * `exec` loop: where nothing matches at the position reached (text the pattern does not cover), the next match
   * is searched for; an empty match skips one character.
   */
  private encodeInto(text: string, out: number[]): void {
    const sticky = this.sticky;
    const cache = this.cache;
    const len = text.length;
    for (let pos = 0; pos < len; ) {
      let start = pos;
      sticky.lastIndex = pos;
      let end: number;
      if (sticky.test(text)) {
        end = sticky.lastIndex;
      } else {
        const re = this.pattern;
        re.lastIndex = pos;
        const m = re.exec(text);
        if (m === null) return;
        start = m.index;
        end = start + m[0].length;
      }
      if (end === start) {
        // A pattern that can match empty must not loop forever: step over one character, as matchAll does.
        pos = end + (this.unicode && isSurrogatePair(text, end) ? 2 : 1);
        continue;
      }
      pos = end;
      if (end - start <= CACHE_MAX_PIECE && cache.pushIds(text, start, end, out)) continue;
      const ids = this.encodePiece(text.slice(start, end));
      cache.set(text, start, end, ids);
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

function isSurrogatePair(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return false;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff;
}
const rankOrMax = (r: number) => (r === NONE ? MAX : r);
