import { Worker } from 'node:worker_threads';
import { UserError, type Analysis } from '../model';
import type { DownloadProgress } from './hub';
import { TokenizerMissingError } from './local';
import type { TokenStream } from './stream';
import { streamOf, type TokenTable } from './table';
import { eventCount } from '../wire/common';
import type { StreamJob, WorkerReply, WorkerTokenizerRequest } from './worker-protocol';

export interface TokenJobOptions {
  onProgress?: (p: DownloadProgress) => void;
  onWarning?: (message: string) => void;
}

/**
 * The host side of the token worker: one long-lived worker thread (tokenizers stay loaded in it), jobs matched
 * to replies by id. A worker that dies fails its pending jobs with a UserError and is restarted on the next job.
 */
export class TokenWorker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (r: { table: TokenTable; analysis: Analysis }) => void; reject: (e: Error) => void; opts: TokenJobOptions }
  >();

  /** `workerFile`: the bundled worker.ts (dist/tokens-worker.js). */
  constructor(private readonly workerFile: string) {}

  /** The token stream as one object per token (`tokenTable`, materialized). */
  async tokenStream(
    tokenizer: WorkerTokenizerRequest,
    input: StreamJob['input'],
    opts: TokenJobOptions = {},
  ): Promise<{ stream: TokenStream; analysis: Analysis }> {
    const { table, analysis } = await this.tokenTable(tokenizer, input, opts);
    return { stream: streamOf(table), analysis };
  }

  /**
   * The token stream with its tokens in columns (./table.ts), transferred from the worker without a copy. A streamed
   * response goes without its wire events (only their count is read there): a large stream's events are not copied.
   */
  tokenTable(
    tokenizer: WorkerTokenizerRequest,
    input: StreamJob['input'],
    opts: TokenJobOptions = {},
  ): Promise<{ table: TokenTable; analysis: Analysis }> {
    const worker = this.ensure();
    const id = this.nextId++;
    const r = input.response;
    const job: StreamJob = {
      id,
      tokenizer,
      input: r?.streamed && r.events.length ? { ...input, response: { ...r, events: [], eventCount: eventCount(r) } } : input,
    };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, opts });
      worker.ref();
      worker.postMessage(job);
    });
  }

  async dispose(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.failAll('the token worker was stopped');
    if (w) await w.terminate();
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(this.workerFile);
    w.on('message', (m: WorkerReply) => this.onReply(m));
    w.on('error', (e) => {
      if (this.worker === w) this.worker = undefined;
      this.failAll(`the token worker crashed: ${e.message}`);
    });
    w.on('exit', (code) => {
      if (this.worker === w) this.worker = undefined;
      this.failAll(`the token worker exited (code ${code})`);
    });
    this.worker = w;
    return w;
  }

  private onReply(m: WorkerReply): void {
    const job = this.pending.get(m.id);
    if (!job) return;
    switch (m.type) {
      case 'progress':
        job.opts.onProgress?.(m.progress);
        return;
      case 'warning':
        job.opts.onWarning?.(m.message);
        return;
      case 'done':
        this.settled(m.id);
        job.resolve({ table: m.table, analysis: m.analysis });
        return;
      case 'failed':
        this.settled(m.id);
        job.reject(
          m.missing
            ? new TokenizerMissingError(m.message, m.missing.repo, m.missing.dir)
            : m.userError
              ? new UserError(m.message)
              : new Error(m.message),
        );
    }
  }

  /** An idle worker must not keep the host process alive; a busy one must (its jobs are awaited). */
  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
  }

  private failAll(message: string): void {
    for (const job of this.pending.values()) job.reject(new UserError(message));
    this.pending.clear();
  }
}
