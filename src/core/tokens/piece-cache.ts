/**
 * The piece → ids cache of the BPE encoder, keyed by a range of the text being encoded (UTF-16 code units), so a
 * hit costs a hash and a compare in place: no substring, no Map entry, no array per piece. Keys and ids live in
 * flat typed arrays with an open-addressing (linear probing) index; the whole cache is emptied when it reaches
 * `maxEntries`, or when its keys reach `maxEntries × KEY_UNITS_PER_ENTRY` code units (text repeats the same few
 * thousand pieces, so a refill is cheap and the memory stays bounded).
 */

/** Key code units per entry, on average, that the cache holds before it empties itself. */
const KEY_UNITS_PER_ENTRY = 16;

export class PieceCache {
  private size = 0;
  /** Slot → key length; 0 marks an empty slot (pieces are never empty). */
  private keyLen: Uint8Array;
  private keyAt: Int32Array;
  private hashOf: Int32Array;
  private idsAt: Int32Array;
  private idsLen: Uint16Array;
  private keys: Uint16Array;
  private keysUsed = 0;
  private ids: Int32Array;
  private idsUsed = 0;

  constructor(
    /** Longest piece (in UTF-16 code units) that is cached; at most 255. */
    readonly maxPiece: number,
    readonly maxEntries: number,
    private readonly initialSlots = 4096,
  ) {
    this.keyLen = new Uint8Array(initialSlots);
    this.keyAt = new Int32Array(initialSlots);
    this.hashOf = new Int32Array(initialSlots);
    this.idsAt = new Int32Array(initialSlots);
    this.idsLen = new Uint16Array(initialSlots);
    this.keys = new Uint16Array(initialSlots * 4);
    this.ids = new Int32Array(initialSlots * 2);
  }

  get entries(): number {
    return this.size;
  }

  /**
   * Appends the cached ids of `text[start..end)` to `out` and returns true, or returns false (nothing appended)
   * when the piece is not cached.
   */
  pushIds(text: string, start: number, end: number, out: number[]): boolean {
    const n = end - start;
    const h = hashRange(text, start, end);
    const mask = this.keyLen.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const len = this.keyLen[s];
      if (len === 0) return false;
      if (len === n && this.hashOf[s] === h && this.sameKey(this.keyAt[s], text, start, n)) {
        const ids = this.ids;
        for (let i = this.idsAt[s], e = i + this.idsLen[s]; i < e; i++) out.push(ids[i]);
        return true;
      }
    }
  }

  /**
   * Caches the ids of `text[start..end)` (a piece of at most `maxPiece` code units that is not cached yet): `ids`
   * itself, or `count` of its entries from `from`.
   */
  set(
    text: string,
    start: number,
    end: number,
    ids: number | ArrayLike<number>,
    from = 0,
    count = typeof ids === 'number' ? 1 : ids.length - from,
  ): void {
    const n = end - start;
    if (n === 0 || n > this.maxPiece) return;
    if (this.size >= this.maxEntries || this.keysUsed + n > this.maxEntries * KEY_UNITS_PER_ENTRY) this.clear();
    if ((this.size + 1) * 2 > this.keyLen.length) this.grow();
    this.reserve(n, count);
    const keyAt = this.keysUsed;
    for (let i = 0; i < n; i++) this.keys[keyAt + i] = text.charCodeAt(start + i);
    this.keysUsed += n;
    const idsAt = this.idsUsed;
    if (typeof ids === 'number') this.ids[idsAt] = ids;
    else for (let i = 0; i < count; i++) this.ids[idsAt + i] = ids[from + i];
    this.idsUsed += count;
    const h = hashRange(text, start, end);
    this.place(h, n, keyAt, idsAt, count);
    this.size++;
  }

  clear(): void {
    this.size = 0;
    this.keysUsed = 0;
    this.idsUsed = 0;
    this.keyLen = new Uint8Array(this.initialSlots);
    this.keyAt = new Int32Array(this.initialSlots);
    this.hashOf = new Int32Array(this.initialSlots);
    this.idsAt = new Int32Array(this.initialSlots);
    this.idsLen = new Uint16Array(this.initialSlots);
  }

  private place(h: number, n: number, keyAt: number, idsAt: number, count: number): void {
    const mask = this.keyLen.length - 1;
    let s = h & mask;
    while (this.keyLen[s] !== 0) s = (s + 1) & mask;
    this.keyLen[s] = n;
    this.keyAt[s] = keyAt;
    this.hashOf[s] = h;
    this.idsAt[s] = idsAt;
    this.idsLen[s] = count;
  }

  private sameKey(at: number, text: string, start: number, n: number): boolean {
    const keys = this.keys;
    for (let i = 0; i < n; i++) if (keys[at + i] !== text.charCodeAt(start + i)) return false;
    return true;
  }

  /** Doubles the index (the keys and ids stay where they are). */
  private grow(): void {
    const [keyLen, keyAt, hashOf, idsAt, idsLen] = [this.keyLen, this.keyAt, this.hashOf, this.idsAt, this.idsLen];
    const size = keyLen.length * 2;
    this.keyLen = new Uint8Array(size);
    this.keyAt = new Int32Array(size);
    this.hashOf = new Int32Array(size);
    this.idsAt = new Int32Array(size);
    this.idsLen = new Uint16Array(size);
    for (let s = 0; s < keyLen.length; s++) if (keyLen[s] !== 0) this.place(hashOf[s], keyLen[s], keyAt[s], idsAt[s], idsLen[s]);
  }

  private reserve(keyUnits: number, idCount: number): void {
    if (this.keysUsed + keyUnits > this.keys.length) {
      const keys = new Uint16Array(Math.max(this.keys.length * 2, this.keysUsed + keyUnits));
      keys.set(this.keys.subarray(0, this.keysUsed));
      this.keys = keys;
    }
    if (this.idsUsed + idCount > this.ids.length) {
      const ids = new Int32Array(Math.max(this.ids.length * 2, this.idsUsed + idCount));
      ids.set(this.ids.subarray(0, this.idsUsed));
      this.ids = ids;
    }
  }
}

/** FNV-1a over the UTF-16 code units of `text[start..end)`. */
function hashRange(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h | 0;
}
