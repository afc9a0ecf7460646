/**
 * The analysis of a large exchange, on a worker thread (./analysis-thread.ts starts it): reading a body file of
 * megabytes, parsing its request and running the checks would stall the proxy's event loop, so other streams'
 * chunks would wait. The worker reads the file itself; only the exchange's metadata and the result cross threads.
 */
import { parentPort } from 'node:worker_threads';
import type { CapturedExchange } from '../model';
import { analyzeCaptured } from './analysis';
import { readRegularFile } from './files';
import { decodeFrames } from './log';

export interface AnalysisJob {
  seq: number;
  x: CapturedExchange;
  /** The exchange's body file. */
  path: string;
}

parentPort?.on('message', (job: AnalysisJob) => {
  try {
    const file = readRegularFile(job.path);
    if (!file) return parentPort!.postMessage({ seq: job.seq });
    const { request, response, chunks } = decodeFrames(file);
    const full = request === undefined ? job.x : { ...job.x, requestBody: Buffer.from(request.buffer, request.byteOffset, request.byteLength).toString('utf8') };
    parentPort!.postMessage({ seq: job.seq, result: analyzeCaptured(full, response, chunks) });
  } catch (e) {
    parentPort!.postMessage({ seq: job.seq, error: (e as Error).message ?? String(e) });
  }
});
