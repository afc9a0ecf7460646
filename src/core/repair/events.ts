/**
 * SSE framing shared by the streamed repairs of every protocol: whole events cut from upstream reads, each event
 * split into its lines and data, and the quick test that tells a read which cannot start any markup.
 */
import type { Opener } from './channel';

/** Where the last complete event in `b` ends (after its blank line); 0 when none ends in it. */
export function lastBoundary(b: Buffer): number {
  const lf = b.lastIndexOf('\n\n');
  const crlf = b.lastIndexOf('\r\n\r\n');
  return Math.max(lf < 0 ? 0 : lf + 2, crlf < 0 ? 0 : crlf + 4);
}

/** Holds the unfinished event at the end of a read until its rest arrives; hands out whole events only. */
export class EventFramer {
  private tail: Buffer = Buffer.alloc(0);

  /** The whole events this read completes (possibly none). */
  push(chunk: Buffer): Buffer {
    const data = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const cut = lastBoundary(data);
    this.tail = cut === data.length ? Buffer.alloc(0) : Buffer.from(data.subarray(cut));
    return cut === 0 ? Buffer.alloc(0) : data.subarray(0, cut);
  }

  /** The unfinished event left at the end of the body, as it came. */
  end(): Buffer {
    const tail = this.tail;
    this.tail = Buffer.alloc(0);
    return tail;
  }
}

export interface SseEvent {
  /** The event as it came, separator included. */
  raw: string;
  /** Its line ending (`\n` or `\r\n`). */
  eol: string;
  /** Its lines other than `data:` (`event:`, `id:`, comments). */
  others: string[];
  /** Its data lines joined, or undefined when it has none. */
  data?: string;
}

/** The events of `text` (whole events), each keeping its own separator so untouched events go out as they came. */
export function splitEvents(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  const re = /\r\n\r\n|\n\n/g;
  let from = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const raw = text.slice(from, m.index + m[0].length);
    from = m.index + m[0].length;
    const eol = m[0] === '\r\n\r\n' ? '\r\n' : '\n';
    const lines = raw.slice(0, raw.length - 2 * eol.length).split(eol);
    const dataLines = lines.filter((l) => l.startsWith('data:'));
    out.push({
      raw,
      eol,
      others: lines.filter((l) => !l.startsWith('data:')),
      ...(dataLines.length > 0 && { data: dataLines.map((l) => l.slice(l.startsWith('data: ') ? 6 : 5)).join('\n') }),
    });
  }
  return out;
}

/**
 * A test for a read (as latin1) that could hold the start of an opener: one that fails it cannot start markup.
 * `<` never occurs in a JSON envelope except as its `\u003c` escape; `[` does, but only as `[{` or `[]` (an opener's
 * `[` is followed by text).
 */
export function openerTest(openers: Opener[]): (latin1: string) => boolean {
  const firsts = [...new Set(openers.map((o) => o.marker[0]))];
  const parts = firsts.map((c) => (c === '<' ? '<|\\\\u003c' : c === '[' ? '\\[(?![{\\]])' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  const re = parts.length ? new RegExp(parts.join('|'), 'i') : undefined;
  return (s) => (re ? re.test(s) : false);
}
