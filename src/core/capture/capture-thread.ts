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
import type { CaptureJob } from './capture-worker';
import type { SplitKeysFound, SplitKeysJob } from './split-keys-body';

type Reply = { seq: number; result?: unknown; error?: string };
/** A job as the caller gives it (the thread numbers it). */
type Job = CaptureJob extends infer J ? (J extends unknown ? Omit<J, 'seq'> : never) : never;

/** Watches the jobs a worker answers (tests check that large work ran there). Production code never sets it. */
export const captureThreadProbe: { onJob?: (kind: CaptureJob['kind'], bytes: number) => void } = {};

export class CaptureThread {
  private worker: Worker | undefined;
  private failed = false;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  /** Ends the worker once it has been idle for IDLE_MS: the heap a large job grew goes back to the system. */
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly idleMs = IDLE_MS) {}

  /** Whether a worker is running now. */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** The analysis of the exchange whose body file is `path`; undefined when the file is gone. Rejects on failure. */
  analyze(x: CapturedExchange, path: string): Promise<AnalysisOutcome | undefined> | undefined {
    const { requestBody: _omit, ...meta } = x;
    return this.run({ kind: 'analyze', x: meta, path }) as Promise<AnalysisOutcome | undefined> | undefined;
  }

  /** The masks for keys split over SSE events in a file (./split-keys-body.ts). Rejects on failure. */
  splitKeys(job: SplitKeysJob): Promise<SplitKeysFound | undefined> | undefined {
    const done = this.run({ kind: 'split-keys', job }) as Promise<SplitKeysFound | undefined> | undefined;
    return done?.then((r) => (captureThreadProbe.onJob?.('split-keys', job.size - job.from), r));
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }

  private run(job: Job): Promise<unknown> | undefined {
    const w = this.start();
    if (!w) return undefined;
    const seq = ++this.seq;
    clearTimeout(this.idleTimer);
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      w.ref();
      w.postMessage({ ...job, seq } as CaptureJob);
    });
  }

  private start(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    const w = spawnWorker();
    if (!w) return void (this.failed = true);
    w.unref();
    w.on('message', (m: Reply) => {
      const p = this.waiting.get(m.seq);
      this.waiting.delete(m.seq);
      if (this.waiting.size === 0) {
        w.unref();
        clearTimeout(this.idleTimer);
        this.idleTimer = setTimeout(() => {
          if (this.worker === w && this.waiting.size === 0) {
            this.worker = undefined;
            void w.terminate();
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
