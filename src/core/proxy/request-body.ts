/**
 * A request body streams to the upstream as it arrives, never held whole: a copy of at most `maxRecorded` bytes is
 * kept for the capture, and a larger body is forwarded but not recorded (the capture then says so: `overCap`).
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';

export interface RequestBody {
  /** What the upstream call sends; undefined when the request has no body. */
  stream: Readable | Buffer | undefined;
  /** The recorded copy once the client has sent it all (undefined: no body, or larger than `maxRecorded`). */
  done: Promise<Buffer | undefined>;
  /** The same, now: undefined while the body is still arriving. */
  now(): Buffer | undefined;
  /** Bytes received so far. */
  readonly size: number;
  /** Set once the body is known to be larger than `maxRecorded` (from its Content-Length, or as it arrives). */
  readonly overCap: boolean;
  /**
   * The body, when nothing has read it yet (the upstream call failed before it started sending) and the client has
   * sent all of it (it waits in the request's buffer); undefined otherwise. Reads it: call it only once the call is over.
   */
  unread(): Buffer | undefined;
}

export function requestBody(req: IncomingMessage, maxRecorded: number): RequestBody {
  // Without Content-Length or Transfer-Encoding an HTTP/1.1 request has no body (RFC 9112 §6.3): no need to wait for its end.
  const none = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
  if (none || req.headers['content-length'] === '0') {
    req.resume();
    const empty = Buffer.alloc(0);
    const hasBody = !none || (req.method !== 'GET' && req.method !== 'HEAD');
    return {
      stream: hasBody ? empty : undefined,
      done: Promise.resolve(undefined),
      now: () => undefined,
      size: 0,
      overCap: false,
      unread: () => undefined,
    };
  }
  // With a Content-Length (Node's parser delivers exactly that many bytes) the copy is one buffer of that size, filled
  // as the body arrives; a body declared larger than the cap is never copied at all.
  const declared = req.headers['transfer-encoding'] === undefined ? Number(req.headers['content-length']) : NaN;
  let overCap = declared > maxRecorded;
  let copy: Buffer | undefined = !overCap && declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
  let parts: Buffer[] | undefined = overCap || copy ? undefined : [];
  let size = 0;
  let finished: Buffer | undefined;
  let settle!: (b: Buffer | undefined) => void;
  const done = new Promise<Buffer | undefined>((r) => (settle = r));
  let started = false;
  async function* tee(): AsyncGenerator<Buffer> {
    started = true;
    try {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        const at = size;
        size += chunk.length;
        if (size > maxRecorded) (overCap = true), (parts = undefined), (copy = undefined);
        else if (copy) size <= copy.length ? chunk.copy(copy, at) : (copy = undefined);
        else parts?.push(chunk);
        yield chunk;
      }
      if (copy && size === copy.length) finished = copy;
      else if (parts && size > 0) finished = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    } finally {
      parts = undefined;
      copy = undefined;
      settle(finished);
    }
  }
  return {
    stream: Readable.from(tee(), { objectMode: false }),
    done,
    now: () => finished,
    get size() {
      return size;
    },
    get overCap() {
      return overCap;
    },
    unread() {
      if (started || overCap || !req.complete || req.destroyed) return undefined;
      const parts: Buffer[] = [];
      for (let c: Buffer | null; (c = req.read() as Buffer | null) !== null; ) parts.push(c);
      size = parts.reduce((n, c) => n + c.length, 0);
      return size > 0 && size <= maxRecorded ? Buffer.concat(parts) : undefined;
    },
  };
}
