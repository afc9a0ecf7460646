/**
 * The capture keeps a decoded copy of compressed responses while the client gets the bytes exactly as sent.
 * Decoding runs on zlib's thread pool beside the forwarding, and tolerates a cut stream (sync flush).
 */
import type { Transform } from 'node:stream';
import { constants, createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

export interface BodyTee {
  /** Feeds one chunk exactly as received from the upstream. */
  write(chunk: Uint8Array): void;
  /** Resolves when every decoded byte has been delivered; with a one-line error when decoding failed. */
  end(): Promise<string | undefined>;
  /** Whether bytes pass as they are (no decoder): each reached the sink by the time `write` returned. */
  readonly identity?: boolean;
}

/** A tee that passes decoded chunks to `sink`; identity (or an encoding it cannot decode) passes bytes as they are. */
export function decodingTee(contentEncoding: string | undefined, sink: (bytes: Uint8Array) => void): BodyTee {
  const enc = (contentEncoding ?? '').trim().toLowerCase();
  const z = makeDecoder(enc);
  if (!z) {
    return { write: sink, end: async () => undefined, identity: true };
  }
  let error: string | undefined;
  z.on('data', (d: Buffer) => sink(d));
  const done = new Promise<void>((resolve) => {
    z.once('end', resolve);
    z.once('error', (e: Error) => {
      error = `could not decode the ${enc} response for the capture: ${e.message}`;
      resolve();
    });
  });
  return {
    write: (chunk) => {
      if (!error) z.write(chunk);
    },
    end: async () => {
      z.end();
      await done;
      return error;
    },
  };
}

function makeDecoder(enc: string): Transform | undefined {
  const flush = { flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH };
  if (enc === 'gzip' || enc === 'x-gzip') return createGunzip(flush);
  if (enc === 'deflate') return createInflate(flush);
  if (enc === 'br') return createBrotliDecompress({ flush: constants.BROTLI_OPERATION_FLUSH, finishFlush: constants.BROTLI_OPERATION_FLUSH });
  return undefined;
}
