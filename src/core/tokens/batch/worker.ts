/**
 * Worker-thread entry of `tokens --batch` (bundled to dist/tokens-batch-worker.js): takes chunks of raw input lines,
 * decodes, parses and encodes them with its own tokenizers (loaded once for the worker's life), and sends back per
 * chunk the output bytes ready to write (transferred) and the chunk's summary counts (one small object, not one per
 * line), so the main thread only orders and writes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { adoptSharedRanks } from '../rank-cache';
import { BatchProcessor } from './process';
import {
  chunkLines,
  LineBytes,
  type BatchChunk,
  type BatchWorkerData,
  type BatchWorkerReply,
  type CodeCacheRequest,
  type RanksHandover,
} from './protocol';
import { BatchSummary } from './summary';

const port = parentPort;
if (!port) throw new Error('the batch worker must run in a worker thread');
const post = (m: BatchWorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const processor = new BatchProcessor((workerData as BatchWorkerData).options, {
  onProgress: (progress) => post({ type: 'progress', progress }),
  onWarning: (message) => post({ type: 'warning', message }),
});

// Chunks run one after another: the runner keeps two queued per worker so the next one is ready when this ends.
let queue = Promise.resolve();
port.on('message', (chunk: BatchChunk | RanksHandover | CodeCacheRequest) => {
  // The runner's rank table comes first, before any chunk: the tokenizer is loaded on the first line, from it.
  if ('ranks' in chunk) return adoptSharedRanks(chunk.ranks);
  if (!('bytes' in chunk)) return; // for the worker's boot (./worker-boot.ts)
  queue = queue.then(async () => {
    const summary = new BatchSummary();
    const out = new LineBytes();
    const sf = new LineBytes();
    let line = chunk.firstLine;
    const step = chunk.lineStep ?? 1;
    for (const text of chunkLines(chunk)) {
      if (text.trim() === '') summary.blank++;
      else {
        const r = await processor.process(line, text);
        summary.add(r);
        if (r.out !== undefined) out.add(r.out);
        if (r.specforge !== undefined) sf.add(r.specforge);
      }
      line += step;
    }
    const [outBytes, sfBytes] = [out.bytes(), sf.byteLength ? sf.bytes() : undefined];
    post({ type: 'done', seq: chunk.seq, summary: summary.counts(), out: outBytes, ...(sfBytes && { specforge: sfBytes }) }, [
      outBytes.buffer as ArrayBuffer,
      ...(sfBytes ? [sfBytes.buffer as ArrayBuffer] : []),
    ]);
  });
});
