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
  return !!v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Str).s === 'string' && Array.isArray((v as Str).from);
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
    return { s, from, to };
  }
}

function field(v: Json | undefined, k: string): Json | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) && !isStr(v) ? (v as { [k: string]: Json })[k] : undefined;
}

function num(v: Json | undefined): number {
  return typeof v === 'number' ? v : 0;
}

/** The text deltas one SSE event carries, each with the stream (choice and channel) it belongs to. */
function deltasOf(ev: Json): { stream: string; str: Str }[] {
  const out: { stream: string; str: Str }[] = [];
  const add = (stream: string, v: Json | undefined) => {
    if (isStr(v) && v.s.length > 0) out.push({ stream, str: v });
  };
  // OpenAI Chat (and compatible): choices[i].delta.
  const choices = field(ev, 'choices');
  if (Array.isArray(choices)) {
    for (const c of choices) {
      const i = num(field(c, 'index'));
      const d = field(c, 'delta');
      add(`chat:${i}:content`, field(d, 'content'));
      add(`chat:${i}:reasoning`, field(d, 'reasoning'));
      add(`chat:${i}:reasoning_content`, field(d, 'reasoning_content'));
      const calls = field(d, 'tool_calls');
      if (Array.isArray(calls)) for (const t of calls) add(`chat:${i}:tool:${num(field(t, 'index'))}`, field(field(t, 'function'), 'arguments'));
    }
  }
  const type = field(ev, 'type');
  const kind = isStr(type) ? type.s : '';
  // Anthropic Messages: content_block_delta.
  if (kind === 'content_block_delta') {
    const i = num(field(ev, 'index'));
    const d = field(ev, 'delta');
    for (const k of ['text', 'partial_json', 'thinking']) add(`anthropic:${i}:${k}`, field(d, k));
  }
  // OpenAI Responses: response.output_text.delta, response.function_call_arguments.delta, reasoning deltas.
  if (kind.startsWith('response.') && kind.endsWith('.delta')) {
    add(`responses:${kind}:${num(field(ev, 'output_index'))}:${num(field(ev, 'content_index'))}:${num(field(ev, 'summary_index'))}`, field(ev, 'delta'));
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
  const streams = new Map<string, Str[]>();
  // Each `data:` line holding JSON (events here carry one line of data).
  for (let at = 0; at < body.length; ) {
    let end = body.indexOf(0x0a, at);
    if (end < 0) end = body.length;
    let lineEnd = end;
    if (lineEnd > at && body[lineEnd - 1] === 0x0d) lineEnd--;
    if (lineEnd - at > 5 && body[at] === 0x64 && body[at + 1] === 0x61 && body[at + 2] === 0x74 && body[at + 3] === 0x61 && body[at + 4] === 0x3a) {
      let v = at + 5;
      if (body[v] === 0x20) v++;
      if (body[v] === 0x7b) {
        try {
          const r = new Reader(body, v, lineEnd);
          const ev = r.value();
          for (const { stream, str } of deltasOf(ev)) {
            const list = streams.get(stream);
            if (list) list.push(str);
            else streams.set(stream, [str]);
          }
        } catch {
          // not JSON: nothing to decode on this line
        }
      }
    }
    at = end + 1;
  }
  const report: Redaction[] = [];
  let out: Buffer | undefined;
  const changed: number[] = [];
  for (const [stream, parts] of streams) {
    // A key split over events: one piece alone never holds it whole (the per-chunk pass took those).
    if (parts.length < 2) continue;
    const text = parts.map((p) => p.s).join('');
    const masked = maskSecrets(text, { patterns: redact.patterns, report }, `response ${stream}`);
    if (masked === text) continue;
    out ??= Buffer.from(body);
    let unit = 0;
    for (const p of parts) {
      for (let k = 0; k < p.s.length; k++, unit++) {
        if (masked.charCodeAt(unit) === text.charCodeAt(unit)) continue;
        const b = maskByte(masked[unit]);
        for (let at = p.from[k]; at < p.to[k]; at++) {
          const next = at === p.from[k] ? b : 0x2a;
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
