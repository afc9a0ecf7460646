/**
 * Worker-thread entry (bundled to dist/tokens-worker.js): loads tokenizers and builds token streams off the
 * extension host's main thread, so a 1–3 s tokenizer load or a large response never freezes the UI.
 * Tokenizers stay loaded for the worker's life. Talk to it through client.ts.
 */
import { parentPort } from 'node:worker_threads';
import { UserError } from '../model';
import { exchangeTokenTable } from './exchange';
import { TokenizerMissingError } from './local';
import { ChatTemplatePool, promptFor } from './prompt';
import { TokenizerPool } from './resolve';
import type { TokenTable } from './table';
import type { StreamJob, WorkerReply } from './worker-protocol';

const pool = new TokenizerPool();
const templates = new ChatTemplatePool();
const port = parentPort;
if (!port) throw new Error('tokens worker must run in a worker thread');

port.on('message', (job: StreamJob) => {
  // The token columns go to the host without a copy: a 200 MB stream's millions of tokens are a few typed arrays.
  void run(job).then((reply) => port.postMessage(reply, reply.type === 'done' ? columnBuffers(reply.table) : []));
});

function columnBuffers(table: TokenTable): ArrayBuffer[] {
  const c = table.columns;
  return [c.ids, c.starts, c.ends, c.label, c.kinds, c.segments, c.calls].map((a) => a.buffer as ArrayBuffer);
}

async function run(job: StreamJob): Promise<WorkerReply> {
  try {
    const tokenizer = await pool.get({
      ...job.tokenizer,
      hub: {
        ...job.tokenizer.hub,
        onProgress: (progress) => port!.postMessage({ id: job.id, type: 'progress', progress } satisfies WorkerReply),
      },
      onWarning: (message) => port!.postMessage({ id: job.id, type: 'warning', message } satisfies WorkerReply),
    });
    // The prompt side when the request is there; a missing template becomes a note beside the accounting.
    const { prompt, note } = job.input.request ? await promptFor(tokenizer, templates, { ...job.tokenizer }, job.input.request.raw) : {};
    const { table, analysis } = exchangeTokenTable({
      ...job.input,
      tokenizer,
      promptTokens: prompt?.ids.length,
      promptIds: prompt?.ids,
      promptNote: note,
    });
    return { id: job.id, type: 'done', table, analysis };
  } catch (e) {
    const missing = e instanceof TokenizerMissingError ? { repo: e.repo, dir: e.dir } : undefined;
    return {
      id: job.id,
      type: 'failed',
      message: e instanceof Error ? e.message : String(e),
      userError: e instanceof UserError,
      ...(missing && { missing }),
    };
  }
}
