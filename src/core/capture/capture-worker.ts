/**
 * The capture worker thread (./capture-thread.ts starts it): reading a body file of megabytes, parsing it and
 * running the checks, or searching it for keys split over SSE events, would stall the proxy's event loop, so other
 * streams' chunks would wait. The worker reads the file itself; only metadata and results cross threads.
 */
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

parentPort?.on('message', (job: CaptureJob) => {
  try {
    parentPort!.postMessage({ seq: job.seq, result: run(job) });
  } catch (e) {
    parentPort!.postMessage({ seq: job.seq, error: (e as Error).message ?? String(e) });
  }
});
