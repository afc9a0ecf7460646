/**
 * The capture keeps a decoded copy of compressed responses while the client gets the bytes exactly as sent.
 * Decoding runs on zlib's thread pool beside the forwarding, and tolerates a cut stream (sync flush).
 *
 * Two bodies are not decoded whole. One labelled with an encoding it does not have (`Content-Encoding: gzip` on plain
 * text) is kept as received, and the capture says the label was wrong. One that inflates past the capture's cap, or
 * far more than any API body does (a decompression bomb: 1 MB of gzip can hold a gigabyte), stops being decoded
 * there: the capture keeps the start, says it was not analysed, and no CPU goes into inflating the rest.
 */
import type { Transform } from 'node:stream';
import { constants, createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

export interface TeeLimits {
  /** The most decoded bytes the capture keeps (the store's per-body cap). */
  maxBytes: number;
  /** Decoded bytes per compressed byte beyond which a body past `ratioAfterBytes` stops being decoded. */
  maxRatio?: number;
  ratioAfterBytes?: number;
}

/** What decoding left to say, once the body ended. */
export interface TeeResult {
  /** The body could not be decoded (a wrong label, a corrupt stream): the exchange's error line. */
  error?: string;
  /** The body was not decoded whole (a decompression bomb): why it is not analysed. */
  notAnalysed?: string;
}

export interface BodyTee {
  /** Feeds one chunk exactly as received from the upstream. */
  write(chunk: Uint8Array): void;
  /** Resolves when every decoded byte has been delivered. */
  end(): Promise<TeeResult>;
  /** Whether bytes pass as they are (no decoder): each reached the sink by the time `write` returned. */
  readonly identity?: boolean;
}

/** Real API bodies (JSON, SSE) compress 5-30×; a repeated event stream maybe 200×. A bomb is thousands. */
const DEFAULT_MAX_RATIO = 1000;
const DEFAULT_RATIO_AFTER = 8 * 1024 * 1024;
/** Raw bytes held until the decoder proves the label right (its first output): a wrong label keeps them. */
const MAX_HELD = 8 * 1024 * 1024;

const MB = 1024 * 1024;
const mb = (n: number) => `${Math.round((n / MB) * 10) / 10} MB`;

/** A tee that passes decoded chunks to `sink`; identity (or an encoding it cannot decode) passes bytes as they are. */
export function decodingTee(
  contentEncoding: string | undefined,
  sink: (bytes: Uint8Array) => void,
  limits: TeeLimits = { maxBytes: 64 * MB },
): BodyTee {
  const enc = (contentEncoding ?? '').trim().toLowerCase();
  const z = makeDecoder(enc);
  if (!z) {
    return { write: sink, end: async () => ({}), identity: true };
  }
  const maxRatio = limits.maxRatio ?? DEFAULT_MAX_RATIO;
  const ratioAfter = limits.ratioAfterBytes ?? DEFAULT_RATIO_AFTER;
  let error: string | undefined;
  /** Why the decoder refused the body before its first output: the label is wrong. */
  let wrongLabel: string | undefined;
  let notAnalysed: string | undefined;
  let received = 0;
  /** The raw chunks so far, until the first decoded byte (undefined after it, or past MAX_HELD). */
  let held: Uint8Array[] | undefined = [];
  let heldBytes = 0;
  /** Set once the label proved wrong: the rest passes as received. */
  let raw = false;
  let compressed = 0;
  let decoded = 0;
  let stopped = false;
  let settle!: () => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  z.on('data', (d: Buffer) => {
    if (stopped) return;
    held = undefined;
    const room = limits.maxBytes - decoded;
    decoded += d.length;
    const overRatio = decoded > ratioAfter && decoded > maxRatio * compressed;
    if (decoded > limits.maxBytes || overRatio) {
      // Not one more byte is inflated: the decoder goes, and with it the CPU a bomb would cost.
      stopped = true;
      if (!overRatio && room > 0) sink(d.subarray(0, room));
      const why = overRatio
        ? `it inflates over ${maxRatio}× (${mb(decoded)} from ${mb(compressed)} of ${enc})`
        : `the capture keeps at most ${mb(limits.maxBytes)}`;
      notAnalysed = `not analysed: decompressed body over ${mb(overRatio ? decoded - d.length : limits.maxBytes)} (${why}); Tokenscope stopped decoding it, the client got every byte as sent`;
      z.destroy();
      settle();
      return;
    }
    sink(d);
  });
  z.once('end', () => settle());
  z.once('error', (e: Error) => {
    if (stopped) return;
    if (held) {
      // Not one byte decoded: the label is wrong. The capture keeps the body as it came.
      raw = true;
      for (const c of held) sink(c);
      wrongLabel = e.message;
      held = undefined;
    } else {
      error = `could not decode the ${enc} response for the capture after ${decoded} decoded bytes: ${e.message}`;
    }
    settle();
  });
  return {
    write: (chunk) => {
      received += chunk.length;
      if (raw) return sink(chunk);
      if (error || stopped) return;
      compressed += chunk.length;
      if (held) {
        held.push(chunk);
        heldBytes += chunk.length;
        if (heldBytes > MAX_HELD) held = undefined;
      }
      z.write(chunk);
    },
    end: async () => {
      if (!stopped && !error && !raw) z.end();
      await done;
      if (wrongLabel !== undefined)
        error = `the response is labelled Content-Encoding: ${enc} but is not ${enc} (${wrongLabel}); the capture keeps its ${received} bytes as received`;
      return { ...(error && { error }), ...(notAnalysed && { notAnalysed }) };
    },
  };
}

function makeDecoder(enc: string): Transform | undefined {
  const flush = { flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH };
  if (enc === 'gzip' || enc === 'x-gzip') return createGunzip(flush);
  if (enc === 'deflate') return createInflate(flush);
  if (enc === 'br')
    return createBrotliDecompress({ flush: constants.BROTLI_OPERATION_FLUSH, finishFlush: constants.BROTLI_OPERATION_FLUSH });
  return undefined;
}
