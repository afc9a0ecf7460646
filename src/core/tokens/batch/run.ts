/**
 * `tokens --batch`: streams a JSONL file (or stdin) through worker threads and writes one output line per input line,
 * in input order, to a file (or stdout). With a shard (`--shard K/N`) only the lines whose index (from 0) is K modulo
 * N are processed, under their own line numbers: the shards of one input, run apart, write between them exactly the
 * lines one run writes, and their summaries merge into its summary (merge.ts). Memory stays bounded whatever the
 * input's length: the reader pauses while every worker has `QUEUED_PER_WORKER` chunks in flight or the output is not
 * draining, and results are written as soon as the chunks before them are. The workers also count the summary (per chunk, merged here in input order), so the main thread
 * only finds line ends, orders and writes. Aborting `signal` (Ctrl-C) stops reading, lets the chunks in flight finish
 * and be written, and closes the files; aborting `quit` (Ctrl-C again) drops the chunks in flight instead. Either way
 * what is written is complete lines, a prefix of the full output, and the summary counts exactly those lines.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, statSync, WriteStream } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { UserError } from '../../model';
import type { DownloadProgress } from '../hub';
import type { BatchOptions } from './process';
import { defaultBundledRoot } from '../local';
import { codeCacheFile } from './code-cache';
import type { BatchChunk, BatchWorkerData, BatchWorkerReply, CodeCacheRequest, RanksHandover } from './protocol';

type DoneReply = Extract<BatchWorkerReply, { type: 'done' }>;
import { shareBatchRanks } from './shared-ranks';
import { BatchSummary } from './summary';
import { fsWhy } from '../../fs-errors';

export interface BatchRunOptions extends BatchOptions {
  /** The input file, or a stream (stdin). */
  input: string | Readable;
  /** The output file (created 0600), or a stream, ended when the run is done (stdout through a wrapper). */
  output: string | Writable;
  /** The SpecForge output file or stream (with `specforge`). */
  specforgeOutput?: string | Writable;
  /** Only the lines whose index (from 0) is `index` modulo `count`. */
  shard?: { index: number; count: number };
  workers: number;
  /** The bundled worker.ts (dist/tokens-batch-worker.js). */
  workerFile: string;
  /**
   * The bundled worker-boot.ts (dist/tokens-batch-boot.js): when given, each worker starts through it and compiles
   * `workerFile` from the V8 code cache kept in `cacheDir` (./code-cache.ts); a run that has none writes it at the end.
   */
  boot?: string;
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
  /** 0 when the size is not known (a pipe). */
  totalBytes: number;
  elapsedMs: number;
}

export interface BatchResult {
  summary: BatchSummary;
  interrupted: boolean;
  elapsedMs: number;
  /** With `boot`: how many workers were compiled from the code cache, and whether this run wrote it. */
  codeCache?: { loaded: number; saved: boolean };
}

const QUEUED_PER_WORKER = 2;
/**
 * A run without a usable code cache writes one at the end, taken from the worker that processed the most lines, when
 * that worker processed at least this many (so the cache holds the line-processing code, not only the start-up code).
 */
const CODE_CACHE_MIN_LINES = 200;
/** How long the end of a run waits for that cache to be written (it takes milliseconds). */
const CODE_CACHE_WAIT_MS = 10_000;
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
  const totalBytes = typeof o.input === 'string' ? inputSize(o.input) : 0;
  const { index: shardIndex, count: shardCount } = o.shard ?? { index: 0, count: 1 };
  if (!Number.isInteger(shardCount) || shardCount < 1 || !Number.isInteger(shardIndex) || shardIndex < 0 || shardIndex >= shardCount) {
    throw new UserError(`no shard ${shardIndex}/${shardCount}`);
  }
  const t0 = performance.now();
  const out = await openOutput(o.output);
  const sf = o.specforge && o.specforgeOutput ? await openOutput(o.specforgeOutput) : undefined;
  const summary = new BatchSummary();
  const options: BatchOptions = {
    model: o.model,
    family: o.family,
    tokenizerDir: o.tokenizerDir,
    // The workers look for the shipped tokenizers where this thread finds them, wherever their bundle is.
    bundledDir: o.bundledDir ?? defaultBundledRoot(),
    cacheDir: o.cacheDir,
    offline: o.offline,
    hub: o.hub,
    specforge: o.specforge,
  };
  const workerData: BatchWorkerData = { options };
  const codeCache = o.boot && o.cacheDir ? codeCacheFile(o.cacheDir, o.workerFile) : undefined;
  const bootData: BatchWorkerData = { ...workerData, boot: { bundle: o.workerFile, ...(codeCache && { codeCache }) } };
  const workers = Array.from({ length: Math.max(1, o.workers) }, () => ({
    worker: o.boot ? new Worker(o.boot, { workerData: bootData }) : new Worker(o.workerFile, { workerData }),
    inFlight: 0,
    /** Lines (blank ones too) the worker has processed. */
    lines: 0,
    /** Whether the worker was compiled from the code cache (with `boot`). */
    fromCache: false,
  }));
  let codeCacheSaved: ((error?: string) => void) | undefined;
  // The tokenizer's rank table is loaded once, here, while the workers start, and shared with them all: posted before
  // any chunk, it is theirs before their first line.
  const ranks = shareBatchRanks(options, o.onWarning);
  if (ranks.length) for (const w of workers) w.worker.postMessage({ ranks } satisfies RanksHandover);

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
      if (m.type === 'code-cache') return void (w.fromCache = m.loaded);
      if (m.type === 'code-cache-saved') return codeCacheSaved?.(m.error);
      if (o.quit?.aborted) return; // dropped: nothing more is written
      w.inFlight--;
      inFlight--;
      w.lines += m.summary.lines + m.summary.blank;
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
  for (const [s, name] of [
    [out, o.output],
    [sf, o.specforgeOutput],
  ] as const) {
    s?.on('drain', signalWake);
    s?.on('error', (e: NodeJS.ErrnoException) => {
      const where = typeof name === 'string' ? name : 'the output';
      failure ??= new UserError(e.code === 'EPIPE' ? `${where}: the reader closed it` : `cannot write ${where}: ${fsWhy(e)}`);
      signalWake();
    });
  }

  let seq = 0;
  const dispatch = async (firstLine: number, parts: Uint8Array[], size: number) => {
    await until(() => outputReady() && workers.some((w) => w.inFlight < QUEUED_PER_WORKER));
    const w = workers.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
    w.inFlight++;
    inFlight++;
    // One fresh buffer per chunk (never a pooled one), moved to the worker rather than copied.
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const p of parts) bytes.set(p, at), (at += p.byteLength);
    const chunk: BatchChunk = { seq: seq++, firstLine, bytes, ...(shardCount > 1 && { lineStep: shardCount }) };
    w.worker.postMessage(chunk, [bytes.buffer]);
  };

  /**
   * When no worker started from the code cache, the one that processed the most lines writes it (each worker has
   * compiled the code its lines reached: any of them gives the next run that code). A failure is said, not thrown.
   */
  let saved = false;
  const saveCodeCache = async (file: string): Promise<boolean> => {
    if (workers.some((w) => w.fromCache)) return false;
    const w = workers.reduce((a, b) => (b.lines > a.lines ? b : a));
    if (w.lines < CODE_CACHE_MIN_LINES) return false;
    let timer: NodeJS.Timeout | undefined;
    const error = await new Promise<string | undefined>((ok) => {
      codeCacheSaved = ok;
      timer = setTimeout(() => ok('timed out'), CODE_CACHE_WAIT_MS);
      w.worker.postMessage({ saveCodeCache: true } satisfies CodeCacheRequest);
    });
    clearTimeout(timer);
    codeCacheSaved = undefined;
    if (error) o.onWarning?.(`could not write the code cache ${file}: ${error}`);
    return !error;
  };

  let interrupted = false;
  /** Lines of the whole input gone through (those of other shards too). */
  let inputLines = 0;
  try {
    // Only line ends are looked for here: decoding, parsing and encoding happen in the workers. A chunk's bytes are
    // runs of the read buffers: with every line taken, a buffer's lines make one run; with a shard, each line is one.
    const maxLines = o.chunkLines ?? CHUNK_LINES;
    let chunkLines = Math.min(FIRST_CHUNK_LINES, maxLines);
    let chunkBytes = CHUNK_BYTES;
    let parts: Uint8Array[] = [];
    let size = 0;
    let lines = 0; // whole lines in the chunk being built
    let lineNo = 1; // the number of the input line being read
    let take = (lineNo - 1) % shardCount === shardIndex; // whether that line is the shard's
    let firstLine = take ? lineNo : 0; // the number of the chunk's first line (0: none yet)
    let offset = 0; // input bytes before the current buffer
    let partial = false; // the input so far ends inside a line
    const source = typeof o.input === 'string' ? createReadStream(o.input, { highWaterMark: READ_BYTES }) : o.input;
    reading: for await (const buf of source as AsyncIterable<Buffer>) {
      bytesRead += buf.length;
      if (stopped()) break;
      let from = 0; // where the line being read starts in buf
      let run = take ? 0 : -1; // where the bytes to keep start in buf (-1: none)
      for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, nl + 1)) {
        if (take) {
          lines++;
          if (lines >= chunkLines || size + nl + 1 - run >= chunkBytes) {
            parts.push(buf.subarray(run, nl + 1));
            await dispatch(firstLine, parts, size + nl + 1 - run);
            inputLines = lineNo;
            chunkLines = Math.min(chunkLines * 2, maxLines);
            // What is left for this shard: 0 or less for a file that grew, or a pipe (no size).
            const left = (totalBytes - offset - nl - 1) / shardCount;
            chunkBytes = left > 0 ? Math.min(CHUNK_BYTES, Math.max(TAIL_CHUNK_BYTES, (left * TAIL_SHARE) / workers.length)) : CHUNK_BYTES;
            [parts, size, lines, run, firstLine] = [[], 0, 0, -1, 0];
            if (stopped()) break reading;
          }
        }
        from = nl + 1;
        lineNo++;
        take = (lineNo - 1) % shardCount === shardIndex;
        if (take) {
          if (run < 0) run = from;
          if (!firstLine) firstLine = lineNo;
        } else if (run >= 0) {
          parts.push(buf.subarray(run, from));
          size += from - run;
          run = -1;
        }
      }
      if (run >= 0 && run < buf.length) parts.push(buf.subarray(run)), (size += buf.length - run);
      if (buf.length) partial = from < buf.length;
      offset += buf.length;
    }
    if (stopped()) interrupted = true;
    else {
      if (size > 0) await dispatch(firstLine, parts, size);
      inputLines = lineNo - 1 + (partial ? 1 : 0);
    }
    await until(() => inFlight === 0);
    if (codeCache && !interrupted && !stopped()) saved = await saveCodeCache(codeCache);
  } catch (e) {
    if (e !== QUIT) throw e;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    o.quit?.removeEventListener('abort', onAbort);
    await Promise.all(workers.map((w) => w.worker.terminate()));
    await Promise.all([closeOutput(out), sf && closeOutput(sf)]);
  }
  summary.shard = { index: shardIndex, count: shardCount, inputLines };
  return {
    summary,
    interrupted: interrupted || stopped(),
    elapsedMs: performance.now() - t0,
    ...(o.boot && { codeCache: { loaded: workers.filter((w) => w.fromCache).length, saved } }),
  };
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

async function openOutput(file: string | Writable): Promise<Writable> {
  if (typeof file !== 'string') return file;
  const s = createWriteStream(file, { mode: 0o600 });
  try {
    await once(s, 'open');
  } catch (e) {
    throw new UserError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : fsWhy(e)}`);
  }
  return s;
}

/** Ends the output; a file is closed, a stream given has taken every byte (or failed: said by its 'error'). */
async function closeOutput(s: Writable): Promise<void> {
  if (s.destroyed || s.writableFinished) return;
  const done = once(s, s instanceof WriteStream ? 'close' : 'finish').catch(() => undefined);
  s.end();
  await done;
}
