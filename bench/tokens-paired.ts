// The paired half of the tokens-batch bench, run as its own process from an esbuild bundle. One process holds both
// sides, warmed up, and runs them by turns on the same lines, in blocks of BLOCK lines, so whatever else the machine
// is doing hits every side alike:
// - `single`: the single-response path on this process's main thread (parse + exchangeTokenTable + the JSON record
//   per line, no batch machinery: what `tokens` does for one response);
// - `one`: the shipped batch worker (dist/tokens-batch-worker.js), fed the block's lines in chunks as the batch
//   runner cuts them (CHUNK lines, two in flight), its output bytes and summary counts sent back;
// - `two`: two such workers sharing the block, chunk by chunk.
// While one side runs the others are idle. Every block records its wall time and the CPU time of each thread: the
// main thread, the workers' threads, and V8's helper threads (there from the start, shared by every isolate: the
// concurrent compiler and GC). Prints one JSON document: the blocks of every round.
import { readFileSync, readdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { BatchProcessor } from '../src/core/tokens/batch/process';
import type { BatchChunk, BatchWorkerData, BatchWorkerReply, RanksHandover } from '../src/core/tokens/batch/protocol';
import { shareBatchRanks } from '../src/core/tokens/batch/shared-ranks';

export type Side = 'single' | 'one' | 'two';

export interface Block {
  side: Side;
  round: number;
  lines: number;
  wallMs: number;
  /** CPU ms of the thread(s) doing the line work: the main thread for `single`, the workers' threads for `one`/`two`. */
  workMs: number;
  /** CPU ms of the main thread while a batch side runs (posting chunks, taking replies); 0 for `single`. */
  mainMs: number;
  /** CPU ms of V8's helper threads. */
  helpersMs: number;
  /** CPU ms of the whole process. */
  processMs: number;
  /** For `two`: each worker's share of the lines. */
  perWorkerLines?: number[];
}

const CHUNK = 256;
const IN_FLIGHT = 2;

/** CPU ns of every thread of this process: /proc/self/task/<tid>/schedstat (ns on a core), else stat (10 ms ticks). */
function threads(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      try {
        const s = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
        out.set(tid, (Number(f[11]) + Number(f[12])) * 1e7);
      } catch {
        // the thread has just ended
      }
    }
  }
  return out;
}

const processNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

interface BatchWorker {
  worker: Worker;
  tids: string[];
  lines: number;
}

async function main() {
  const [input, dir, cacheDir, workerFile, config] = process.argv.slice(2);
  const { block, rounds, warm } = JSON.parse(config) as { block: number; rounds: number; warm: number };
  const texts = readFileSync(input, 'utf8').split('\n').filter(Boolean);
  const bytes = texts.map((t) => Buffer.from(t + '\n'));
  let next = 0;
  /** The numbers of the next `n` lines, round and round the file. */
  const take = (n: number) => {
    const from = next;
    next += n;
    return Array.from({ length: n }, (_, i) => (from + i) % texts.length);
  };

  const processor = new BatchProcessor({ tokenizerDir: dir, cacheDir });
  const runSingle = async (lines: number[]) => {
    for (const i of lines) {
      // Decoded from the line's bytes as the worker decodes its lines (and `tokens` its file): the same kind of string.
      const r = await processor.process(i + 1, bytes[i].toString('utf8', 0, bytes[i].length - 1));
      if (!r.out) throw new Error(`line ${i + 1}: ${r.error}`);
    }
  };

  await stat(input); // libuv's thread pool is started now, so the threads that appear later are the workers'
  const main = String(process.pid);
  const helperTids = new Set([...threads().keys()].filter((t) => t !== main));
  const options = { tokenizerDir: dir, cacheDir };
  const workerData: BatchWorkerData = { options };
  const ranks = shareBatchRanks(options); // handed over as the batch runner does
  const workers: BatchWorker[] = [];
  let seq = 0;
  const pending = new Map<number, () => void>();
  for (let k = 0; k < 2; k++) {
    const known = new Set(threads().keys());
    const worker = new Worker(workerFile, { workerData });
    if (ranks.length) worker.postMessage({ ranks } satisfies RanksHandover);
    worker.on('message', (m: BatchWorkerReply) => {
      if (m.type !== 'done') return;
      if (m.summary.bad) throw new Error(`a worker found ${m.summary.bad} bad lines`);
      pending.get(m.seq)?.();
      pending.delete(m.seq);
    });
    worker.on('error', (e) => {
      throw e;
    });
    await new Promise((ok) => worker.once('online', ok));
    workers.push({ worker, tids: [...threads().keys()].filter((t) => !known.has(t)), lines: 0 });
  }
  const send = (w: BatchWorker, lines: number[]) =>
    new Promise<void>((ok) => {
      const chunk = new Uint8Array(lines.reduce((n, i) => n + bytes[i].length, 0));
      let at = 0;
      for (const i of lines) chunk.set(bytes[i], at), (at += bytes[i].length);
      const s = seq++;
      pending.set(s, ok);
      w.lines += lines.length;
      w.worker.postMessage({ seq: s, firstLine: lines[0] + 1, bytes: chunk } satisfies BatchChunk, [chunk.buffer]);
    });
  /**
   * The lines in chunks over `ws`, each worker with at most IN_FLIGHT chunks queued, handed out by turns as the batch
   * runner does (the next chunk to the worker with the fewest queued).
   */
  const runBatch = async (ws: BatchWorker[], lines: number[]) => {
    let at = 0;
    const lane = async (w: BatchWorker) => {
      while (at < lines.length) await send(w, lines.slice(at, (at += CHUNK)));
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, () => ws.map(lane)).flat());
  };

  const run = async (side: Side, lines: number[]) => {
    if (side === 'single') return runSingle(lines);
    return runBatch(side === 'one' ? [workers[0]] : workers, lines);
  };

  // Warm-up: each isolate compiles its hot code over its first few thousand lines.
  await runSingle(take(warm));
  await runBatch([workers[0]], take(warm));
  await runBatch([workers[1]], take(warm));

  const sum = (t: Map<string, number>, ids: Iterable<string>) => [...ids].reduce((n, id) => n + (t.get(id) ?? 0), 0);
  const blocks: Block[] = [];
  const orders: Side[][] = [
    ['single', 'one', 'two'],
    ['two', 'one', 'single'],
    ['one', 'single', 'two'],
    ['two', 'single', 'one'],
  ];
  for (let round = 0; round < rounds; round++) {
    for (const side of orders[round % orders.length]) {
      const lines = take(block);
      const used = side === 'single' ? [] : side === 'one' ? [workers[0]] : workers;
      const linesBefore = used.map((w) => w.lines);
      const [t0, c0, p0] = [performance.now(), threads(), processNs()];
      await run(side, lines);
      const [t1, c1, p1] = [performance.now(), threads(), processNs()];
      const d = (ids: Iterable<string>) => (sum(c1, ids) - sum(c0, ids)) / 1e6;
      const workerTids = used.flatMap((w) => w.tids);
      blocks.push({
        side,
        round,
        lines: block,
        wallMs: t1 - t0,
        workMs: side === 'single' ? d([main]) : d(workerTids),
        mainMs: side === 'single' ? 0 : d([main]),
        helpersMs: d(helperTids),
        processMs: (p1 - p0) / 1e6,
        ...(side === 'two' ? { perWorkerLines: used.map((w, k) => w.lines - linesBefore[k]) } : {}),
      });
    }
  }
  await Promise.all(workers.map((w) => w.worker.terminate()));
  process.stdout.write(JSON.stringify({ blocks }));
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e));
  process.exit(1);
});
