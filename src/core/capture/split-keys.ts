/**
 * Masking of keys a model streamed a few characters per SSE event, when the stream ends. The per-chunk masking
 * (./recorder.ts) never sees such a key whole: each event holds a few of its characters. Here the deltas of each
 * choice are decoded and joined (OpenAI Chat `choices[i].delta.content` / `reasoning` / tool-call `arguments`,
 * Anthropic `text_delta` / `input_json_delta` / `thinking_delta`, Responses `*.delta`), key shapes are found in the
 * joined text, and each masked character is mapped back to the bytes that carried it in its event's JSON string
 * (escapes such as `\u0041` included). Those bytes become ASCII mask characters of the same byte length, so the body
 * keeps its length, the chunk timing still tiles it and every event stays valid JSON.
 */
import { maskSecrets, type Redaction, type RedactOptions } from '../redact';

/** A decoded JSON string value with, per UTF-16 unit, the raw bytes that carry it (absolute offsets). */
interface Str {
  s: string;
  /** from[i], to[i]: the raw byte range of unit i (empty for the second unit of a pair written as one character). */
  from: number[];
  to: number[];
}

type Json = null | boolean | number | Str | Json[] | { [k: string]: Json };

function isStr(v: Json | undefined): v is Str {
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
class Reader {
  i: number;
  constructor(
    private readonly b: Uint8Array,
    from: number,
    private readonly end: number,
  ) {
    this.i = from;
  }

  private ws(): void {
    while (this.i < this.end && (this.b[this.i] === 0x20 || this.b[this.i] === 0x09 || this.b[this.i] === 0x0a || this.b[this.i] === 0x0d)) this.i++;
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

function field(v: Json | undefined, k: string): Json | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) && !isStr(v) ? (v as { [k: string]: Json })[k] : undefined;
}

function num(v: Json | undefined): number {
  return typeof v === 'number' ? v : 0;
}

/** A delta's text: a plain string (JSON.parse) or a located one (Reader). */
function textOf(v: unknown): string | undefined {
  return typeof v === 'string' ? v : isStr(v as Json) ? (v as Str).s : undefined;
}

/**
 * The text deltas one SSE event carries, in a fixed order, each with the stream (choice and channel) it belongs to.
 * Works on JSON.parse's values and on the Reader's alike, so the same delta has the same place in both.
 */
function deltasOf(ev: Json): { stream: string; value: Json }[] {
  const out: { stream: string; value: Json }[] = [];
  const add = (v: Json | undefined, stream: () => string) => {
    const t = textOf(v);
    if (t !== undefined && t.length > 0) out.push({ stream: stream(), value: v! });
  };
  // OpenAI Chat (and compatible): choices[i].delta.
  const choices = field(ev, 'choices');
  if (Array.isArray(choices)) {
    for (const c of choices) {
      const i = num(field(c, 'index'));
      const d = field(c, 'delta');
      add(field(d, 'content'), () => `chat:${i}:content`);
      add(field(d, 'reasoning'), () => `chat:${i}:reasoning`);
      add(field(d, 'reasoning_content'), () => `chat:${i}:reasoning_content`);
      const calls = field(d, 'tool_calls');
      if (Array.isArray(calls)) for (const t of calls) add(field(field(t, 'function'), 'arguments'), () => `chat:${i}:tool:${num(field(t, 'index'))}`);
    }
  }
  const kind = textOf(field(ev, 'type')) ?? '';
  // Anthropic Messages: content_block_delta.
  if (kind === 'content_block_delta') {
    const i = num(field(ev, 'index'));
    const d = field(ev, 'delta');
    for (const k of ['text', 'partial_json', 'thinking']) add(field(d, k), () => `anthropic:${i}:${k}`);
  }
  // OpenAI Responses: response.output_text.delta, response.function_call_arguments.delta, reasoning deltas.
  if (kind.startsWith('response.') && kind.endsWith('.delta')) {
    add(field(ev, 'delta'), () => `responses:${kind}:${num(field(ev, 'output_index'))}:${num(field(ev, 'content_index'))}:${num(field(ev, 'summary_index'))}`);
  }
  return out;
}

/** A byte of a mask that is safe inside a JSON string: ASCII, printable, neither `"` nor `\`. */
function maskByte(ch: string): number {
  const c = ch.charCodeAt(0);
  return c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c ? c : 0x2a;
}

export interface SplitMaskResult {
  /** The masked body (the input itself when nothing was masked). */
  body: Uint8Array;
  /** Byte ranges of the body that changed. */
  ranges: { from: number; to: number }[];
  /** What was masked. */
  report: Redaction[];
}

/** Whether a body looks like an SSE stream (its first non-blank line is an SSE field or comment). */
export function looksLikeSse(body: Uint8Array): boolean {
  const head = Buffer.from(body.subarray(0, 64)).toString('latin1').replace(/^\s+/, '');
  return /^(?:data|event|id|retry)?:/.test(head);
}

/**
 * Masks, to the same byte length, the keys spread over the text deltas of an SSE body. Only bytes inside JSON string
 * values change, and only to ASCII. A key already masked (it arrived in one chunk) is left as it is.
 */
export function maskSplitKeys(body: Uint8Array, redact: RedactOptions = {}): SplitMaskResult {
  /** Each delta: its text, the `data:` line's JSON range and its place among that line's deltas. */
  const streams = new Map<string, { text: string; from: number; to: number; k: number }[]>();
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // Each `data:` line holding JSON (events here carry one line of data). JSON.parse (native) reads every line; only a
  // line that needs a mask is read again by the located Reader.
  for (let at = 0; at < body.length; ) {
    let end = body.indexOf(0x0a, at);
    if (end < 0) end = body.length;
    let lineEnd = end;
    if (lineEnd > at && body[lineEnd - 1] === 0x0d) lineEnd--;
    if (lineEnd - at > 5 && body[at] === 0x64 && body[at + 1] === 0x61 && body[at + 2] === 0x74 && body[at + 3] === 0x61 && body[at + 4] === 0x3a) {
      let v = at + 5;
      if (body[v] === 0x20) v++;
      if (body[v] === 0x7b) {
        let ev: Json | undefined;
        try {
          ev = JSON.parse(buf.toString('utf8', v, lineEnd)) as Json;
        } catch {
          // not JSON: nothing to decode on this line
        }
        if (ev !== undefined) {
          deltasOf(ev).forEach(({ stream, value }, k) => {
            const piece = { text: textOf(value)!, from: v, to: lineEnd, k };
            const list = streams.get(stream);
            if (list) list.push(piece);
            else streams.set(stream, [piece]);
          });
        }
      }
    }
    at = end + 1;
  }
  const report: Redaction[] = [];
  let out: Buffer | undefined;
  const changed: number[] = [];
  const located = new Map<number, Str[]>();
  const locate = (p: { from: number; to: number; k: number }): Str | undefined => {
    let strs = located.get(p.from);
    if (!strs) {
      try {
        strs = deltasOf(new Reader(body, p.from, p.to).value()).map((d) => d.value as Str);
      } catch {
        strs = [];
      }
      located.set(p.from, strs);
    }
    return strs[p.k];
  };
  for (const [stream, parts] of streams) {
    // A key split over events: one piece alone never holds it whole (the per-chunk pass took those).
    if (parts.length < 2) continue;
    const text = parts.map((p) => p.text).join('');
    const masked = maskSecrets(text, { patterns: redact.patterns, report }, `response ${stream}`);
    if (masked === text) continue;
    out ??= Buffer.from(body);
    let unit = 0;
    for (const p of parts) {
      const n = p.text.length;
      let str: Str | undefined;
      for (let k = 0; k < n; k++, unit++) {
        if (masked.charCodeAt(unit) === text.charCodeAt(unit)) continue;
        str ??= locate(p);
        if (!str || str.s !== p.text) continue;
        const b = maskByte(masked[unit]);
        for (let at = str.from[k]; at < str.to[k]; at++) {
          const next = at === str.from[k] ? b : 0x2a;
          if (out[at] !== next) (out[at] = next), changed.push(at);
        }
      }
    }
  }
  if (!out || changed.length === 0) return { body, ranges: [], report };
  changed.sort((a, b) => a - b);
  const ranges: { from: number; to: number }[] = [];
  for (const at of changed) {
    const last = ranges[ranges.length - 1];
    if (last && last.to === at) last.to++;
    else ranges.push({ from: at, to: at + 1 });
  }
  return { body: out, ranges, report };
}
