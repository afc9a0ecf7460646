/**
 * The capture worker thread (./capture-thread.ts starts it): reading a body file of megabytes, parsing it and
 * running the checks, or searching it for keys split over SSE events, would stall the proxy's event loop, so other
 * streams' chunks would wait. The worker reads the file itself; only metadata and results cross threads.
 *
 * A large exchange's analysis row (megabytes even in its stored form) is written here too, on this thread's own
 * connection to the capture database: one SQLite statement of megabytes holds whichever thread runs it for 50-150 ms.
 * The proxy's thread hears "ready to write", holds its own batched writes (so it never waits on SQLite's write lock
 * meanwhile) and answers with the exchange's metadata as it is then; only the summary and the findings come back.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { CapturedExchange } from '../model';
import { analyzeCaptured, outcomeOf, type AnalysisOutcome } from './analysis';
import { CaptureDb } from './database';
import { readRegularFile } from './files';
import { decodeFrames } from './log';
import { searchSplitKeys, type SplitKeysJob } from './split-keys-body';

export type CaptureJob =
  /** The analysis of the exchange whose body file is `path`; with `db`, its row is written here (see above). */
  | { seq: number; kind: 'analyze'; x: CapturedExchange; path: string; db?: string }
  /** The masks for keys split over SSE events in `job.path`. */
  | { seq: number; kind: 'split-keys'; job: SplitKeysJob }
  /** The answer to "ready to write" for job `seq`: the exchange's metadata now (undefined: do not write). */
  | { seq: number; kind: 'write'; x?: CapturedExchange }
  /** Copies the write-ahead log of the database at `db` into its file, as far as no reader needs it (./checkpoints.ts). */
  | { seq: number; kind: 'checkpoint'; db: string }
  /** The thread is about to end: its database connections are closed first. */
  | { seq: number; kind: 'end' };

/** What this thread posts: a job's result or error, or (`ready`) that an analysis row is ready to be written. */
export type CaptureReply = { seq: number; result?: unknown; error?: string; ready?: true };

/** Analyses waiting for the proxy's thread to say "write", by job. */
const toWrite = new Map<number, { db: string; outcome: ReturnType<typeof outcomeOf> }>();
/** This thread's connections, by database path, until the thread ends. */
const connections = new Map<string, CaptureDb>();

function run(job: CaptureJob): CaptureReply {
  if (job.kind === 'split-keys') {
    const file = readRegularFile(job.job.path, Infinity, job.job.from);
    return { seq: job.seq, result: file && searchSplitKeys(file, job.job) };
  }
  if (job.kind === 'write') return { seq: job.seq, result: write(job) };
  if (job.kind === 'checkpoint') return { seq: job.seq, result: connection(job.db).checkpoint() };
  if (job.kind === 'end') {
    for (const db of connections.values()) db.close();
    connections.clear();
    return { seq: job.seq, result: true };
  }
  const file = readRegularFile(job.path);
  if (!file) return { seq: job.seq, result: undefined };
  const { request, response, chunks } = decodeFrames(file);
  const full =
    request === undefined
      ? job.x
      : { ...job.x, requestBody: Buffer.from(request.buffer, request.byteOffset, request.byteLength).toString('utf8') };
  const outcome = outcomeOf(analyzeCaptured(full, response, chunks));
  if (job.db === undefined) return { seq: job.seq, result: outcome };
  toWrite.set(job.seq, { db: job.db, outcome });
  return { seq: job.seq, ready: true };
}

/** Writes a ready analysis (the exchange's new summary, its findings, its stored row) in one transaction. */
function write(job: Extract<CaptureJob, { kind: 'write' }>): AnalysisOutcome | undefined {
  const ready = toWrite.get(job.seq);
  toWrite.delete(job.seq);
  if (!ready) throw new Error('no analysis is waiting to be written');
  const { summary, findings, stored } = ready.outcome;
  if (!job.x) return { summary, findings, written: false };
  let db: CaptureDb;
  try {
    db = connection(ready.db);
    const x = { ...job.x, summary };
    db.batch(() => {
      db.update(x);
      db.putAnalysis(x, findings, stored);
    });
  } catch {
    // Not written here (no connection from this thread, a lock held too long): the proxy's thread writes it.
    return ready.outcome;
  }
  copied(db);
  // The row is written: only the summary and the findings cross back.
  return { summary, findings, written: true };
}

/** This thread's connection to the database at `path` (opened on first need, kept until the thread ends). */
function connection(path: string): CaptureDb {
  let db = connections.get(path);
  if (!db) connections.set(path, (db = CaptureDb.open(path)));
  return db;
}

/**
 * The megabytes just written are copied from the write-ahead log into the database file here too. The commit did that
 * already unless a reader (another process's) still needed the old pages; then it is tried again for a while. Left
 * to the next commit, that copy would run in the proxy's thread (its next batch of rows) and hold it 30-50 ms.
 */
function copied(db: CaptureDb): void {
  const until = Date.now() + CHECKPOINT_TRY_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (!db.checkpoint() && Date.now() < until) Atomics.wait(pause, 0, 0, 10);
}

/** How long a checkpoint a reader holds back is tried again after a large row. */
const CHECKPOINT_TRY_MS = 2_000;

/**
 * This thread runs at a lower priority than the proxy's (Linux gives each thread its own nice value: /proc/thread-self
 * names this one's id), so on a busy machine a long job here yields the core to the forwarding path and its garbage
 * collector instead of competing with them. Elsewhere the job runs at the process's priority.
 */
function yieldToTheProxy(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0 && tid !== process.pid) setPriority(tid, Math.min(19, 10 + getOwnPriority()));
  } catch {
    // not Linux, or not allowed: the process's priority
  }
}

function getOwnPriority(): number {
  try {
    return getPriority();
  } catch {
    return 0;
  }
}

yieldToTheProxy();

parentPort?.on('message', (job: CaptureJob) => {
  try {
    parentPort!.postMessage(run(job));
  } catch (e) {
    parentPort!.postMessage({ seq: job.seq, error: (e as Error).message ?? String(e) });
  }
});
