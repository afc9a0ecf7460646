/**
 * Worker-thread entry of `tokens --batch` (bundled to dist/tokens-batch-worker.js): processes chunks of lines with
 * its own tokenizers (loaded once for the worker's life) and sends the results back per chunk.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BatchProcessor } from './process';
import type { BatchChunk, BatchWorkerData, BatchWorkerReply } from './protocol';

const port = parentPort;
if (!port) throw new Error('the batch worker must run in a worker thread');
const post = (m: BatchWorkerReply) => port.postMessage(m);
const processor = new BatchProcessor((workerData as BatchWorkerData).options, {
  onProgress: (progress) => post({ type: 'progress', progress }),
  onWarning: (message) => post({ type: 'warning', message }),
});

// Chunks run one after another: the runner keeps two queued per worker so the next one is ready when this ends.
let queue = Promise.resolve();
port.on('message', (chunk: BatchChunk) => {
  queue = queue.then(async () => {
    const results = [];
    for (const l of chunk.lines) results.push(await processor.process(l.line, l.text));
    post({ type: 'done', seq: chunk.seq, results });
  });
});
