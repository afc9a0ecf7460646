/**
 * A response body parsed as it is read, chunk by chunk (the capture store's body file a block at a time): the same
 * `ParsedResponse` as `parseResponseBody` on the whole body, in memory for what the response says rather than for the
 * body. An SSE stream's events are folded into the message as they come (the protocol's `StreamFold`) and none is
 * kept: `events` stays empty and `eventCount` says how many there were. A JSON document or plain text is gathered and
 * parsed whole, as `parseResponseBody` does (its value is the response itself).
 */
import type { ChunkTiming, ParsedResponse, Protocol, RawEvent } from '../model';
import { anthropicStreamFold } from './anthropic';
import { protocolFromPath, type StreamFold } from './common';
import { parseResponseBody, protocolOfEvent, SSE_FIELDS, type BodyHint } from './index';
import { chatStreamFold } from './openai-chat';
import { responsesStreamFold } from './responses';
import { sglangStreamFold } from './sglang';
import { SseReader } from './sse';

const FOLDS: Partial<Record<Protocol, () => StreamFold>> = {
  'openai-chat': chatStreamFold,
  'anthropic-messages': anthropicStreamFold,
  'openai-responses': responsesStreamFold,
  'sglang-generate': sglangStreamFold,
};

/** The longest SSE field name that opens a stream (`retry:`): this many bytes decide the framing. */
const FIELD_BYTES = Math.max(...SSE_FIELDS.map((f) => f.length));

/** Parses a body given as chunks with their arrival times (ms); a chunk's bytes must not change afterwards. Never throws. */
export function parseResponseChunks(
  chunks: Iterable<{ bytes: Uint8Array; t?: number }>,
  hint: Omit<BodyHint, 'chunks'> = {},
): ParsedResponse {
  const parser = new ChunkedParser(hint);
  for (const c of chunks) parser.push(c.bytes, c.t);
  return parser.end();
}

/** A body of `size` bytes held as chunks (with their arrival times), parsed whole. */
export function parseHeld(
  held: readonly { bytes: Uint8Array; t?: number }[],
  size: number,
  hint: Omit<BodyHint, 'chunks'>,
): ParsedResponse {
  const bytes = new Uint8Array(size);
  const chunks: ChunkTiming[] = [];
  let at = 0;
  for (const c of held) {
    bytes.set(c.bytes, at);
    if (c.t !== undefined) chunks.push({ t: c.t, offset: at, length: c.bytes.length });
    at += c.bytes.length;
  }
  return parseResponseBody(bytes, { ...hint, chunks: chunks.length ? chunks : undefined });
}

/**
 * The framing of a body of `size` bytes from the chunks held so far (`sseHead` on their first bytes): true SSE, false
 * parsed whole, undefined when more bytes must come first (`atEnd`: none will).
 */
export function heldFraming(
  held: readonly { bytes: Uint8Array }[],
  size: number,
  contentType: string | undefined,
  atEnd: boolean,
): boolean | undefined {
  const head = heldHead(held, size, FIELD_BYTES + 64);
  return sseHead(head, contentType, atEnd || size > head.length);
}

/** Up to `n` bytes of the start of a body of `size` bytes, from the chunks held so far. */
function heldHead(held: readonly { bytes: Uint8Array }[], size: number, n: number): Uint8Array {
  const out = new Uint8Array(Math.min(n, size));
  let at = 0;
  for (const c of held) {
    if (at >= out.length) break;
    const part = c.bytes.subarray(0, out.length - at);
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Whether a body opening with `head` is framed as SSE, as `parseResponseBody` frames it (an SSE field after a BOM
 * and whitespace, or an event-stream content type, and not JSON); undefined when `head` is too short to tell and
 * more may follow (`whole`: it is all there is, or all that decides).
 */
export function sseHead(head: Uint8Array, contentType: string | undefined, whole: boolean): boolean | undefined {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0a || head[i] === 0x0d)) i++;
  if (i + FIELD_BYTES > head.length && !whole) return undefined;
  const first = head[i];
  return (
    i < head.length &&
    first !== 0x7b /* { */ &&
    first !== 0x5b /* [ */ &&
    (SSE_FIELDS.some((f) => f.every((b, k) => head[i + k] === b)) || /text\/event-stream/i.test(contentType ?? ''))
  );
}

class ChunkedParser {
  /** `undecided` until the first bytes that are not whitespace say how the body is framed. */
  private mode: 'undecided' | 'whole' | 'sse' = 'undecided';
  /** The chunks held: all of them for a whole body, the first few until the framing is known. */
  private held: { bytes: Uint8Array; t?: number }[] = [];
  private size = 0;
  private readonly reader = new SseReader();
  private protocol: Protocol | undefined;
  private fold: StreamFold | undefined;
  /** Events before one says which protocol the stream speaks (usually none: the first data event says it). */
  private early: RawEvent[] = [];
  private count = 0;

  constructor(private readonly hint: Omit<BodyHint, 'chunks'>) {
    const known = hint.protocol && hint.protocol !== 'unknown' ? hint.protocol : protocolFromPath(hint.path);
    // Native text is the whole body decoded, markup and all: gathered whole.
    if (known === 'native-text') this.mode = 'whole';
    else if (known) this.start(known);
  }

  push(bytes: Uint8Array, t?: number): void {
    this.size += bytes.length;
    if (this.mode === 'sse') return this.events(this.reader.push(bytes, t));
    // Held as they are (a JSON body is gathered whole): a caller must not reuse a chunk's buffer.
    this.held.push({ bytes, t });
    if (this.mode === 'undecided') this.decide(false);
  }

  end(): ParsedResponse {
    if (this.mode === 'undecided') this.decide(true);
    if (this.mode === 'whole') return this.whole();
    this.events(this.reader.end());
    if (!this.fold) this.start('unknown');
    const res = this.fold!.end();
    res.protocol = this.protocol!;
    // The terminal event was due where the body ends.
    for (const issue of res.wireIssues) if (issue.code === 'no-terminal-event') issue.offset = this.size;
    res.eventCount = this.count;
    return res;
  }

  /** The framing, from the first bytes that are not a BOM or whitespace (as `parseResponseBody` frames a body). */
  private decide(atEnd: boolean): void {
    const sse = heldFraming(this.held, this.size, this.hint.contentType, atEnd);
    if (sse === undefined) return; // too few bytes to tell yet
    this.mode = sse ? 'sse' : 'whole';
    if (!sse) return;
    const held = this.held;
    this.held = [];
    for (const c of held) this.events(this.reader.push(c.bytes, c.t));
  }

  private events(events: RawEvent[]): void {
    for (const ev of events) {
      const i = this.count++;
      if (this.fold) this.fold.event(ev, i);
      else {
        this.early.push(ev);
        const protocol = protocolOfEvent(ev);
        if (protocol) this.start(protocol);
      }
    }
  }

  /** The protocol is known: the events so far are folded, and every later one as it comes. */
  private start(protocol: Protocol): void {
    this.protocol = protocol;
    // Unknown protocol: read it as Chat Completions (the most common), which still surfaces errors and [DONE].
    this.fold = (FOLDS[protocol] ?? chatStreamFold)();
    const early = this.early;
    this.early = [];
    const first = this.count - early.length;
    early.forEach((ev, k) => this.fold!.event(ev, first + k));
  }

  private whole(): ParsedResponse {
    const held = this.held;
    this.held = [];
    return parseHeld(held, this.size, this.hint);
  }
}
