// `npm run bench`: runs every bench/*.bench.ts and prints one JSON document.
// Each bench module default-exports an async function returning its figures; every figure that has a goal is
// reported as a ratio against a baseline measured in the same run.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

async function run() {
  const only = process.argv.slice(2);
  const dir = __dirname;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
    .sort();
  const out: Record<string, unknown> = {
    machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  };
  for (const f of files) {
    const name = f.replace(/\.bench\.ts$/, '');
    process.stderr.write(`bench: ${name}…\n`);
    try {
      const mod = await import(join(dir, f));
      out[name] = await mod.default();
    } catch (e) {
      out[name] = { error: e instanceof Error ? e.message : String(e) };
    }
  }
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}
run();
