/**
 * The capture worker thread (./capture-worker.ts): the analysis of large exchanges and the end-of-stream search of
 * large files for keys split over SSE events run there, off the proxy's event loop. Started on first need, never
 * keeping the process alive, and ended after IDLE_MS without work, so the heap a large job grew does not stay with
 * `serve`. Built as dist/capture-worker.js beside the bundles; from the sources (tests) the TypeScript file is loaded
 * through tsx. Without either, each method returns undefined and the caller does the work in-thread.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AnalysisOutcome } from './analysis';
import type { CapturedExchange } from '../model';
import type { CaptureJob, CaptureReply } from './capture-worker';
import type { SplitKeysFound, SplitKeysJob } from './split-keys-body';

/** A job as the caller gives it (the thread numbers it). */
type Job = CaptureJob extends infer J ? (J extends unknown ? Omit<J, 'seq'> : never) : never;

/**
 * An analysis whose row the worker writes itself (./capture-worker.ts): `db` is the capture database's path, and
 * `ready` is called on this thread when the row is ready to be written; it returns the exchange's metadata as it is
 * now (undefined: the row is not written). The caller holds its own writes from then until the job settles.
 */
export interface WriteHere {
  db: string;
  ready(): CapturedExchange | undefined;
}

interface Waiting {
  resolve: (r: unknown) => void;
  reject: (e: Error) => void;
  ready?: () => CapturedExchange | undefined;
}

/** Watches the jobs a worker answers (tests check that large work ran there). Production code never sets it. */
export const captureThreadProbe: { onJob?: (kind: CaptureJob['kind'], bytes: number) => void } = {};

export class CaptureThread {
  private worker: Worker | undefined;
  private failed = false;
  private seq = 0;
  private readonly waiting = new Map<number, Waiting>();
  /** Ends the worker once it has been idle for IDLE_MS: the heap a large job grew goes back to the system. */
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly idleMs = IDLE_MS) {}

  /** Whether a worker is running now. */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** Whether a worker is running and has work (a job then keeps it no longer than that work does). */
  get busy(): boolean {
    return this.worker !== undefined && this.waiting.size > 0;
  }

  /**
   * The analysis of the exchange whose body file is `path`; undefined when the file is gone. Rejects on failure. With
   * `write`, the worker writes the row itself and the outcome holds no `stored` text (`written` says it was written).
   */
  analyze(x: CapturedExchange, path: string, write?: WriteHere): Promise<AnalysisOutcome | undefined> | undefined {
    const { requestBody: _omit, ...meta } = x;
    return this.run({ kind: 'analyze', x: meta, path, ...(write && { db: write.db }) }, write?.ready) as
      | Promise<AnalysisOutcome | undefined>
      | undefined;
  }

  /** The masks for keys split over SSE events in a file (./split-keys-body.ts). Rejects on failure. */
  splitKeys(job: SplitKeysJob): Promise<SplitKeysFound | undefined> | undefined {
    const done = this.run({ kind: 'split-keys', job }) as Promise<SplitKeysFound | undefined> | undefined;
    return done?.then((r) => (captureThreadProbe.onJob?.('split-keys', job.size - job.from), r));
  }

  /** A passive checkpoint of the database at `db`, on the worker's connection (./checkpoints.ts): true when all was copied. */
  checkpoint(db: string): Promise<boolean> | undefined {
    return this.run({ kind: 'checkpoint', db }) as Promise<boolean> | undefined;
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const w = this.worker;
    this.worker = undefined;
    if (w) await this.end(w);
  }

  /** Ends a worker with no job left: it closes its database connections first (never a connection left open). */
  private async end(w: Worker): Promise<void> {
    const seq = ++this.seq;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, END_WAIT_MS);
      this.waiting.set(seq, { resolve: () => (clearTimeout(timer), resolve()), reject: () => (clearTimeout(timer), resolve()) });
      w.ref();
      w.postMessage({ kind: 'end', seq } satisfies CaptureJob);
    });
    this.waiting.delete(seq);
    await w.terminate();
  }

  private run(job: Job, ready?: () => CapturedExchange | undefined): Promise<unknown> | undefined {
    const w = this.start();
    if (!w) return undefined;
    const seq = ++this.seq;
    clearTimeout(this.idleTimer);
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject, ready });
      w.ref();
      w.postMessage({ ...job, seq } as CaptureJob);
    });
  }

  /** The worker's row is ready: the caller says with what metadata it is written, or that it is not. */
  private answerReady(w: Worker, m: CaptureReply): void {
    let x: CapturedExchange | undefined;
    try {
      x = this.waiting.get(m.seq)?.ready?.();
    } catch {
      x = undefined;
    }
    const { requestBody: _omit, ...meta } = x ?? ({} as CapturedExchange);
    w.postMessage({ kind: 'write', seq: m.seq, ...(x && { x: meta }) } satisfies CaptureJob);
  }

  private start(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    const w = spawnWorker();
    if (!w) return void (this.failed = true);
    w.unref();
    w.on('message', (m: CaptureReply) => {
      if (m.ready) return this.answerReady(w, m);
      const p = this.waiting.get(m.seq);
      this.waiting.delete(m.seq);
      if (this.waiting.size === 0) {
        w.unref();
        clearTimeout(this.idleTimer);
        this.idleTimer = setTimeout(() => {
          if (this.worker === w && this.waiting.size === 0) {
            this.worker = undefined;
            void this.end(w);
          }
        }, this.idleMs).unref();
      }
      if (m.error !== undefined) p?.reject(new Error(m.error));
      else p?.resolve(m.result);
    });
    const fail = (e: Error) => {
      if (this.worker === w) this.worker = undefined;
      else if (this.worker) return; // ended when idle, and a newer worker has the jobs since
      for (const p of this.waiting.values()) p.reject(e);
      this.waiting.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the capture worker exited (${code})`)));
    return (this.worker = w);
  }
}

/** Files larger than this are analysed or searched on the worker thread: in-thread they would stall other streams. */
export const OFF_THREAD_BYTES = 1024 * 1024;

/** How long an idle worker is kept for the next large exchange (starting one takes tens of milliseconds). */
const IDLE_MS = 5_000;
/** How long an ending worker is given to close its database connections. */
const END_WAIT_MS = 2_000;

function spawnWorker(): Worker | undefined {
  const built = join(__dirname, 'capture-worker.js');
  if (existsSync(built)) return new Worker(built);
  const source = join(__dirname, 'capture-worker.ts');
  if (!existsSync(source)) return undefined;
  try {
    const tsx = createRequire(__filename).resolve('tsx/cjs');
    return new Worker(`require(${JSON.stringify(tsx)}); require(${JSON.stringify(source)});`, { eval: true });
  } catch {
    return undefined;
  }
}
