/**
 * The capture worker thread (./capture-thread.ts starts it): reading a body file of megabytes, parsing it and
 * running the checks, or searching it for keys split over SSE events, would stall the proxy's event loop, so other
 * streams' chunks would wait. The worker reads the file itself; only metadata and results cross threads.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { CapturedExchange } from '../model';
import { analyzeCaptured, outcomeOf } from './analysis';
import { readRegularFile } from './files';
import { decodeFrames } from './log';
import { searchSplitKeys, type SplitKeysJob } from './split-keys-body';

export type CaptureJob =
  /** The analysis of the exchange whose body file is `path`. */
  | { seq: number; kind: 'analyze'; x: CapturedExchange; path: string }
  /** The masks for keys split over SSE events in `job.path`. */
  | { seq: number; kind: 'split-keys'; job: SplitKeysJob };

function run(job: CaptureJob): unknown {
  if (job.kind === 'split-keys') {
    const file = readRegularFile(job.job.path, Infinity, job.job.from);
    return file && searchSplitKeys(file, job.job);
  }
  const file = readRegularFile(job.path);
  if (!file) return undefined;
  const { request, response, chunks } = decodeFrames(file);
  const full = request === undefined ? job.x : { ...job.x, requestBody: Buffer.from(request.buffer, request.byteOffset, request.byteLength).toString('utf8') };
  return outcomeOf(analyzeCaptured(full, response, chunks));
}

/**
 * This thread runs at a lower priority than the proxy's (Linux gives each thread its own nice value: /proc/thread-self
 * names this one's id), so on a busy machine a long job here yields the core to the forwarding path and its garbage
 * collector instead of competing with them. Elsewhere the job runs at the process's priority.
 */
function yieldToTheProxy(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0 && tid !== process.pid) setPriority(tid, Math.min(19, 10 + getOwnPriority()));
  } catch {
    // not Linux, or not allowed: the process's priority
  }
}

function getOwnPriority(): number {
  try {
    return getPriority();
  } catch {
    return 0;
  }
}

yieldToTheProxy();

parentPort?.on('message', (job: CaptureJob) => {
  try {
    parentPort!.postMessage({ seq: job.seq, result: run(job) });
  } catch (e) {
    parentPort!.postMessage({ seq: job.seq, error: (e as Error).message ?? String(e) });
  }
});
