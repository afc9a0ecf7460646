import type { DownloadProgress } from '../hub';
import type { BatchOptions, LineResult } from './process';

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

/** What the summary needs of a line (its output is in the reply's bytes). */
export type LineOutcome = Pick<LineResult, 'line' | 'stats' | 'error'>;

export type BatchWorkerReply =
  | {
      type: 'done';
      seq: number;
      /** Blank lines in the chunk (no output, no outcome). */
      blank: number;
      outcomes: LineOutcome[];
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
