/**
 * A batch worker for the runner's tests (bundled by them with esbuild): it speaks the protocol of
 * src/core/tokens/batch/worker.ts but, instead of tokenizing, writes each line back as `{"line","text"}` and counts it
 * in the summary (a line starting with `bad` is a bad line; the first character is the line's dataset, the second its
 * family, the third a rule). So the runner's reading, sharding, ordering and writing are tested byte for byte,
 * quickly, without a tokenizer.
 */
import { parentPort } from 'node:worker_threads';
import { chunkLines, LineBytes, type BatchChunk, type BatchWorkerReply } from '../../../src/core/tokens/batch/protocol';
import { BatchSummary } from '../../../src/core/tokens/batch/summary';

const port = parentPort!;
port.on('message', (chunk: BatchChunk | { ranks: unknown }) => {
  if ('ranks' in chunk) return; // a shared rank table: nothing to tokenize here
  const summary = new BatchSummary();
  const out = new LineBytes();
  let line = chunk.firstLine;
  for (const text of chunkLines(chunk)) {
    if (text.trim() === '') summary.blank++;
    else if (text.startsWith('bad')) summary.add({ line, error: `bad: ${text.slice(0, 12)}` });
    else {
      out.add(JSON.stringify({ line, text }));
      const c = text.codePointAt(0)! % 4;
      summary.add({
        line,
        stats: {
          dataset: c === 0 ? undefined : `set-${text[0]}`,
          family: `fam-${text[1] ?? ''}`,
          tools: c === 1,
          promptMarkup: c === 2,
          contentMarkup: text.length % 3 === 0,
          structuredCalls: text.length % 5 === 0,
          completion: { counted: text.length, billed: c === 3 ? undefined : text.length - (text.length % 4) },
          prompt: c === 2 ? { counted: 100, billed: 100 + (text.length % 13) } : undefined,
          promptSkipped: c === 2 ? undefined : `skip-${c}`,
          rules: text.length % 2 ? [`rule-${text[2] ?? ''}`] : [],
        },
      });
    }
    line += chunk.lineStep ?? 1;
  }
  const bytes = out.bytes();
  port.postMessage({ type: 'done', seq: chunk.seq, summary: summary.counts(), out: bytes } satisfies BatchWorkerReply, [
    bytes.buffer as ArrayBuffer,
  ]);
});
