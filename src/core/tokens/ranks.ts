import { createHash } from 'node:crypto';
import { UserError } from '../model';

/**
 * tiktoken rank files (`base64(token bytes) rank` per line), held as flat typed arrays with an open-addressing
 * hash index over the token bytes, and a binary cache of exactly those arrays.
 *
 * Why not a JS Map of 163k strings: building one costs 0.2–0.9 s on a loaded 2-core machine, every cold load.
 * The typed arrays are read back from the cache as they are (one file read, no per-token work), and lookups
 * hash byte ranges in place, so BPE never allocates substrings.
 */

export interface RankTable {
  /** Token bytes, concatenated in rank order. */
  bytes: Uint8Array;
  /** `count + 1` offsets: rank `r` is `bytes[offsets[r] .. offsets[r + 1])`; an empty range marks an undefined rank. */
  offsets: Uint32Array;
  /** Open-addressing (linear probing) index: a power-of-two number of slots holding a rank, or -1 when empty. */
  slots: Int32Array;
}

const MAGIC = 'TSRANKS3';
/** magic (8) + count (4) + slot count (4) + sha256 of everything after it (32), then the source's length (4). */
const SUMMED = 48;
const HEADER = SUMMED + 4;

/** FNV-1a over `key[start..end)`. */
function hashRange(key: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ key[i], 0x01000193);
  return h >>> 0;
}

/** The rank whose bytes equal `key[start..end)`, or -1. */
export function rankOf(t: RankTable, key: Uint8Array, start: number, end: number): number {
  const { slots, offsets, bytes } = t;
  const mask = slots.length - 1;
  const len = end - start;
  for (let s = hashRange(key, start, end) & mask; ; s = (s + 1) & mask) {
    const r = slots[s];
    if (r < 0) return -1;
    const a = offsets[r];
    if (offsets[r + 1] - a !== len) continue;
    let i = 0;
    while (i < len && bytes[a + i] === key[start + i]) i++;
    if (i === len) return r;
  }
}

function buildSlots(bytes: Uint8Array, offsets: Uint32Array): Int32Array {
  const count = offsets.length - 1;
  let size = 1;
  while (size < count * 3) size <<= 1; // load factor ≤ 1/3 keeps probe chains short
  const slots = new Int32Array(size).fill(-1);
  const mask = size - 1;
  for (let r = 0; r < count; r++) {
    const a = offsets[r];
    const b = offsets[r + 1];
    if (b === a) continue;
    let s = hashRange(bytes, a, b) & mask;
    while (slots[s] >= 0) s = (s + 1) & mask;
    slots[s] = r;
  }
  return slots;
}

const B64 = new Int8Array(256).fill(-1);
for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
const EQ = 0x3d;
const SPACE = 0x20;
const NL = 0x0a;
const CR = 0x0d;

/**
 * Parses a tiktoken rank file in one pass over its bytes (base64 decoded in place: no per-line strings or
 * buffers, which made the first load of 163k lines slow). Throws a UserError naming the first bad line.
 */
export function parseRankFile(data: Uint8Array, source = 'tiktoken.model'): RankTable {
  // Base64 never expands: the decoded tokens fit in 3/4 of the file.
  const out = new Uint8Array(Math.ceil((data.length * 3) / 4));
  const starts: number[] = [];
  const lengths: number[] = [];
  let total = 0;
  let max = -1;
  let line = 0;
  const bad = (why: string) => new UserError(`${source}: line ${line} ${why}`);
  for (let pos = 0; pos < data.length; ) {
    line++;
    let eol = data.indexOf(NL, pos);
    if (eol < 0) eol = data.length;
    let end = eol;
    if (end > pos && data[end - 1] === CR) end--;
    const lineStart = pos;
    pos = eol + 1;
    if (end === lineStart) continue;
    const space = data.indexOf(SPACE, lineStart);
    if (space < 0 || space >= end) throw bad('is not "base64 rank"');
    // Decode the token.
    const tokenAt = total;
    let acc = 0;
    let bits = 0;
    let i = lineStart;
    for (; i < space && data[i] !== EQ; i++) {
      const v = B64[data[i]];
      if (v < 0) throw bad('has a token that is not base64');
      acc = ((acc << 6) | v) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[total++] = (acc >> bits) & 0xff;
      }
    }
    if (total === tokenAt) throw bad('has an empty token');
    // Parse the rank.
    let rank = 0;
    if (space + 1 >= end) throw bad('has no rank');
    for (i = space + 1; i < end; i++) {
      const d = data[i] - 0x30;
      if (d < 0 || d > 9 || rank > 0xffffff) throw bad('has a rank that is not a number');
      rank = rank * 10 + d;
    }
    starts[rank] = tokenAt;
    lengths[rank] = total - tokenAt;
    if (rank > max) max = rank;
  }
  if (max < 0) throw new UserError(`${source} holds no tokens`);
  const offsets = new Uint32Array(max + 2);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (let r = 0; r <= max; r++) {
    offsets[r] = at;
    const len = lengths[r];
    if (len) {
      bytes.set(out.subarray(starts[r], starts[r] + len), at);
      at += len;
    }
  }
  offsets[max + 1] = at;
  return { bytes, offsets, slots: buildSlots(bytes, offsets) };
}

/**
 * Serializes a rank table into the cache format: header, `source` (what the table was built from, as the cache names
 * it: ./rank-cache.ts), offsets, slots, bytes (little-endian, 4-byte aligned).
 */
export function encodeRankCache(t: RankTable, source = ''): Uint8Array {
  const src = Buffer.from(source, 'utf8');
  const tableAt = HEADER + align4(src.length);
  const out = new Uint8Array(tableAt + t.offsets.byteLength + t.slots.byteLength + t.bytes.byteLength);
  out.set(Buffer.from(MAGIC, 'latin1'), 0);
  const view = new DataView(out.buffer);
  view.setUint32(8, t.offsets.length - 1, true);
  view.setUint32(12, t.slots.length, true);
  view.setUint32(SUMMED, src.length, true);
  out.set(src, HEADER);
  let at = tableAt;
  for (const part of [t.offsets, t.slots, t.bytes]) {
    out.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at);
    at += part.byteLength;
  }
  out.set(createHash('sha256').update(out.subarray(SUMMED)).digest(), 16);
  return out;
}

/**
 * Reads the cache format back; undefined when it is not a usable cache. The checksum stands in for walking
 * 700k entries to validate them (a slow loop on a cold start): the file is only ever written whole by
 * `encodeRankCache`, so a matching checksum means a well-formed table.
 */
export function decodeRankCache(data: Uint8Array): RankTable | undefined {
  if (data.byteLength < HEADER || Buffer.from(data.subarray(0, 8)).toString('latin1') !== MAGIC) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const count = view.getUint32(8, true);
  const slotCount = view.getUint32(12, true);
  if (slotCount === 0 || (slotCount & (slotCount - 1)) !== 0 || slotCount <= count) return undefined;
  const tableAt = HEADER + align4(view.getUint32(SUMMED, true));
  const slotsAt = tableAt + (count + 1) * 4;
  const bytesAt = slotsAt + slotCount * 4;
  if (bytesAt > data.byteLength) return undefined;
  const sum = createHash('sha256').update(data.subarray(SUMMED)).digest();
  if (!sum.equals(data.subarray(16, SUMMED))) return undefined;
  // Typed-array views need 4-byte alignment; a file buffer usually has it, otherwise copy.
  const aligned = data.byteOffset % 4 === 0 ? data : new Uint8Array(data);
  const offsets = new Uint32Array(aligned.buffer, aligned.byteOffset + tableAt, count + 1);
  const slots = new Int32Array(aligned.buffer, aligned.byteOffset + slotsAt, slotCount);
  const bytes = aligned.subarray(bytesAt);
  if (offsets[count] !== bytes.byteLength) return undefined;
  return { bytes, offsets, slots };
}

/**
 * A rank table in one SharedArrayBuffer (offsets, slots, bytes), to hand to worker threads: posting it shares the
 * memory, so every thread reads the one table without copying or parsing it.
 */
export interface SharedRankTable {
  buffer: SharedArrayBuffer;
  count: number;
  slotCount: number;
  byteCount: number;
}

/** Copies a rank table into shared memory. */
export function shareRankTable(t: RankTable): SharedRankTable {
  const count = t.offsets.length - 1;
  const buffer = new SharedArrayBuffer(t.offsets.byteLength + t.slots.byteLength + align4(t.bytes.byteLength));
  const shared = { buffer, count, slotCount: t.slots.length, byteCount: t.bytes.byteLength };
  const views = sharedRankTable(shared);
  views.offsets.set(t.offsets);
  views.slots.set(t.slots);
  views.bytes.set(t.bytes);
  return shared;
}

/** The rank table held in shared memory (views, no copy). */
export function sharedRankTable(s: SharedRankTable): RankTable {
  const slotsAt = (s.count + 1) * 4;
  const bytesAt = slotsAt + s.slotCount * 4;
  return {
    offsets: new Uint32Array(s.buffer, 0, s.count + 1),
    slots: new Int32Array(s.buffer, slotsAt, s.slotCount),
    bytes: new Uint8Array(s.buffer, bytesAt, s.byteCount),
  };
}

/**
 * The source a cache file names, from its first bytes (`head`: at least RANK_CACHE_HEAD of them, or the whole file);
 * `needed` when the source goes on past `head`, undefined when it is no cache of this format. Not checked against
 * the checksum: that needs the whole file.
 */
export function rankCacheSource(head: Uint8Array): { source: string } | { needed: number } | undefined {
  if (head.byteLength < HEADER || Buffer.from(head.subarray(0, 8)).toString('latin1') !== MAGIC) return undefined;
  const length = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(SUMMED, true);
  if (HEADER + length > head.byteLength) return { needed: HEADER + length };
  return { source: Buffer.from(head.subarray(HEADER, HEADER + length)).toString('utf8') };
}

/** Bytes of a cache file that hold its source, unless the source is unusually long. */
export const RANK_CACHE_HEAD = 4096;

function align4(n: number): number {
  return (n + 3) & ~3;
}
