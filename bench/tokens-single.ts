// The single-response path of the tokens-batch bench, run as its own process from an esbuild bundle (the same
// compiled code a batch worker runs): parse + exchangeTokenStream + the JSON record per line, one thread, no batch
// machinery. Prints its rate over the lines from `from` on, with the CPU time of its JavaScript thread and of V8's
// helper threads.
import { readFileSync } from 'node:fs';
import { BatchProcessor } from '../src/core/tokens/batch/process';
import { splitTimes, threadTimes } from './threads';

async function main() {
  const [input, dir, cacheDir, fromArg] = process.argv.slice(2);
  const lines = readFileSync(input, 'utf8').split('\n').filter(Boolean);
  const from = Math.floor(lines.length * Number(fromArg));
  const p = new BatchProcessor({ tokenizerDir: dir, cacheDir });
  const start = threadTimes();
  let t0 = 0;
  let c0 = 0;
  let th0 = start;
  for (let i = 0; i < lines.length; i++) {
    if (i === from) {
      [t0, th0] = [performance.now(), threadTimes()];
      const u = process.cpuUsage();
      c0 = u.user + u.system;
    }
    const r = await p.process(i + 1, lines[i]);
    if (!r.out) throw new Error(`line ${i + 1}: ${r.error}`);
  }
  const wallMs = performance.now() - t0;
  const u = process.cpuUsage();
  const n = lines.length - from;
  const t = splitTimes(start, th0, threadTimes());
  process.stdout.write(JSON.stringify({ lines: n, wallMs, cpuMs: (u.user + u.system - c0) / 1000, jsMs: t.mainMs, helpersMs: t.helpersMs }));
}
main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e));
  process.exit(1);
});
