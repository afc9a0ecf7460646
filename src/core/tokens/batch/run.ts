/**
 * `tokens --batch`: streams a JSONL file through worker threads and writes one output line per input line, in
 * input order. Memory stays bounded whatever the file's length: the reader pauses while every worker has
 * `QUEUED_PER_WORKER` chunks in flight or the output is not draining, and results are written as soon as the chunks
 * before them are. The workers also count the summary (per chunk, merged here in input order), so the main thread
 * only finds line ends, orders and writes. Aborting `signal` (Ctrl-C) stops reading, lets the chunks in flight finish
 * and be written, and closes the files; aborting `quit` (Ctrl-C again) drops the chunks in flight instead. Either way
 * what is written is complete lines, a prefix of the full output, and the summary counts exactly those lines.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, statSync, type WriteStream } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { UserError } from '../../model';
import type { DownloadProgress } from '../hub';
import type { BatchOptions } from './process';
import type { BatchChunk, BatchWorkerData, BatchWorkerReply } from './protocol';

type DoneReply = Extract<BatchWorkerReply, { type: 'done' }>;
import { BatchSummary } from './summary';
import { fsWhy } from '../../fs-errors';

export interface BatchRunOptions extends BatchOptions {
  input: string;
  output: string;
  /** The SpecForge output file (with `specforge`). */
  specforgeOutput?: string;
  workers: number;
  /** The bundled worker.ts (dist/tokens-batch-worker.js). */
  workerFile: string;
  /** Stop reading; the lines in flight are finished and written. */
  signal?: AbortSignal;
  /** Stop at once: only the lines already done are written (whole chunks, so the files still end on a whole line). */
  quit?: AbortSignal;
  /** The most lines per chunk sent to a worker (default CHUNK_LINES). */
  chunkLines?: number;
  onProgress?: (p: BatchProgress) => void;
  onDownload?: (p: DownloadProgress) => void;
  onWarning?: (message: string) => void;
}

export interface BatchProgress {
  lines: number;
  bytesRead: number;
  totalBytes: number;
  elapsedMs: number;
}

export interface BatchResult {
  summary: BatchSummary;
  interrupted: boolean;
  elapsedMs: number;
}

const QUEUED_PER_WORKER = 2;
/** Thrown by the waits once `quit` is aborted. */
const QUIT = Symbol('quit');
/**
 * Chunk sizes. Each chunk costs the main thread and a worker the same (two messages, two wake-ups, a write) whatever
 * its size, so large chunks leave less of that per line. The first chunks are small, so that every worker has work
 * at once and a short file is still shared; each next one doubles, up to CHUNK_LINES.
 */
const FIRST_CHUNK_LINES = 8;
const CHUNK_LINES = 256;
/** A chunk is also cut at this many bytes, so one chunk of long lines does not pin one worker for long. */
const CHUNK_BYTES = 1024 * 1024;
/**
 * Near the end of the file a chunk holds at most this share of the bytes left (but at least TAIL_CHUNK_BYTES), so the
 * workers run out of work together instead of one finishing its last large chunks while the others wait.
 */
const TAIL_SHARE = 1 / (2 * QUEUED_PER_WORKER);
const TAIL_CHUNK_BYTES = 16 * 1024;
const READ_BYTES = 1024 * 1024;

export async function runBatch(o: BatchRunOptions): Promise<BatchResult> {
  const totalBytes = inputSize(o.input);
  const t0 = performance.now();
  const out = await openOutput(o.output);
  const sf = o.specforge && o.specforgeOutput ? await openOutput(o.specforgeOutput) : undefined;
  const summary = new BatchSummary();
  const workerData: BatchWorkerData = {
    options: { model: o.model, family: o.family, tokenizerDir: o.tokenizerDir, cacheDir: o.cacheDir, offline: o.offline, hub: o.hub, specforge: o.specforge },
  };
  const workers = Array.from({ length: Math.max(1, o.workers) }, () => ({ worker: new Worker(o.workerFile, { workerData }), inFlight: 0 }));

  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const signalWake = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const done = new Map<number, DoneReply>();
  let nextToWrite = 0;
  let inFlight = 0;
  let bytesRead = 0;

  /** A chunk's reply, in input order: its counts into the summary, its bytes to the files as they came. */
  const write = (m: DoneReply) => {
    summary.merge(m.summary);
    if (m.out.byteLength) out.write(m.out);
    if (m.specforge?.byteLength) sf?.write(m.specforge);
  };

  for (const w of workers) {
    w.worker.on('message', (m: BatchWorkerReply) => {
      if (m.type === 'progress') return o.onDownload?.(m.progress);
      if (m.type === 'warning') return o.onWarning?.(m.message);
      if (o.quit?.aborted) return; // dropped: nothing more is written
      w.inFlight--;
      inFlight--;
      done.set(m.seq, m);
      while (done.has(nextToWrite)) {
        write(done.get(nextToWrite)!);
        done.delete(nextToWrite++);
      }
      o.onProgress?.({ lines: summary.lines + summary.blank, bytesRead, totalBytes, elapsedMs: performance.now() - t0 });
      signalWake();
    });
    w.worker.on('error', (e) => {
      failure ??= new Error(`a batch worker crashed: ${e.message}`);
      signalWake();
    });
    w.worker.on('exit', (code) => {
      if (code !== 0) failure ??= new Error(`a batch worker exited (code ${code})`);
      signalWake();
    });
  }
  const onAbort = () => signalWake();
  o.signal?.addEventListener('abort', onAbort);
  o.quit?.addEventListener('abort', onAbort);
  const stopped = () => !!o.signal?.aborted || !!o.quit?.aborted;

  /** Resolves when the predicate holds, re-checked after every reply (and on abort or failure). */
  const until = async (ready: () => boolean) => {
    while (!ready() && !failure && !o.quit?.aborted) await new Promise<void>((r) => (wake = r));
    if (failure) throw failure;
    if (o.quit?.aborted) throw QUIT;
  };
  const outputReady = () => !out.writableNeedDrain && !sf?.writableNeedDrain;
  for (const s of [out, sf]) s?.on('drain', signalWake);

  let seq = 0;
  const dispatch = async (firstLine: number, parts: Uint8Array[], size: number) => {
    await until(() => outputReady() && workers.some((w) => w.inFlight < QUEUED_PER_WORKER));
    const w = workers.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
    w.inFlight++;
    inFlight++;
    // One fresh buffer per chunk (never a pooled one), moved to the worker rather than copied.
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const p of parts) (bytes.set(p, at), (at += p.byteLength));
    w.worker.postMessage({ seq: seq++, firstLine, bytes } satisfies BatchChunk, [bytes.buffer]);
  };

  let interrupted = false;
  try {
    // Only line ends are looked for here: decoding, parsing and encoding happen in the workers.
    const maxLines = o.chunkLines ?? CHUNK_LINES;
    let chunkLines = Math.min(FIRST_CHUNK_LINES, maxLines);
    let chunkBytes = CHUNK_BYTES;
    let sent = 0;
    let parts: Uint8Array[] = [];
    let size = 0;
    let lines = 0;
    let firstLine = 1;
    for await (const buf of createReadStream(o.input, { highWaterMark: READ_BYTES }) as AsyncIterable<Buffer>) {
      bytesRead += buf.length;
      if (stopped()) break;
      let from = 0;
      for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, nl + 1)) {
        lines++;
        if (lines < chunkLines && size + nl + 1 - from < chunkBytes) continue;
        parts.push(buf.subarray(from, nl + 1));
        await dispatch(firstLine, parts, size + nl + 1 - from);
        sent += size + nl + 1 - from;
        chunkLines = Math.min(chunkLines * 2, maxLines);
        const left = totalBytes - sent; // 0 or less for a file that grew, or a pipe (no size)
        chunkBytes = left > 0 ? Math.min(CHUNK_BYTES, Math.max(TAIL_CHUNK_BYTES, (left * TAIL_SHARE) / workers.length)) : CHUNK_BYTES;
        firstLine += lines;
        [parts, size, lines, from] = [[], 0, 0, nl + 1];
        if (stopped()) break;
      }
      if (stopped()) break;
      if (from < buf.length) (parts.push(buf.subarray(from)), (size += buf.length - from));
    }
    if (stopped()) interrupted = true;
    else if (size > 0) await dispatch(firstLine, parts, size);
    await until(() => inFlight === 0);
  } catch (e) {
    if (e !== QUIT) throw e;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    o.quit?.removeEventListener('abort', onAbort);
    await Promise.all(workers.map((w) => w.worker.terminate()));
    await Promise.all([closeOutput(out), sf && closeOutput(sf)]);
  }
  return { summary, interrupted: interrupted || stopped(), elapsedMs: performance.now() - t0 };
}

function inputSize(file: string): number {
  try {
    const st = statSync(file);
    if (st.isDirectory()) throw new UserError(`${file} is a directory`);
    return st.size;
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : fsWhy(e)}`);
  }
}

async function openOutput(file: string): Promise<WriteStream> {
  const s = createWriteStream(file, { mode: 0o600 });
  try {
    await once(s, 'open');
  } catch (e) {
    throw new UserError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : fsWhy(e)}`);
  }
  return s;
}

async function closeOutput(s: WriteStream): Promise<void> {
  if (s.closed) return;
  s.end();
  await once(s, 'close');
}
