// The startup half of the tokens-batch bench, run as its own process from an esbuild bundle (plain Node: the workers
// load the shipped bundle as `tokens --batch` does, not through the bench's TypeScript loader). For each file size, the
// whole `runBatch` (new workers, their tokenizer hand-over, reading, ordering, writing) with 1 and with 2 workers, by
// turns (1, 2, then 2, 1, …), so what pays off early is measured with every start-up cost in it. Prints one JSON
// document: each run's wall time and the CPU time of the whole process, by size.
import { readFileSync, rmSync } from 'node:fs';
import { runBatch } from '../src/core/tokens/batch/run';

export interface StartupRun {
  workers: number;
  wallMs: number;
  cpuMs: number;
}

async function main() {
  const [inputs, dir, cacheDir, workerFile, config] = process.argv.slice(2);
  const { runs } = JSON.parse(config) as { runs: number };
  const out: Record<string, StartupRun[]> = {};
  for (const input of inputs.split(',')) {
    const lines = readFileSync(input, 'utf8').split('\n').length - 1;
    const runsOf: StartupRun[] = (out[lines] = []);
    const outputs: Record<number, string> = {};
    for (let i = 0; i < runs; i++) {
      for (const workers of i % 2 ? [2, 1] : [1, 2]) {
        const output = `${input}.out-${workers}`;
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await runBatch({ input, output, workers, workerFile, tokenizerDir: dir, cacheDir });
        const wallMs = performance.now() - t0;
        const c = process.cpuUsage(c0);
        runsOf.push({ workers, wallMs, cpuMs: (c.user + c.system) / 1000 });
        outputs[workers] = readFileSync(output, 'utf8');
        rmSync(output);
      }
      if (outputs[1] !== outputs[2]) throw new Error(`${lines} lines: 1 and 2 workers wrote different output`);
    }
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e));
  process.exit(1);
});
