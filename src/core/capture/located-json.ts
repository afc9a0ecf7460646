/**
 * A small JSON reader over bytes that keeps where every string's characters sit (./split-keys.ts maps a masked
 * character of a decoded delta back to the bytes that carried it, escapes such as `\u0041` included).
 */

/** A decoded JSON string value with, per UTF-16 unit, the raw bytes that carry it (absolute offsets). */
export interface Str {
  s: string;
  /** from[i], to[i]: the raw byte range of unit i (empty for the second unit of a pair written as one character). */
  from: number[];
  to: number[];
}

export type Json = null | boolean | number | Str | Json[] | { [k: string]: Json };

export function isStr(v: Json | undefined): v is Str {
  return v instanceof LocatedStr;
}

class LocatedStr implements Str {
  constructor(
    readonly s: string,
    readonly from: number[],
    readonly to: number[],
  ) {}
}

/** A small JSON reader over bytes that keeps where every string's characters sit. Throws on invalid JSON. */
export class Reader {
  i: number;
  constructor(
    private readonly b: Uint8Array,
    from: number,
    private readonly end: number,
  ) {
    this.i = from;
  }

  private ws(): void {
    while (this.i < this.end && (this.b[this.i] === 0x20 || this.b[this.i] === 0x09 || this.b[this.i] === 0x0a || this.b[this.i] === 0x0d))
      this.i++;
  }

  value(depth = 0): Json {
    if (depth > 64) throw new Error('too deep');
    this.ws();
    const c = this.b[this.i];
    if (c === 0x7b) {
      this.i++;
      const o: { [k: string]: Json } = {};
      this.ws();
      if (this.b[this.i] === 0x7d) return (this.i++, o);
      for (;;) {
        this.ws();
        const k = this.string();
        this.ws();
        if (this.b[this.i++] !== 0x3a) throw new Error('colon');
        o[k.s] = this.value(depth + 1);
        this.ws();
        const d = this.b[this.i++];
        if (d === 0x7d) return o;
        if (d !== 0x2c) throw new Error('comma');
      }
    }
    if (c === 0x5b) {
      this.i++;
      const a: Json[] = [];
      this.ws();
      if (this.b[this.i] === 0x5d) return (this.i++, a);
      for (;;) {
        a.push(this.value(depth + 1));
        this.ws();
        const d = this.b[this.i++];
        if (d === 0x5d) return a;
        if (d !== 0x2c) throw new Error('comma');
      }
    }
    if (c === 0x22) return this.string();
    const start = this.i;
    while (this.i < this.end && /[-+.0-9a-zA-Z]/.test(String.fromCharCode(this.b[this.i]))) this.i++;
    const word = Buffer.from(this.b.subarray(start, this.i)).toString('latin1');
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    const n = Number(word);
    if (word === '' || Number.isNaN(n)) throw new Error('value');
    return n;
  }

  private string(): Str {
    const b = this.b;
    if (b[this.i] !== 0x22) throw new Error('string');
    this.i++;
    const units: number[] = [];
    const from: number[] = [];
    const to: number[] = [];
    for (;;) {
      if (this.i >= this.end) throw new Error('unterminated');
      const at = this.i;
      const c = b[at];
      if (c === 0x22) {
        this.i++;
        break;
      }
      if (c === 0x5c) {
        const e = b[at + 1];
        let u: number;
        let len = 2;
        if (e === 0x75) {
          u = parseInt(Buffer.from(b.subarray(at + 2, at + 6)).toString('latin1'), 16);
          if (!/^[0-9a-fA-F]{4}$/.test(Buffer.from(b.subarray(at + 2, at + 6)).toString('latin1'))) throw new Error('escape');
          len = 6;
        } else {
          const simple: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 8, 0x66: 12, 0x6e: 10, 0x72: 13, 0x74: 9 };
          if (!(e in simple)) throw new Error('escape');
          u = simple[e];
        }
        units.push(u), from.push(at), to.push(at + len);
        this.i = at + len;
        continue;
      }
      // One UTF-8 character: 1 to 4 bytes, one or two UTF-16 units.
      const len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      const ch = Buffer.from(b.subarray(at, at + len)).toString('utf8');
      for (let k = 0; k < ch.length; k++) units.push(ch.charCodeAt(k)), from.push(k === 0 ? at : at + len), to.push(at + len);
      this.i = at + len;
    }
    let s = '';
    for (let k = 0; k < units.length; k += 8192) s += String.fromCharCode(...units.slice(k, k + 8192));
    return new LocatedStr(s, from, to);
  }
}

export function field(v: Json | undefined, k: string): Json | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) && !isStr(v) ? (v as { [k: string]: Json })[k] : undefined;
}

export function num(v: Json | undefined): number {
  return typeof v === 'number' ? v : 0;
}
