/**
 * A response stage (repair mode) on a WebSocket connection: the upstream's direction is read on the forwarding path
 * instead of piped raw. Each text message (one Responses event) is handed to the stage of the response it belongs to
 * as the SSE event the same response carries over HTTP (the same bytes the capture stores: ./ws-capture.ts), and
 * every event the stage lets out goes to the client as one unmasked text frame (FIN set). Control frames (ping, pong,
 * close) and binary messages pass as they came, in order; messages of a response no stage acts on (and those outside
 * any response) go out as they came too, each as one frame. The client's direction stays a raw pipe (./websocket.ts).
 *
 * Fragmented upstream messages are joined before the stage sees them (a ping between fragments goes out first). A
 * stage delivers its rest when the response's terminal event came; a response cut (the connection ended, the client
 * sent its next `response.create` first) only records what was delivered.
 */
import type { ExchangeWriter } from '../capture/store';
import type { ResponseStage } from './stage';
import type { WsCapture } from './ws-capture';
import { sseEvent, typeOf } from './ws-capture';
import { serverFrame, WsFrameReader, type WsMessage } from './ws-frames';

/** The response head a stage is asked about: the events of a response over WebSocket are its SSE stream. */
export const WS_STAGE_HEADERS = { 'content-type': 'text/event-stream' } as const;

export class WsServerRestage {
  /** Forwarding needs every message whole: the reader holds messages of any size (the capture keeps `maxCaptured`). */
  private readonly reader = new WsFrameReader(Number.MAX_SAFE_INTEGER);
  private readonly stages = new Map<ExchangeWriter, ResponseStage>();
  /** What a stage let out as its response ended, while the capture finished it: goes out after the terminal event. */
  private rest: Buffer[] = [];

  constructor(
    private readonly capture: WsCapture,
    private readonly maxCaptured: number,
  ) {}

  /** The stage acting on the response on `writer`. */
  attach(writer: ExchangeWriter, stage: ResponseStage): void {
    this.stages.set(writer, stage);
  }

  /** For the capture's `ending` hook: the response on `writer` finishes (`ended`: its terminal event came). */
  ending(writer: ExchangeWriter, ended: boolean): void {
    const stage = this.stages.get(writer);
    if (!stage) return;
    this.stages.delete(writer);
    if (ended) this.rest.push(...textFrames(stage.end()));
    else stage.abort?.();
  }

  /**
   * One read from the upstream: recorded in the capture, and the frames to write to the client now (possibly none).
   * `error` when the upstream broke the protocol: nothing from there on can be read or forwarded.
   */
  push(chunk: Buffer): { out: Buffer; error?: string } {
    const out: Buffer[] = [];
    for (const m of this.reader.push(chunk)) {
      if ('error' in m) {
        this.capture.unreadable('server', m.error);
        return { out: Buffer.concat(out), error: m.error };
      }
      out.push(...this.message(m));
    }
    return { out: out.length === 1 ? out[0] : Buffer.concat(out) };
  }

  private message(m: WsMessage): Buffer[] {
    const writer = this.capture.current;
    const stage = m.kind === 'text' && writer ? this.stages.get(writer) : undefined;
    let frames: Buffer[];
    if (stage) {
      const event = sseEvent(typeOf(m.data), m.data);
      const delivered = stage.push(event);
      // An event the stage let through unchanged goes out as it came (the upstream's own text).
      frames = delivered.equals(event) ? [serverFrame('text', m.data)] : textFrames(delivered);
    } else frames = [serverFrame(m.kind, m.data)];
    // The capture records the upstream's message (and finishes the response at its terminal event: the stage's rest).
    this.capture.fromServer(
      m.data.length > this.maxCaptured ? { kind: m.kind, data: m.data.subarray(0, this.maxCaptured), cutFrom: m.data.length } : m,
    );
    if (this.rest.length) frames.push(...this.rest.splice(0));
    return frames;
  }
}

/** SSE events as text frames, one per event with data (its `data:` lines joined); comments and names are dropped. */
export function textFrames(sse: Buffer): Buffer[] {
  if (sse.length === 0) return [];
  const frames: Buffer[] = [];
  for (const block of sse.toString('utf8').split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
    if (data.length) frames.push(serverFrame('text', Buffer.from(data.join('\n'))));
  }
  return frames;
}
