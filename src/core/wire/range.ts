/**
 * One range of a response's wire events, read from the body's chunks as they come (the capture store's body file a
 * block at a time): the events [from, from + count) exactly as `parseResponseBody` lists them in `events`, holding
 * only those. An SSE stream is cut into events as it is read and every event outside the range is let go at once, so
 * the last page of a 200,000-event stream costs the memory of one page, not of the stream. A body that is not SSE
 * (a JSON document, plain text, SGLang's NUL-delimited chunks) is gathered and parsed whole, as the view parses it.
 */
import type { RawEvent } from '../model';
import type { BodyHint } from './index';
import { protocolFromPath } from './common';
import { heldFraming, parseHeld } from './chunked';
import { SseReader } from './sse';

export interface WireRange {
  /** The events of the range that exist, in order (fewer than asked for at the end of the body; none past it). */
  events: RawEvent[];
  /** The time of the last event before the range that has one: the first event's gap is measured from it. */
  timeBefore?: number;
  /** How many events the body has; set when the read went to the body's end (a range that reaches it always does). */
  total?: number;
}

/** Reads one range from chunks pushed in order; `push` says when the range is full and the rest need not be read. */
export class WireRangeReader {
  private mode: 'undecided' | 'whole' | 'sse' = 'undecided';
  /** The chunks held: all of them for a whole body, the first few until the framing is known. */
  private held: { bytes: Uint8Array; t?: number }[] = [];
  private size = 0;
  private readonly reader = new SseReader();
  private index = 0;
  private readonly events: RawEvent[] = [];
  private timeBefore: number | undefined;
  private full = false;

  constructor(
    private readonly from: number,
    private readonly count: number,
    private readonly hint: Omit<BodyHint, 'chunks'> = {},
  ) {
    const known = hint.protocol && hint.protocol !== 'unknown' ? hint.protocol : protocolFromPath(hint.path);
    // Native text is the whole body decoded, markup and all: one event, gathered whole.
    if (known === 'native-text') this.mode = 'whole';
  }

  /** The next chunk (its bytes must not change afterwards). True once the range is full: stop reading. */
  push(bytes: Uint8Array, t?: number): boolean {
    if (this.full) return true;
    this.size += bytes.length;
    if (this.mode === 'sse') return this.take(this.reader.push(bytes, t));
    this.held.push({ bytes, t });
    if (this.mode === 'undecided') this.decide(false);
    return this.full;
  }

  /** The range. A reader that stopped early (the range was full) does not know the total. */
  end(): WireRange {
    if (this.mode === 'undecided') this.decide(true);
    if (this.mode === 'whole') return this.whole();
    if (!this.full) this.take(this.reader.end());
    return { events: this.events, timeBefore: this.timeBefore, ...(!this.full && { total: this.index }) };
  }

  private take(events: RawEvent[]): boolean {
    for (const ev of events) {
      const i = this.index++;
      if (i < this.from) {
        if (ev.t !== undefined) this.timeBefore = ev.t;
      } else if (i < this.from + this.count) this.events.push(ev);
      else {
        this.full = true;
        break;
      }
    }
    return this.full;
  }

  /** The framing, from the first bytes that are not a BOM or whitespace (as `parseResponseBody` frames a body). */
  private decide(atEnd: boolean): void {
    const sse = heldFraming(this.held, this.size, this.hint.contentType, atEnd);
    if (sse === undefined) return;
    this.mode = sse ? 'sse' : 'whole';
    if (!sse) return;
    const held = this.held;
    this.held = [];
    for (const c of held) if (this.take(this.reader.push(c.bytes, c.t))) return;
  }

  private whole(): WireRange {
    const held = this.held;
    this.held = [];
    const all = parseHeld(held, this.size, this.hint).events;
    let timeBefore: number | undefined;
    for (let i = 0; i < Math.min(this.from, all.length); i++) if (all[i].t !== undefined) timeBefore = all[i].t;
    return { events: all.slice(this.from, this.from + this.count), timeBefore, total: all.length };
  }
}

/** The events [from, from + count) of a body given as chunks with their arrival times (ms). Never throws on any bytes. */
export function wireEventRange(
  chunks: Iterable<{ bytes: Uint8Array; t?: number }>,
  from: number,
  count: number,
  hint: Omit<BodyHint, 'chunks'> = {},
): WireRange {
  const r = new WireRangeReader(from, count, hint);
  for (const c of chunks) if (r.push(c.bytes, c.t)) break;
  return r.end();
}
