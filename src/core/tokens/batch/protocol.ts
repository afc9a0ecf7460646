import type { DownloadProgress } from '../hub';
import type { BatchOptions } from './process';
import type { SummaryCounts } from './summary';

/**
 * Messages between the batch runner (run.ts) and its worker threads (worker.ts). The input and output bytes travel
 * as transferred ArrayBuffers (moved, not copied); the main thread never decodes, parses or encodes a line.
 */

export interface BatchWorkerData {
  options: BatchOptions;
}

/** A run of consecutive whole input lines, raw bytes (`\n`-terminated; the file's last line may lack it); `seq` orders the replies. */
export interface BatchChunk {
  seq: number;
  /** The number of the chunk's first line in the file (from 1). */
  firstLine: number;
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
  | { type: 'warning'; message: string };

/** The chunk's lines (without `\n` / `\r\n`), decoded as the single-line reader did. */
export function chunkLines(chunk: BatchChunk): string[] {
  const text = Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength).toString('utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}
