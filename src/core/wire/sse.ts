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

function fieldIs(line: Uint8Array, nameEnd: number, name: number[]): boolean {
  if (nameEnd !== name.length) return false;
  for (let i = 0; i < nameEnd; i++) if (line[i] !== name[i]) return false;
  return true;
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
        this.partial.push(bytes.slice(i));
        break;
      }
      if (this.partial.length > 0) {
        this.partial.push(bytes.subarray(i, end));
        this.line(concat(this.partial), this.partialStart, this.partialT, out);
        this.partial = [];
      } else {
        this.line(bytes.subarray(i, end), base + i, t, out);
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
      this.line(concat(this.partial), this.partialStart, this.partialT, out);
      this.partial = [];
    }
    this.dispatch(out);
    this.afterCR = false;
    return out;
  }

  private line(line: Uint8Array, start: number, t: number | undefined, out: RawEvent[]): void {
    if (this.firstLine) {
      this.firstLine = false;
      if (line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) {
        line = line.subarray(3);
        start += 3;
      }
    }
    if (line.length === 0) {
      this.dispatch(out);
      return;
    }
    if (line[0] === COLON) {
      const text = utf8.decode(line.subarray(line[1] === SPACE ? 2 : 1));
      const ev: RawEvent = { data: text, comment: true, offset: start };
      if (t !== undefined) ev.t = t;
      out.push(ev);
      return;
    }
    if (this.eventStart < 0) {
      this.eventStart = start;
      this.eventT = t;
    }
    let colon = line.indexOf(COLON);
    if (colon < 0) colon = line.length; // a bare field name: empty value
    let valueStart = colon + 1;
    if (line[valueStart] === SPACE) valueStart++;
    if (fieldIs(line, colon, DATA)) {
      const value = valueStart < line.length ? utf8.decode(line.subarray(valueStart)) : '';
      if (this.data === undefined) this.data = value;
      else (this.moreData ??= []).push(value);
    } else if (fieldIs(line, colon, EVENT)) {
      this.eventName = valueStart < line.length ? utf8.decode(line.subarray(valueStart)) : '';
    }
    // `id:`, `retry:` and unknown fields carry nothing Tokenscope reads.
  }

  private dispatch(out: RawEvent[]): void {
    if (this.data !== undefined || this.eventName !== undefined) {
      const data = this.moreData ? [this.data ?? '', ...this.moreData].join('\n') : (this.data ?? '');
      const ev: RawEvent = { data, offset: this.eventStart };
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
