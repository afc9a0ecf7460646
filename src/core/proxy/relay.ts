/**
 * The forwarding path of one response. Per chunk it does only this: the bytes are appended to the capture (one
 * synchronous write for the chunks of one read), then written to the client, in the same tick: whatever the client
 * saw survives a crash. Everything else
 * (the served provider, the terminal event, analysis) is looked at once, when the stream ends.
 */
import type { ServerResponse } from 'node:http';
import type { ExchangeWriter } from '../capture/store';
import { decodingTee, type TeeLimits } from './decode';
import { sseErrorEvent } from './errors';
import { clientResponseHeaders, headerText } from './headers';
import { pinHonoured, servedProvider } from './openrouter';
import type { ResponseStage } from './stage';
import { ChunkTail, sawTerminalEvent } from './terminal';
import type { UpstreamResponse } from './upstream';

/** How much of the decoded response head is searched for the served provider. */
const HEAD_BYTES = 64 * 1024;

export interface Outcome {
  error?: string;
  incomplete?: boolean;
}

export interface RelayOptions {
  up: UpstreamResponse;
  res: ServerResponse;
  writer: ExchangeWriter;
  /** The provider pin the request asked for, to check against the served provider. */
  pin?: string[];
  /** Set once the client connection is gone: `client` (it closed) or `stopping` (Tokenscope is shutting down). */
  gone: () => 'client' | 'stopping' | undefined;
  /** The API the client speaks, for the error event that ends a stream the upstream left idle. */
  shape: { anthropic: boolean; responses: boolean };
  /** The idle gap (ms) after which the upstream is given up on; reported in the error. */
  idleTimeoutMs: number;
  /** Transforms the body on its way to the client (repair mode); the capture keeps the upstream's bytes. */
  stage?: ResponseStage;
  /** How far a compressed body is decoded for the capture (./decode.ts). */
  decodeLimits?: TeeLimits;
}

/** Streams the upstream response to the client, teeing a decoded copy into the capture; resolves with how it ended. */
export async function relay(o: RelayOptions): Promise<Outcome> {
  const { up, res, writer, stage } = o;
  const headers = up.headers;
  let bodyStarted = false;
  // What the capture gathered reaches the disk before the client could see a byte (the status too: a head sent alone
  // first writes its mark).
  const release = () => writer.uncork();
  try {
    res.writeHead(up.statusCode, stage ? stage.headers(clientResponseHeaders(headers)) : clientResponseHeaders(headers));
    // The head goes out with the first chunk when that is already here (one write, one wake-up for the client),
    // else on the next turn of the loop: a slow first token never holds the status back.
    setImmediate(() => {
      if (!bodyStarted && !res.destroyed && !res.writableEnded) release(), res.flushHeaders();
    });
  } catch {
    up.body.destroy();
    return { incomplete: true, error: 'the client closed the connection before the response started' };
  }
  writer.responseStarted(up.statusCode, headers, undefined, true);
  const genId = headerText(headers['x-generation-id']);
  if (genId) writer.annotate({ generationId: genId });

  let head = '';
  const tail = new ChunkTail();
  const tee = decodingTee(
    headerText(headers['content-encoding']),
    (bytes) => {
      if (head.length < HEAD_BYTES) head += Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
      tail.push(bytes);
      writer.chunk(bytes);
    },
    o.decodeLimits,
  );
  const body = up.body;
  // Chunks that arrive together (one read from the upstream socket: up to hundreds of small HTTP chunks) are
  // forwarded together, at the end of the current tick, as one piece: appended to the capture in one synchronous
  // disk write (one key scan, one frame), then written to the client in one write. The bytes are the same; only
  // the hop-by-hop chunk framing is coarser, and nothing waits: they all arrived in this tick.
  let batch: Buffer[] = [];
  // The capture's append comes first, in the same tick as the client write: a SIGKILL can land between any two
  // system calls, so only "on disk, then to the client" means whatever the client saw survives a crash.
  const forward = () => {
    if (batch.length === 0) return;
    const piece = batch.length === 1 ? batch[0] : Buffer.concat(batch);
    batch = [];
    // The capture gathers the piece's frame (with the status's mark, the first time). `res.write` hands the bytes to
    // the socket on a later turn of the tick queue (it corks the socket until then): `release`, queued first, writes
    // the frame before that. The `end` event, when the body ended in this read, comes before both: `ended` then
    // adds the end's mark and makes it all one write.
    writer.cork();
    tee.write(piece);
    process.nextTick(release);
    if (!res.write(stage ? stage.push(piece) : piece)) body.pause();
  };
  let received = 0;
  const outcome = await new Promise<Outcome>((resolve) => {
    res.on('drain', () => body.resume());
    body.on('data', (chunk: Buffer) => {
      bodyStarted = true;
      received += chunk.length;
      if (batch.push(chunk) === 1) process.nextTick(forward);
    });
    body.once('end', () => {
      forward();
      // The capture holds every byte and its row says "complete" before the client sees the end (decoded copies
      // finish in `tee.end()`): a kill after the client's last byte never leaves the exchange "interrupted".
      if (tee.identity && writer.ended) writer.ended();
      else release();
      res.end(stage?.end());
      resolve({});
    });
    body.once('error', (e: Error & { code?: string }) => {
      forward();
      stage?.abort?.();
      release();
      const gone = o.gone();
      if (gone) {
        res.destroy();
        return resolve(
          gone === 'stopping'
            ? { incomplete: true, error: `interrupted: Tokenscope stopped while the response was streaming, after ${received} bytes` }
            : { incomplete: true, error: `the client closed the connection after ${received} bytes` },
        );
      }
      if (e.code === 'UND_ERR_BODY_TIMEOUT') {
        const msg = `the upstream sent nothing for ${seconds(o.idleTimeoutMs)} mid-stream, after ${received} bytes; Tokenscope ended the response (idle timeout)`;
        // An SSE client gets an error event in its own API's shape; any other body can only be cut.
        if (/^text\/event-stream/i.test(headerText(headers['content-type']) ?? '') && !res.destroyed)
          res.end(sseErrorEvent(o.shape, 504, `Tokenscope: ${msg}`));
        else res.destroy();
        return resolve({ incomplete: true, error: msg });
      }
      // Give the client the same cut the upstream gave us: no clean end of the chunked body.
      res.destroy();
      resolve({ incomplete: true, error: `the upstream connection broke after ${received} bytes (${oneLine(e)})` });
    });
  });
  const { error: decodeError, notAnalysed } = await tee.end();
  if (notAnalysed) writer.annotate({ notAnalysed });
  // A client that closed right after the terminal event (Codex does, on `response.completed`) had the whole answer.
  const complete = outcome.incomplete && o.gone() === 'client' && sawTerminalEvent(tail.text());
  const served = servedProvider(head);
  if (served)
    writer.annotate({ servedProvider: served, ...(o.pin && { pin: { requested: o.pin, honoured: pinHonoured(o.pin, served) } }) });
  const final = complete ? {} : outcome;
  return { ...final, error: [final.error, decodeError].filter(Boolean).join('; ') || undefined };
}

export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** An error as one line: `CODE: message` (the cause's, when undici wraps it). */
export function oneLine(e: unknown): string {
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err?.cause?.code ?? err?.code;
  const msg = (err?.cause?.message ?? err?.message ?? String(e)).split('\n')[0];
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}
