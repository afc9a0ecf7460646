/**
 * Server-Sent Events reader (WHATWG `text/event-stream` parsing) that works on bytes, incrementally.
 *
 * Why bytes: the capture proxy sees network chunks that can end anywhere — inside a multi-byte UTF-8 character or
 * between the `\r` and `\n` of one line end — and every event must carry its byte offset in the raw body so views
 * can point at it. Line terminators are ASCII and never occur inside a UTF-8 sequence, so whole lines are cut on
 * bytes first and decoded afterwards; no text is ever decoded from half a character.
 *
 * Departures from the browser EventSource, on purpose (Tokenscope shows the wire, it does not hide it):
 * - comment lines become events (`comment: true`) instead of being dropped: `: OPENROUTER PROCESSING` matters
 *   when reading a stream's timing;
 * - an `event:` block without any `data:` line, and a `data:` line with an empty value, are still reported.
 */
import type { RawEvent } from '../model';

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;

/** Non-fatal: invalid UTF-8 becomes U+FFFD instead of throwing. */
const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/** Field names as bytes, compared without decoding. */
const DATA = [0x64, 0x61, 0x74, 0x61];
const EVENT = [0x65, 0x76, 0x65, 0x6e, 0x74];

/** True when `buf[from, nameEnd)` is the field name `name`. */
function fieldIs(buf: Uint8Array, from: number, nameEnd: number, name: number[]): boolean {
  if (nameEnd - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (buf[from + i] !== name[i]) return false;
  return true;
}

/**
 * A new event, built from an empty object rather than an object literal. V8 tracks a literal's allocation site and,
 * seeing its objects outlive a young-generation collection (a stream's events all do, until the parse returns),
 * starts allocating them straight in the old generation; from there each dead event keeps its young `data` string
 * alive through later collections, and a process that has parsed a few large streams spends as much time in the
 * garbage collector as in the parse. An empty object has no allocation site, so events stay short-lived garbage.
 */
function rawEvent(data: string, offset: number, comment?: true): RawEvent {
  const ev = {} as RawEvent;
  ev.data = data;
  if (comment) ev.comment = true;
  ev.offset = offset;
  return ev;
}

function decodeRange(buf: Uint8Array, from: number, to: number): string {
  return from < to ? utf8.decode(buf.subarray(from, to)) : '';
}

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Feed it chunks as they arrive; it returns the events each chunk completed. Call `end()` once after the last
 * chunk: it flushes a final line without a line end and an event without its closing blank line.
 */
export class SseReader {
  /** Absolute offset of the next byte pushed. */
  private pos = 0;
  /** Pieces of an unfinished line (copied: callers may reuse their buffers). */
  private partial: Uint8Array[] = [];
  private partialStart = 0;
  private partialT: number | undefined;
  /** The last chunk ended on `\r`: a `\n` opening the next chunk ends the same line. */
  private afterCR = false;
  private firstLine = true;

  // The event being assembled.
  private data: string | undefined;
  private moreData: string[] | undefined;
  private eventName: string | undefined;
  private eventStart = -1;
  private eventT: number | undefined;

  /**
   * @param chunk the next bytes of the body (a string is taken as its UTF-8 bytes)
   * @param t arrival time of this chunk (ms); an event gets the time of the chunk holding its first byte
   */
  push(chunk: Uint8Array | string, t?: number): RawEvent[] {
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    const out: RawEvent[] = [];
    const n = bytes.length;
    const base = this.pos;
    this.pos += n;
    let i = 0;
    if (n > 0 && this.afterCR) {
      this.afterCR = false;
      if (bytes[0] === LF) i = 1;
    }
    // Next LF / CR positions, searched natively and cached so a chunk is scanned once whatever its line count
    // (-2 = not searched yet, -1 = none left in this chunk).
    let nextLF = -2;
    let nextCR = -2;
    while (i < n) {
      if (nextLF !== -1 && nextLF < i) nextLF = bytes.indexOf(LF, i);
      if (nextCR !== -1 && nextCR < i) nextCR = bytes.indexOf(CR, i);
      let end = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      if (end === -1) {
        if (this.partial.length === 0) {
          this.partialStart = base + i;
          this.partialT = t;
        }
        // A real copy even of a Buffer, whose own `slice` is a view of memory the caller may reuse.
        this.partial.push(Uint8Array.prototype.slice.call(bytes, i));
        break;
      }
      if (this.partial.length > 0) {
        this.partial.push(bytes.subarray(i, end));
        const line = concat(this.partial);
        this.line(line, 0, line.length, this.partialStart, this.partialT, out);
        this.partial = [];
      } else {
        this.line(bytes, i, end, base + i, t, out);
      }
      if (bytes[end] === CR) {
        if (end + 1 === n) this.afterCR = true;
        else if (bytes[end + 1] === LF) end++;
      }
      i = end + 1;
    }
    return out;
  }

  /** The body ended: flush what is pending. */
  end(): RawEvent[] {
    const out: RawEvent[] = [];
    if (this.partial.length > 0) {
      const line = concat(this.partial);
      this.line(line, 0, line.length, this.partialStart, this.partialT, out);
      this.partial = [];
    }
    this.dispatch(out);
    this.afterCR = false;
    return out;
  }

  /**
   * The line `buf[from, to)` (its terminator excluded), which starts at absolute offset `start`. It is read in place:
   * only the values Tokenscope keeps are cut out and decoded, once per line of a megabyte stream.
   */
  private line(buf: Uint8Array, from: number, to: number, start: number, t: number | undefined, out: RawEvent[]): void {
    if (this.firstLine) {
      this.firstLine = false;
      if (to - from >= 3 && buf[from] === 0xef && buf[from + 1] === 0xbb && buf[from + 2] === 0xbf) {
        from += 3;
        start += 3;
      }
    }
    if (from === to) {
      this.dispatch(out);
      return;
    }
    if (buf[from] === COLON) {
      const text = decodeRange(buf, from + 1 < to && buf[from + 1] === SPACE ? from + 2 : from + 1, to);
      const ev = rawEvent(text, start, true);
      if (t !== undefined) ev.t = t;
      out.push(ev);
      return;
    }
    if (this.eventStart < 0) {
      this.eventStart = start;
      this.eventT = t;
    }
    // The field name ends at the first colon; a bare field name has an empty value.
    let colon = from;
    while (colon < to && buf[colon] !== COLON) colon++;
    let valueStart = colon + 1;
    if (valueStart < to && buf[valueStart] === SPACE) valueStart++;
    if (fieldIs(buf, from, colon, DATA)) {
      const value = decodeRange(buf, valueStart, to);
      if (this.data === undefined) this.data = value;
      else (this.moreData ??= []).push(value);
    } else if (fieldIs(buf, from, colon, EVENT)) {
      this.eventName = decodeRange(buf, valueStart, to);
    }
    // `id:`, `retry:` and unknown fields carry nothing Tokenscope reads.
  }

  private dispatch(out: RawEvent[]): void {
    if (this.data !== undefined || this.eventName !== undefined) {
      const data = this.moreData ? [this.data ?? '', ...this.moreData].join('\n') : (this.data ?? '');
      const ev = rawEvent(data, this.eventStart);
      if (this.eventName !== undefined) ev.event = this.eventName;
      if (this.eventT !== undefined) ev.t = this.eventT;
      out.push(ev);
    }
    this.data = undefined;
    this.moreData = undefined;
    this.eventName = undefined;
    this.eventStart = -1;
    this.eventT = undefined;
  }
}

/** A whole SSE body at once. */
export function parseSse(body: Uint8Array | string): RawEvent[] {
  const reader = new SseReader();
  const events = reader.push(body);
  for (const ev of reader.end()) events.push(ev);
  return events;
}
