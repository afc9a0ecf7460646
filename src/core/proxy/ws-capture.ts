/**
 * What a WebSocket connection (an OpenAI Responses client in WebSocket mode: Codex) leaves in the capture store. One
 * connection carries many responses, one after another: each `response.create` the client sends begins one exchange
 * (its request body is that message, as sent), and the server's events that follow are that exchange's response, up
 * to the response's terminal event (`response.completed`, `response.failed`, `response.incomplete`, `error`).
 *
 * The events are stored as the SSE stream of the same response over HTTP would carry them (`event: <type>` and a
 * `data:` line per line of the message, then a blank line), so `show`, `lint`, the split-key masking and every
 * analysis read a WebSocket exchange exactly as they read a streamed one. Whatever else crosses the connection is
 * kept in the same stream as SSE comments, which readers skip: the client's other messages (`: client> …`), pings,
 * pongs and the close (`: close 1000 …`), a binary message (its size), a message cut at the capture's cap.
 *
 * A message that comes while no response is open (before the first `response.create`, after a terminal event) opens
 * an exchange of its own, without a request body, that ends (complete) at the next `response.create` or the
 * connection's end; pings, pongs and the close between responses are connection upkeep and open none. A response
 * open when the connection ends is finished then, marked incomplete.
 */
import type { ExchangeWriter } from '../capture/store';
import { closeText, type WsMessage } from './ws-frames';

/** The events that end one response. */
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete', 'response.cancelled', 'error']);

/** Control frames: kept in the exchange open when they come; between responses they are connection upkeep. */
const CONTROL = new Set(['ping', 'pong', 'close']);

/** An event name safe to put on an SSE `event:` line. */
const EVENT_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface WsCaptureHost {
  /** Begins the exchange for the connection's `index`-th response (1-based), with the request message if any. */
  begin(index: number, requestBody: Buffer | undefined): ExchangeWriter;
  /** Records the response's start on `writer` (the upgrade's 101): called before its first bytes, or at its end. */
  respond(writer: ExchangeWriter): void;
  /** A finished exchange, as stored. */
  finished(done: Promise<unknown>): void;
  /** The exchange on `writer` is about to finish: `ended` when its response's terminal event came (see ./ws-stage.ts). */
  ending?(writer: ExchangeWriter, ended: boolean): void;
}

export class WsCapture {
  private writer: ExchangeWriter | undefined;
  private index = 0;
  /** The open exchange saw its response's terminal event. */
  private ended = false;
  /** The open exchange's start is recorded (its time to first byte: from the request to the first event). */
  private responded = false;
  /** The open exchange began with a response.create (not with a message outside any response). */
  private requested = false;

  constructor(private readonly host: WsCaptureHost) {}

  /** The exchange open now (the one the server's next message belongs to), if any. */
  get current(): ExchangeWriter | undefined {
    return this.writer;
  }

  /** A message or control frame the client sent. */
  fromClient(m: WsMessage): void {
    if (m.kind === 'text' && typeOf(m.data) === 'response.create') {
      this.finishOpen({ incomplete: true, error: 'the client sent the next response.create before this response ended' });
      // A request over the capture's cap is not kept (its start alone is no JSON); its size is.
      this.open(m.cutFrom ? undefined : m.data, true);
      if (m.cutFrom)
        this.writer!.annotate({
          requestNotKept: {
            bytes: m.cutFrom,
            why: `the response.create message is over the ${Math.round(m.data.length / 1024 / 1024)} MB Tokenscope records of a message`,
          },
        });
      return;
    }
    this.write(describe(m, 'client'), !CONTROL.has(m.kind));
  }

  /** A message or control frame the upstream sent. */
  fromServer(m: WsMessage): void {
    if (m.kind !== 'text' || m.cutFrom || m.compressed) return this.write(describe(m, 'server'), !CONTROL.has(m.kind));
    const type = typeOf(m.data);
    this.write(sseEvent(type, m.data));
    if (type !== undefined && TERMINAL.has(type) && this.writer) {
      this.ended = true;
      this.writer.ended?.();
      this.finishOpen({});
    }
  }

  /** A protocol error in one direction: noted once; the bytes still pass, but are no longer read. */
  unreadable(side: 'client' | 'server', error: string): void {
    this.write(Buffer.from(`: ${side} frames unreadable from here: ${oneLine(error)}\n\n`), false);
  }

  /** The connection ended: the open exchange is finished (incomplete, with `error`, unless its response had ended). */
  closed(error: string | undefined): void {
    this.finishOpen(error ? { incomplete: true, error } : {});
  }

  private open(requestBody: Buffer | undefined, requested: boolean): void {
    this.index++;
    this.ended = false;
    this.responded = false;
    this.requested = requested;
    this.writer = this.host.begin(this.index, requestBody);
  }

  /** Adds to the open exchange; with `opens`, a message that comes while none is open begins one. */
  private write(bytes: Buffer, opens = true): void {
    if (!this.writer) {
      if (!opens) return;
      this.open(undefined, false);
    }
    if (!this.responded) (this.responded = true), this.host.respond(this.writer!);
    this.writer!.chunk(bytes);
  }

  private finishOpen(outcome: { incomplete?: boolean; error?: string }): void {
    const w = this.writer;
    if (!w) return;
    this.writer = undefined;
    if (!this.responded) (this.responded = true), this.host.respond(w);
    this.host.ending?.(w, this.ended);
    // Messages outside any response were all there was to them: only a response can be cut.
    this.host.finished(w.finish(this.ended || !this.requested ? {} : outcome));
  }
}

/** The `type` of a JSON message (looked for in its first bytes first: a delta event is parsed whole only when needed). */
export function typeOf(data: Buffer): string | undefined {
  const head = /^\s*\{\s*"type"\s*:\s*"([^"\\]{1,128})"/.exec(data.subarray(0, 256).toString('utf8'));
  if (head) return head[1];
  // A message too large to parse at every turn is judged by its first key alone.
  if (data.length > 1024 * 1024) return undefined;
  try {
    const v = JSON.parse(data.toString('utf8')) as { type?: unknown };
    return v && typeof v === 'object' && typeof v.type === 'string' ? v.type : undefined;
  } catch {
    return undefined;
  }
}

/** A text message as the SSE event that would carry it over HTTP. */
export function sseEvent(type: string | undefined, data: Buffer): Buffer {
  const text = data.toString('utf8');
  const head = type !== undefined && EVENT_NAME.test(type) ? `event: ${type}\n` : '';
  return Buffer.from(`${head}data: ${text.split(/\r\n|\r|\n/).join('\ndata: ')}\n\n`);
}

/** Anything but a whole server text message, as SSE comment lines. */
function describe(m: WsMessage, side: 'client' | 'server'): Buffer {
  const who = side === 'client' ? 'client' : 'server';
  switch (m.kind) {
    case 'ping':
    case 'pong':
      return Buffer.from(`: ${who} ${m.kind}${m.data.length ? ` (${m.data.length} bytes)` : ''}\n\n`);
    case 'close':
      return Buffer.from(`: ${who} close${m.data.length ? ` ${oneLine(closeText(m.data))}` : ''}\n\n`);
    case 'binary':
      return Buffer.from(`: ${who} binary message, ${m.cutFrom ?? m.data.length} bytes\n\n`);
    default: {
      const notes = [
        m.cutFrom ? `message of ${m.cutFrom} bytes, the first ${m.data.length} kept` : '',
        m.compressed ? 'compressed message, not decoded' : '',
      ].filter(Boolean);
      const note = notes.length ? `: ${who} ${notes.join('; ')}\n` : '';
      if (m.compressed) return Buffer.from(`${note}\n`);
      if (side === 'server')
        return Buffer.from(
          `${note}data: ${m.data
            .toString('utf8')
            .split(/\r\n|\r|\n/)
            .join('\ndata: ')}\n\n`,
        );
      return Buffer.from(
        `${note}: client> ${m.data
          .toString('utf8')
          .split(/\r\n|\r|\n/)
          .join('\n: client> ')}\n\n`,
      );
    }
  }
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ');
}
