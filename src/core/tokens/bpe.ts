import { PieceCache } from './piece-cache';
import { rankOf, type RankTable } from './ranks';
import { literalAlternation } from './specials';
import type { Tokenizer } from './types';

/**
 * tiktoken's byte-pair encoding over a rank table, in plain JS, with ids identical to tiktoken's.
 *
 * The text is cut into pieces by a hand-written scanner when the tokenizer has one (Kimi: ./kimi-split.ts), else by
 * the split pattern run sticky with `test`, which only moves `lastIndex`: either way the pieces are ranges of the
 * text, with no match array or substring each. Each piece is looked up by its range in a piece → ids cache first
 * (text repeats the same few thousand pieces, so this skips nearly all work); a miss is UTF-8 encoded once into a
 * scratch buffer, and BPE runs over that buffer with the parts in scratch typed arrays and rank lookups that hash
 * byte ranges in place: no substring, array or closure per piece.
 */

const NONE = -1;
/** Pieces longer than this (UTF-16 code units) are not cached: rare, and mostly one-offs. */
const CACHE_MAX_PIECE = 255;
const CACHE_MAX_ENTRIES = 200_000;

/**
 * The end of the piece that starts at `start` in `text[..end)`, for a split pattern that matches a non-empty piece
 * at every position (`end` counts as the end of the text).
 */
export type PieceSplitter = (text: string, start: number, end: number) => number;

export interface BpeOptions {
  name: string;
  ranks: RankTable;
  /** Split pattern; it is used with the `g` flag. */
  pattern: RegExp;
  /** The same split as `pattern`, by hand: used instead of it when given. */
  split?: PieceSplitter;
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
  private readonly split: PieceSplitter | undefined;
  private readonly unicode: boolean;
  private readonly specialPattern: RegExp | undefined;
  private readonly specialById = new Map<number, string>();
  private readonly cache: PieceCache;
  private readonly utf8 = new TextEncoder();
  /** A piece's UTF-8 bytes. */
  private scratch = new Uint8Array(1024);
  /** BPE parts: where each starts in `scratch`, and the rank of it merged with the next one. */
  private partStart = new Int32Array(1025);
  private partRank = new Int32Array(1025);

  constructor(o: BpeOptions) {
    this.name = o.name;
    this.table = o.ranks;
    const flags = o.pattern.flags.replace(/[gy]/g, '');
    this.pattern = new RegExp(o.pattern.source, flags + 'g');
    this.sticky = new RegExp(o.pattern.source, flags + 'y');
    this.split = o.split;
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
      this.encodeRange(text, 0, text.length, out);
      return out;
    }
    sp.lastIndex = 0;
    let from = 0;
    for (let m = sp.exec(text); m !== null; m = sp.exec(text)) {
      if (m.index > from) this.encodeRange(text, from, m.index, out);
      out.push(this.specials.get(m[0])!);
      from = m.index + m[0].length;
    }
    if (from < text.length) this.encodeRange(text, from, text.length, out);
    return out;
  }

  encodeOrdinary(text: string): number[] {
    const out: number[] = [];
    this.encodeRange(text, 0, text.length, out);
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

  /** Splits `text[from..to)` (as if it were the whole text) and encodes every piece (no special-token handling). */
  private encodeRange(text: string, from: number, to: number, out: number[]): void {
    const split = this.split;
    if (split) {
      for (let pos = from; pos < to; ) {
        const end = split(text, pos, to);
        this.encodePiece(text, pos, end, out);
        pos = end;
      }
      return;
    }
    this.encodeMatches(from === 0 && to === text.length ? text : text.slice(from, to), out);
  }

  /**
   * Splits with the pattern and encodes every piece. The pieces are those of a global `exec` loop: where nothing
   * matches at the position reached (text the pattern does not cover), the next match is searched for; an empty
   * match skips one character.
   */
  private encodeMatches(text: string, out: number[]): void {
    const sticky = this.sticky;
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
      this.encodePiece(text, start, end, out);
    }
  }

  /** Appends the ids of the piece `text[start..end)`: from the cache, else by BPE (then cached). */
  private encodePiece(text: string, start: number, end: number, out: number[]): void {
    const cacheable = end - start <= CACHE_MAX_PIECE;
    if (cacheable && this.cache.pushIds(text, start, end, out)) return;
    const n = this.utf8Into(text, start, end);
    const at = out.length;
    const whole = rankOf(this.table, this.scratch, 0, n);
    if (whole !== NONE) out.push(whole);
    else this.bytePairEncode(n, out);
    if (cacheable) this.cache.set(text, start, end, out, at, out.length - at);
  }

  /**
   * UTF-8 of `text[start..end)` into `scratch`; returns the byte count. A lone surrogate becomes U+FFFD, as
   * TextEncoder (and tiktoken's bindings) make it.
   */
  private utf8Into(text: string, start: number, end: number): number {
    if (this.scratch.length < (end - start) * 3) this.scratch = new Uint8Array((end - start) * 3);
    const buf = this.scratch;
    let n = 0;
    for (let i = start; i < end; i++) {
      let c = text.charCodeAt(i);
      if (c < 0x80) {
        buf[n++] = c;
      } else if (c < 0x800) {
        buf[n++] = 0xc0 | (c >> 6);
        buf[n++] = 0x80 | (c & 0x3f);
      } else if (c < 0xd800 || c > 0xdfff) {
        buf[n++] = 0xe0 | (c >> 12);
        buf[n++] = 0x80 | ((c >> 6) & 0x3f);
        buf[n++] = 0x80 | (c & 0x3f);
      } else {
        const d = i + 1 < end ? text.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          i++;
          buf[n++] = 0xf0 | (c >> 18);
          buf[n++] = 0x80 | ((c >> 12) & 0x3f);
          buf[n++] = 0x80 | ((c >> 6) & 0x3f);
          buf[n++] = 0x80 | (c & 0x3f);
        } else {
          buf[n++] = 0xef;
          buf[n++] = 0xbf;
          buf[n++] = 0xbd;
        }
      }
    }
    return n;
  }

  /**
   * tiktoken `byte_pair_merge` over `scratch[0..n)`: repeatedly merge the adjacent pair of lowest rank (leftmost on
   * ties); appends the ids of the parts left.
   */
  private bytePairEncode(n: number, out: number[]): void {
    const t = this.table;
    const buf = this.scratch;
    if (n === 1) {
      out.push(rankOf(t, buf, 0, 1));
      return;
    }
    if (n > LONG_PIECE) {
      this.bytePairEncodeLong(n, out);
      return;
    }
    if (this.partStart.length < n + 1) {
      this.partStart = new Int32Array(n + 1);
      this.partRank = new Int32Array(n + 1);
    }
    const starts = this.partStart;
    const ranks = this.partRank;
    for (let i = 0; i < n - 1; i++) {
      starts[i] = i;
      ranks[i] = rankOrMax(rankOf(t, buf, i, i + 2));
    }
    starts[n - 1] = n - 1;
    ranks[n - 1] = MAX;
    starts[n] = n;
    ranks[n] = MAX;
    let len = n + 1;
    for (;;) {
      let min = MAX;
      let at = -1;
      for (let i = 0; i < len - 1; i++) {
        if (ranks[i] < min) {
          min = ranks[i];
          at = i;
        }
      }
      if (at < 0) break;
      // The part at `at` absorbs the next one: the pairs around it change (tiktoken's `get_rank(parts, i)`: the
      // bytes from part i to part i + 3, before the removal).
      if (at > 0) ranks[at - 1] = at + 2 < len ? rankOrMax(rankOf(t, buf, starts[at - 1], starts[at + 2])) : MAX;
      ranks[at] = at + 3 < len ? rankOrMax(rankOf(t, buf, starts[at], starts[at + 3])) : MAX;
      for (let i = at + 1; i < len - 1; i++) {
        starts[i] = starts[i + 1];
        ranks[i] = ranks[i + 1];
      }
      len--;
    }
    for (let i = 0; i < len - 1; i++) out.push(rankOf(t, buf, starts[i], starts[i + 1]));
  }

  /**
   * `bytePairEncode` for a long piece (a run of one letter, a long rule of box-drawing characters), in O(n log n)
   * rather than tiktoken's O(n²) scans: the parts are a linked list and the candidate merges a min-heap keyed by
   * (rank, start), so the merge taken each time is the same one, the lowest rank leftmost. A heap entry whose part
   * has gone or whose rank has changed is stale and skipped (a part's rank names its bytes, so an entry with the
   * part's current rank is current).
   */
  private bytePairEncodeLong(n: number, out: number[]): void {
    const t = this.table;
    const buf = this.scratch;
    const next = new Int32Array(n + 1);
    const prev = new Int32Array(n + 1);
    const rank = new Int32Array(n + 1);
    const heap = new MinHeap(n);
    for (let i = 0; i <= n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    /** The rank of the part at `i` merged with the next one (both must exist), or MAX. */
    const pairRank = (i: number) => {
      const j = next[i];
      return j < n ? rankOrMax(rankOf(t, buf, i, next[j])) : MAX;
    };
    for (let i = 0; i < n; i++) {
      rank[i] = pairRank(i);
      if (rank[i] !== MAX) heap.push(rank[i] * POS + i);
    }
    while (heap.size > 0) {
      const key = heap.pop();
      const r = Math.floor(key / POS);
      const i = key - r * POS;
      if (rank[i] !== r || next[i] > n) continue; // stale, or the part was absorbed
      // Part `i` absorbs the next one.
      const gone = next[i];
      next[i] = next[gone];
      prev[next[gone]] = i;
      next[gone] = n + 1;
      rank[i] = pairRank(i);
      if (rank[i] !== MAX) heap.push(rank[i] * POS + i);
      const p = prev[i];
      if (p >= 0) {
        rank[p] = pairRank(p);
        if (rank[p] !== MAX) heap.push(rank[p] * POS + p);
      }
    }
    for (let i = 0; i < n; i = next[i]) out.push(rankOf(t, buf, i, next[i]));
  }
}

/** Pieces of more UTF-8 bytes than this merge with a heap (`bytePairEncodeLong`). */
const LONG_PIECE = 128;
/** Heap keys are `rank * POS + start`: exact in a double for any rank below 2^21 and start below 2^32. */
const POS = 2 ** 32;

/** A binary min-heap of numbers. */
class MinHeap {
  size = 0;
  private items: Float64Array;

  constructor(capacity: number) {
    this.items = new Float64Array(Math.max(16, capacity));
  }

  push(x: number): void {
    if (this.size === this.items.length) {
      const bigger = new Float64Array(this.items.length * 2);
      bigger.set(this.items);
      this.items = bigger;
    }
    const a = this.items;
    let i = this.size++;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (a[up] <= x) break;
      a[i] = a[up];
      i = up;
    }
    a[i] = x;
  }

  pop(): number {
    const a = this.items;
    const top = a[0];
    const x = a[--this.size];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && a[child + 1] < a[child]) child++;
      if (a[child] >= x) break;
      a[i] = a[child];
      i = child;
    }
    a[i] = x;
    return top;
  }
}

const MAX = 0x7fffffff;

function isSurrogatePair(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return false;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff;
}

function rankOrMax(r: number): number {
  return r === NONE ? MAX : r;
}
