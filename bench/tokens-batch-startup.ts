// The startup half of the tokens-batch bench, run as its own process from an esbuild bundle (plain Node: the workers
// load the shipped bundles as `tokens --batch` does, not through the bench's TypeScript loader). For each file size, the
// whole `runBatch` (new workers, their tokenizer hand-over, reading, ordering, writing) with 1 and with 2 workers, by
// turns (1, 2, then 2, 1, …), so what pays off early is measured with every start-up cost in it. Each mode is run in
// every round: `codeCache`, the workers started as shipped (dist/tokens-batch-boot.js, the worker bundle compiled from
// the V8 code cache in the data dir, which an untimed first run writes); `noCodeCache`, the worker bundle loaded
// directly, compiled from source. Each round also times the machine's own ceiling: a fixed loop of pure computation
// in 1 thread, then twice that work in 2 threads (2 × the first time over the second: ×2 when two cores are free, ×1
// when the process gets one core whatever its threads). Prints one JSON document: by size, each run's wall time and
// the CPU time (user + system) of the whole process, and each round's ceiling.
import { readFileSync, rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { runBatch } from '../src/core/tokens/batch/run';

export type StartupMode = 'codeCache' | 'noCodeCache';

export interface StartupOutput {
  runs: Record<string, StartupRun[]>;
  /** By size, each round's ceiling: 2 × wall(1 thread, work W) / wall(2 threads, work W each). */
  ceiling: Record<string, number[]>;
}

/** Wall time of `threads` threads each running the same fixed loop (about half a second of CPU each). */
async function spin(threads: number): Promise<number> {
  const code = `let x = 0; for (let i = 0; i < 1e8; i++) x = (x * 31 + i) | 0; require('node:worker_threads').parentPort.postMessage(x);`;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: threads }, () => new Promise((ok, fail) => new Worker(code, { eval: true }).on('message', ok).on('error', fail))),
  );
  return performance.now() - t0;
}

export interface StartupRun {
  mode: StartupMode;
  workers: number;
  wallMs: number;
  cpuMs: number;
}

async function main() {
  const [inputs, dir, cacheDir, workerFile, config] = process.argv.slice(2);
  const { runs, boot, modes } = JSON.parse(config) as { runs: number; boot: string; modes: StartupMode[] };
  const out: StartupOutput = { runs: {}, ceiling: {} };
  let reference: string | undefined;
  const once = async (input: string, mode: StartupMode, workers: number) => {
    const output = `${input}.out-${mode}-${workers}`;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await runBatch({ input, output, workers, workerFile, ...(mode === 'codeCache' && { boot }), tokenizerDir: dir, cacheDir });
    const wallMs = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (r.summary.bad) throw new Error(`${r.summary.bad} bad lines: ${r.summary.badLines[0]?.error}`);
    const text = readFileSync(output, 'utf8');
    rmSync(output);
    return { run: { mode, workers, wallMs, cpuMs: (c.user + c.system) / 1000 }, text, codeCache: r.codeCache };
  };
  for (const input of inputs.split(',')) {
    const lines = readFileSync(input, 'utf8').split('\n').length - 1;
    const runsOf: StartupRun[] = (out.runs[lines] = []);
    const ceiling: number[] = (out.ceiling[lines] = []);
    // Untimed: writes the code cache (when the data dir has none of this bundle yet) and the rank cache.
    const first = await once(input, 'codeCache', 1);
    if (first.codeCache?.loaded === 0 && !first.codeCache.saved) throw new Error('the code cache was not written');
    const outputs = new Map<string, string>([['first', first.text]]);
    for (let i = 0; i < runs; i++) {
      for (const mode of i % 2 ? [...modes].reverse() : modes) {
        for (const workers of i % 2 ? [2, 1] : [1, 2]) {
          const r = await once(input, mode, workers);
          if (mode === 'codeCache' && r.codeCache?.loaded !== workers)
            throw new Error(`${workers} worker(s) not compiled from the code cache`);
          runsOf.push(r.run);
          outputs.set(`${mode} ${workers}`, r.text);
        }
      }
      ceiling.push((2 * (await spin(1))) / (await spin(2)));
      for (const [k, text] of outputs) if (text !== first.text) throw new Error(`${lines} lines: ${k} wrote other output than 1 worker`);
    }
    reference = first.text;
  }
  if (reference === undefined) throw new Error('no input');
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e));
  process.exit(1);
});
