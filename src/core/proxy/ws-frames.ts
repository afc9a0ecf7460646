/**
 * A WebSocket frame reader (RFC 6455 §5) for the capture: fed the bytes of one direction of a connection in any
 * pieces, it hands back whole messages (fragments joined, client masks removed) and control frames (ping, pong,
 * close). It only reads: the proxy forwards the same bytes untouched, and this runs off the forwarding path on a copy
 * (except for the upstream's direction of a connection repair mode rewrites: ./ws-stage.ts re-frames what it reads).
 *
 * Compressed messages (RSV1, permessage-deflate) are inflated per message when they can be (an upstream that compresses
 * without context takeover); the proxy strips the extension from the client's offer (./websocket.ts), so a conforming
 * upstream never compresses. A message over `maxMessageBytes` is counted but not held: its first bytes are kept and
 * it is reported as cut.
 */
import { constants, inflateRawSync } from 'node:zlib';

export type WsOpcode = 'text' | 'binary' | 'close' | 'ping' | 'pong';

export interface WsMessage {
  kind: WsOpcode;
  /** The payload, unmasked (and inflated, for a compressed message that could be). */
  data: Buffer;
  /** The payload's full length, when only its first `data.length` bytes were kept (over `maxMessageBytes`). */
  cutFrom?: number;
  /** The message came compressed and could not be inflated: `data` holds the compressed bytes. */
  compressed?: boolean;
}

/** What the reader found that no conforming peer sends; the reader stops there (the bytes still pass through). */
export interface WsProtocolError {
  error: string;
}

const OPCODES: Record<number, WsOpcode | 'continuation'> = { 0: 'continuation', 1: 'text', 2: 'binary', 8: 'close', 9: 'ping', 10: 'pong' };

/** Reads one direction of a connection. */
export class WsFrameReader {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  /** The message being assembled from fragments. */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private messageBytes = 0;
  private messageKind: 'text' | 'binary' | undefined;
  private messageCompressed = false;
  /** Payload bytes of the current frame still to come, and its mask, while a frame is read in pieces. */
  private frame:
    | { left: number; mask: Buffer | undefined; maskAt: number; control: WsOpcode | undefined; fin: boolean; control_parts: Buffer[] }
    | undefined;
  private failed: string | undefined;

  constructor(private readonly maxMessageBytes = 64 * 1024 * 1024) {}

  /** Feeds bytes; returns the messages and control frames they completed, in order. */
  push(bytes: Buffer): (WsMessage | WsProtocolError)[] {
    const out: (WsMessage | WsProtocolError)[] = [];
    if (this.failed || bytes.length === 0) return out;
    this.buffered.push(bytes);
    this.bufferedBytes += bytes.length;
    for (;;) {
      if (this.frame) {
        if (this.bufferedBytes === 0 && this.frame.left > 0) break;
        this.payload(out);
        if (this.frame) break;
        continue;
      }
      const head = this.header();
      if (head === undefined) break;
      if ('error' in head) {
        this.failed = head.error;
        out.push(head);
        break;
      }
    }
    return out;
  }

  /** Reads a frame header when all of it is here; undefined when more bytes are needed. */
  private header(): { error: string } | { ok: true } | undefined {
    if (this.bufferedBytes < 2) return undefined;
    const first = this.peek(2);
    const b0 = first[0];
    const b1 = first[1];
    const masked = (b1 & 0x80) !== 0;
    let len = b1 & 0x7f;
    const extra = (len === 126 ? 2 : len === 127 ? 8 : 0) + (masked ? 4 : 0);
    if (this.bufferedBytes < 2 + extra) return undefined;
    const h = this.take(2 + extra);
    let at = 2;
    if (len === 126) (len = h.readUInt16BE(2)), (at = 4);
    else if (len === 127) {
      const big = h.readBigUInt64BE(2);
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) return { error: `a frame declares ${big} bytes, more than any real message` };
      len = Number(big);
      at = 10;
    }
    const mask = masked ? Buffer.from(h.subarray(at, at + 4)) : undefined;
    const fin = (b0 & 0x80) !== 0;
    const rsv1 = (b0 & 0x40) !== 0;
    const op = OPCODES[b0 & 0x0f];
    if (op === undefined) return { error: `a frame has the reserved opcode ${b0 & 0x0f}` };
    if (op === 'close' || op === 'ping' || op === 'pong') {
      if (!fin || len > 125) return { error: `a ${op} frame is fragmented or over 125 bytes` };
      this.frame = { left: len, mask, maskAt: 0, control: op, fin, control_parts: [] };
      return { ok: true };
    }
    if (op === 'continuation') {
      if (!this.messageKind) return { error: 'a continuation frame comes with no message begun' };
    } else {
      if (this.messageKind) return { error: 'a new message begins before the previous one ended' };
      this.messageKind = op;
      this.messageCompressed = rsv1;
      this.parts = [];
      this.partsBytes = 0;
      this.messageBytes = 0;
    }
    this.frame = { left: len, mask, maskAt: 0, control: undefined, fin, control_parts: [] };
    return { ok: true };
  }

  /** Consumes what is here of the current frame's payload; ends the frame (and maybe a message) when it is all here. */
  private payload(out: (WsMessage | WsProtocolError)[]): void {
    const f = this.frame!;
    while (f.left > 0 && this.bufferedBytes > 0) {
      const piece = this.takeUpTo(f.left);
      f.left -= piece.length;
      const plain = f.mask ? unmask(piece, f.mask, f.maskAt) : piece;
      f.maskAt += piece.length;
      if (f.control) f.control_parts.push(plain);
      else this.keep(plain);
    }
    if (f.left > 0) return;
    this.frame = undefined;
    if (f.control) {
      out.push({ kind: f.control, data: Buffer.concat(f.control_parts) });
      return;
    }
    if (!f.fin) return;
    const kind = this.messageKind!;
    let data: Buffer = Buffer.concat(this.parts);
    const total = this.messageBytes;
    const message: WsMessage = { kind, data };
    if (total > data.length) message.cutFrom = total;
    if (this.messageCompressed) {
      const inflated = total > data.length ? undefined : inflate(data, this.maxMessageBytes);
      if (inflated) data = message.data = inflated;
      else message.compressed = true;
    }
    this.messageKind = undefined;
    this.parts = [];
    this.partsBytes = 0;
    out.push(message);
  }

  /** Keeps a message's bytes up to the cap; past it they are only counted. */
  private keep(bytes: Buffer): void {
    this.messageBytes += bytes.length;
    const room = this.maxMessageBytes - this.partsBytes;
    if (room <= 0) return;
    const kept = bytes.length > room ? bytes.subarray(0, room) : bytes;
    // The reader's pieces are slices of buffers the caller may reuse: a message held across reads gets its own copy.
    this.parts.push(Buffer.from(kept));
    this.partsBytes += kept.length;
  }

  private peek(n: number): Buffer {
    if (this.buffered[0].length >= n) return this.buffered[0];
    const all = Buffer.concat(this.buffered);
    this.buffered = [all];
    return all;
  }

  private take(n: number): Buffer {
    const b = this.peek(n);
    const out = b.subarray(0, n);
    if (b.length === n) this.buffered.shift();
    else this.buffered[0] = b.subarray(n);
    this.bufferedBytes -= n;
    return out;
  }

  private takeUpTo(n: number): Buffer {
    const b = this.buffered[0];
    if (b.length <= n) {
      this.buffered.shift();
      this.bufferedBytes -= b.length;
      return b;
    }
    this.buffered[0] = b.subarray(n);
    this.bufferedBytes -= n;
    return b.subarray(0, n);
  }
}

function unmask(bytes: Buffer, mask: Buffer, at: number): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = bytes[i] ^ mask[(at + i) & 3];
  return out;
}

const DEFLATE_TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/** One permessage-deflate message inflated on its own (RFC 7692 §7.2.2); undefined when it needs an earlier context. */
function inflate(data: Buffer, maxBytes: number): Buffer | undefined {
  try {
    // The sender flushed, not finished, the stream (§7.2.1): it is read to its flush point.
    return inflateRawSync(Buffer.concat([data, DEFLATE_TAIL]), { maxOutputLength: maxBytes, finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    return undefined;
  }
}

/** A close frame's payload as text: `1000` or `1000 reason`. */
export function closeText(data: Buffer): string {
  if (data.length < 2) return '';
  const reason = data.subarray(2).toString('utf8');
  return reason ? `${data.readUInt16BE(0)} ${reason}` : String(data.readUInt16BE(0));
}

const OPCODE_BITS: Record<WsOpcode, number> = { text: 1, binary: 2, close: 8, ping: 9, pong: 10 };

/**
 * One whole frame as a server sends it (RFC 6455 §5.2): FIN set, no RSV bits, unmasked, the payload length in its
 * shortest form (7 bits, 16 bits after 126, 64 bits after 127). Control frames carry at most 125 bytes (a reader
 * only hands those on).
 */
export function serverFrame(kind: WsOpcode, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.alloc(2) : len < 0x10000 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | OPCODE_BITS[kind];
  if (len < 126) head[1] = len;
  else if (len < 0x10000) (head[1] = 126), head.writeUInt16BE(len, 2);
  else (head[1] = 127), head.writeBigUInt64BE(BigInt(len), 2);
  return Buffer.concat([head, payload]);
}
