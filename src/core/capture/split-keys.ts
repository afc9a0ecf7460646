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
import { MASK_CONTEXT } from './masking';
import { field, isStr, num, Reader, type Json, type Str } from './located-json';

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
      if (Array.isArray(calls))
        for (const t of calls) add(field(field(t, 'function'), 'arguments'), () => `chat:${i}:tool:${num(field(t, 'index'))}`);
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
    add(
      field(ev, 'delta'),
      () => `responses:${kind}:${num(field(ev, 'output_index'))}:${num(field(ev, 'content_index'))}:${num(field(ev, 'summary_index'))}`,
    );
  }
  return out;
}

/** A byte of a mask that is safe inside a JSON string: ASCII, printable, neither `"` nor `\\`. */
function maskByte(ch: string): number {
  const c = ch.charCodeAt(0);
  return c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c ? c : 0x2a;
}

export interface SplitMaskResult {
  /** Byte ranges of the body that change, with their new bytes (the body itself is never changed). */
  ranges: { from: number; to: number; bytes: Uint8Array }[];
  /** How many keys were masked (runs of masked characters), their kinds, and in which streams (`chat:0:content`…). */
  keys: number;
  labels: string[];
  streams: string[];
}

/** Whether a body looks like an SSE stream (its first non-blank line is an SSE field or comment). */
export function looksLikeSse(body: Uint8Array): boolean {
  const head = Buffer.from(body.subarray(0, 64)).toString('latin1').replace(/^\s+/, '');
  return /^(?:data|event|id|retry)?:/.test(head);
}

/** The decoded text of one stream (a choice's content, reasoning, a tool call's arguments…) as its deltas carry it. */
interface Piece {
  text: string;
  /** Where the text starts in the stream's joined text (UTF-16 units). */
  start: number;
  /** The `data:` line's JSON byte range, and the delta's place among that line's deltas. */
  from: number;
  to: number;
  k: number;
}

/** The joined text is masked in windows this long (UTF-16 units), each read with context around it. */
const WINDOW = 64 * 1024;
/** A key (and what its pattern needs after it) is never longer than this: a window reads this far past its end. */
const OVERLAP = 4 * 1024;
/** Lines scanned between two looks at the clock. */
const LINES_PER_LOOK = 64;

/**
 * Masks, to the same byte length, the keys spread over the text deltas of an SSE body. Only bytes inside JSON string
 * values change, and only to ASCII. A key already masked (it arrived in one chunk) is left as it is.
 *
 * The work is cut into steps (`step(budgetMs)`), so a 16 MB body is masked without holding the event loop: the lines
 * are read in batches (JSON.parse, native), each stream's text is masked window by window, and only an event that
 * needs a mask is read again by the located Reader.
 */
export class SplitKeyMasker {
  private readonly buf: Buffer;
  private readonly streams = new Map<string, { pieces: Piece[]; length: number; changes: Map<number, string> }>();
  private at = 0;
  private phase: 'scan' | 'mask' | 'done' = 'scan';
  private queue: string[] = [];
  private window = 0;
  private readonly labels = new Set<string>();
  private out: SplitMaskResult | undefined;

  constructor(
    private readonly body: Uint8Array,
    private readonly redact: RedactOptions = {},
  ) {
    this.buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  }

  /** Works for about `budgetMs`; true when done (then `result()` holds the masks). */
  step(budgetMs = Infinity): boolean {
    const deadline = performance.now() + budgetMs;
    while (this.phase !== 'done') {
      if (this.phase === 'scan') this.scan(deadline);
      else this.maskWindow();
      if (performance.now() >= deadline) break;
    }
    if (this.phase === 'done') this.out ??= this.locate();
    return this.phase === 'done';
  }

  result(): SplitMaskResult {
    while (!this.step());
    return this.out!;
  }

  /** Each `data:` line holding JSON (events here carry one line of data), until the deadline. */
  private scan(deadline: number): void {
    const body = this.body;
    for (let n = 0; this.at < body.length; n++) {
      if (n === LINES_PER_LOOK) {
        if (performance.now() >= deadline) return;
        n = 0;
      }
      const at = this.at;
      let end = body.indexOf(0x0a, at);
      if (end < 0) end = body.length;
      this.at = end + 1;
      let lineEnd = end;
      if (lineEnd > at && body[lineEnd - 1] === 0x0d) lineEnd--;
      if (
        !(
          lineEnd - at > 5 &&
          body[at] === 0x64 &&
          body[at + 1] === 0x61 &&
          body[at + 2] === 0x74 &&
          body[at + 3] === 0x61 &&
          body[at + 4] === 0x3a
        )
      )
        continue;
      let v = at + 5;
      if (body[v] === 0x20) v++;
      if (body[v] !== 0x7b) continue;
      let ev: Json;
      try {
        ev = JSON.parse(this.buf.toString('utf8', v, lineEnd)) as Json;
      } catch {
        continue; // not JSON: nothing to decode on this line
      }
      deltasOf(ev).forEach(({ stream, value }, k) => {
        let st = this.streams.get(stream);
        if (!st) this.streams.set(stream, (st = { pieces: [], length: 0, changes: new Map() }));
        const text = textOf(value)!;
        st.pieces.push({ text, start: st.length, from: v, to: lineEnd, k });
        st.length += text.length;
      });
    }
    // A key split over events: one piece alone never holds it whole (the per-chunk pass took those).
    this.queue = [...this.streams].filter(([, st]) => st.pieces.length >= 2).map(([name]) => name);
    this.window = 0;
    this.phase = this.queue.length ? 'mask' : 'done';
  }

  /** Masks one window of the first queued stream's text, read with the context a pattern needs on either side. */
  private maskWindow(): void {
    const name = this.queue[0];
    const st = this.streams.get(name)!;
    const from = Math.max(0, this.window - MASK_CONTEXT);
    const to = Math.min(st.length, this.window + WINDOW + OVERLAP);
    const text = textBetween(st.pieces, from, to);
    const report: Redaction[] = [];
    const masked = maskSecrets(text, { patterns: this.redact.patterns, report }, `response ${name}`);
    if (masked !== text) {
      for (let u = 0; u < text.length; u++) if (masked.charCodeAt(u) !== text.charCodeAt(u)) st.changes.set(from + u, masked[u]);
      for (const r of report) this.labels.add(r.label);
    }
    this.window += WINDOW;
    if (this.window >= st.length) {
      this.queue.shift();
      this.window = 0;
      if (this.queue.length === 0) this.phase = 'done';
    }
  }

  /** Maps each masked character back to the bytes that carried it in its event's JSON string. */
  private locate(): SplitMaskResult {
    const patches = new Map<number, number>();
    const located = new Map<number, Str[]>();
    const strsOf = (p: Piece): Str | undefined => {
      let strs = located.get(p.from);
      if (!strs) {
        try {
          strs = deltasOf(new Reader(this.body, p.from, p.to).value()).map((d) => d.value as Str);
        } catch {
          strs = [];
        }
        located.set(p.from, strs);
      }
      return strs[p.k];
    };
    let keys = 0;
    const streams: string[] = [];
    for (const [name, st] of this.streams) {
      if (st.changes.size === 0) continue;
      const units = [...st.changes.keys()].sort((a, b) => a - b);
      let any = false;
      let last = -2;
      for (const unit of units) {
        const p = st.pieces[pieceAt(st.pieces, unit)];
        const str = strsOf(p);
        const k = unit - p.start;
        if (!str || str.s !== p.text) continue;
        const b = maskByte(st.changes.get(unit)!);
        let hit = false;
        for (let at = str.from[k]; at < str.to[k]; at++) {
          const next = at === str.from[k] ? b : 0x2a;
          if (this.body[at] !== next) patches.set(at, next), (hit = true);
        }
        if (!hit) continue;
        if (unit !== last + 1) keys++;
        last = unit;
        any = true;
      }
      if (any) streams.push(name);
    }
    const ranges: SplitMaskResult['ranges'] = [];
    const ats = [...patches.keys()].sort((a, b) => a - b);
    for (let i = 0; i < ats.length; ) {
      let j = i;
      while (j + 1 < ats.length && ats[j + 1] === ats[j] + 1) j++;
      ranges.push({ from: ats[i], to: ats[j] + 1, bytes: Uint8Array.from(ats.slice(i, j + 1), (at) => patches.get(at)!) });
      i = j + 1;
    }
    return { ranges, keys, labels: ranges.length ? [...this.labels] : [], streams };
  }
}

/** The piece holding stream unit `unit` (pieces are in order, none empty). */
function pieceAt(pieces: Piece[], unit: number): number {
  let lo = 0;
  let hi = pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (pieces[mid].start <= unit) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The joined text of units [from, to). */
function textBetween(pieces: Piece[], from: number, to: number): string {
  const parts: string[] = [];
  for (let i = pieceAt(pieces, from); i < pieces.length && pieces[i].start < to; i++) {
    const p = pieces[i];
    parts.push(p.text.slice(Math.max(0, from - p.start), to - p.start));
  }
  return parts.join('');
}

/** Masks a whole body at once (the body itself is left as it is); see SplitKeyMasker. */
export function maskSplitKeys(body: Uint8Array, redact: RedactOptions = {}): SplitMaskResult {
  return new SplitKeyMasker(body, redact).result();
}

/** Applies masks to a copy of the body (for callers that want the masked bytes). */
export function applyMasks(body: Uint8Array, ranges: SplitMaskResult['ranges']): Uint8Array {
  if (ranges.length === 0) return body;
  const out = Buffer.from(body);
  for (const r of ranges) out.set(r.bytes, r.from);
  return out;
}
