/**
 * Worker-thread entry of `tokens --batch` (bundled to dist/tokens-batch-worker.js): takes chunks of raw input lines,
 * decodes, parses and encodes them with its own tokenizers (loaded once for the worker's life), and sends back per
 * chunk the output bytes ready to write (transferred) and the chunk's summary counts (one small object, not one per
 * line), so the main thread only orders and writes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BatchProcessor } from './process';
import { chunkLines, type BatchChunk, type BatchWorkerData, type BatchWorkerReply } from './protocol';
import { BatchSummary } from './summary';

const port = parentPort;
if (!port) throw new Error('the batch worker must run in a worker thread');
const post = (m: BatchWorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const processor = new BatchProcessor((workerData as BatchWorkerData).options, {
  onProgress: (progress) => post({ type: 'progress', progress }),
  onWarning: (message) => post({ type: 'warning', message }),
});
const encoder = new TextEncoder();

// Chunks run one after another: the runner keeps two queued per worker so the next one is ready when this ends.
let queue = Promise.resolve();
port.on('message', (chunk: BatchChunk) => {
  queue = queue.then(async () => {
    const summary = new BatchSummary();
    let out = '';
    let sf = '';
    const lines = chunkLines(chunk);
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === '') {
        summary.blank++;
        continue;
      }
      const r = await processor.process(chunk.firstLine + i, lines[i]);
      summary.add(r);
      if (r.out !== undefined) out += r.out + '\n';
      if (r.specforge !== undefined) sf += r.specforge + '\n';
    }
    const outBytes = encoder.encode(out);
    const sfBytes = sf ? encoder.encode(sf) : undefined;
    post({ type: 'done', seq: chunk.seq, summary: summary.counts(), out: outBytes, ...(sfBytes && { specforge: sfBytes }) }, [outBytes.buffer as ArrayBuffer, ...(sfBytes ? [sfBytes.buffer as ArrayBuffer] : [])]);
  });
});
