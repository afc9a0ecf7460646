import type { DownloadProgress } from '../hub';
import type { BatchOptions, LineResult } from './process';

/** Messages between the batch runner (run.ts) and its worker threads (worker.ts). Everything is structured-cloneable. */

export interface BatchWorkerData {
  options: BatchOptions;
}

/** A run of consecutive input lines; `seq` orders the replies. */
export interface BatchChunk {
  seq: number;
  lines: { line: number; text: string }[];
}

export type BatchWorkerReply =
  | { type: 'done'; seq: number; results: LineResult[] }
  | { type: 'progress'; progress: DownloadProgress }
  | { type: 'warning'; message: string };
