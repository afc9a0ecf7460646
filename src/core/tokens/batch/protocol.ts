import type { DownloadProgress } from '../hub';
import type { SharedRanks } from '../rank-cache';
import type { BatchOptions } from './process';
import type { SummaryCounts } from './summary';

/**
 * Messages between the batch runner (run.ts) and its worker threads (worker.ts). The input and output bytes travel
 * as transferred ArrayBuffers (moved, not copied); the main thread never decodes, parses or encodes a line.
 */

export interface BatchWorkerData {
  options: BatchOptions;
  /**
   * Set when the worker starts through dist/tokens-batch-boot.js (./worker-boot.ts): the worker bundle it runs, and
   * the V8 code cache file it compiles that bundle from (./code-cache.ts; none without a data dir).
   */
  boot?: { bundle: string; codeCache?: string };
}

/** Sent to one booted worker once the run is done: write the code cache of what it has compiled. */
export interface CodeCacheRequest {
  saveCodeCache: true;
}

/** Rank tables the runner loaded once, in shared memory (./shared-ranks.ts): posted to each worker before any chunk. */
export interface RanksHandover {
  ranks: SharedRanks[];
}

/**
 * A run of whole input lines, raw bytes (`\n`-terminated; the input's last line may lack it); `seq` orders the
 * replies. The lines are consecutive in the input, or with `--shard K/N` every Nth one.
 */
export interface BatchChunk {
  seq: number;
  /** The number of the chunk's first line in the input (from 1). */
  firstLine: number;
  /** How far apart in the input the chunk's lines are (N with `--shard K/N`; default 1). */
  lineStep?: number;
  bytes: Uint8Array;
}

export type BatchWorkerReply =
  | {
      type: 'done';
      seq: number;
      /** The chunk's lines counted for the summary (blank ones too), merged by the runner in input order. */
      summary: SummaryCounts;
      /** The output lines of the chunk, UTF-8, each ending in `\n`. */
      out: Uint8Array;
      specforge?: Uint8Array;
    }
  | { type: 'progress'; progress: DownloadProgress }
  /** From a booted worker before anything else: whether it was compiled from the code cache. */
  | { type: 'code-cache'; loaded: boolean }
  /** The answer to a CodeCacheRequest (`error`: why the cache could not be written). */
  | { type: 'code-cache-saved'; error?: string }
  | { type: 'warning'; message: string };

/**
 * The chunk's lines (without `\n` / `\r\n`), decoded one at a time. Each line is a small string of its own: decoding
 * the whole chunk at once would make one large string that every line slices into, which outlives a young-generation
 * collection while the chunk is processed and is left to the slower old-generation collector (`\n` is never part of
 * a multi-byte UTF-8 sequence, so the text is the same).
 */
export function* chunkLines(chunk: BatchChunk): Generator<string> {
  const bytes = Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength);
  for (let start = 0; start < bytes.length; ) {
    const nl = bytes.indexOf(0x0a, start);
    const next = nl === -1 ? bytes.length : nl + 1;
    let end = nl === -1 ? bytes.length : nl;
    if (end > start && bytes[end - 1] === 0x0d) end--;
    yield bytes.toString('utf8', start, end);
    start = next;
  }
}

/**
 * Output lines written straight into bytes (each line `\n`-terminated), ready to transfer: no chunk-long string is
 * built, then encoded.
 */
export class LineBytes {
  // Never from Buffer's shared pool (its ArrayBuffer is transferred); allocated on the first line.
  private buf = Buffer.allocUnsafeSlow(0);
  private at = 0;

  add(line: string): void {
    if (this.at + line.length * 3 + 1 > this.buf.length) this.reserve(Buffer.byteLength(line) + 1);
    this.at += this.buf.write(line, this.at);
    this.buf[this.at++] = 0x0a;
  }

  get byteLength(): number {
    return this.at;
  }

  /** The bytes so far, on a buffer of their own (transferable). */
  bytes(): Uint8Array {
    return new Uint8Array(this.buf.buffer, 0, this.at);
  }

  private reserve(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(64 * 1024, this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }
}
