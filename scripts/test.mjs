// Runs the test files under the given folders with Node's own test runner (TypeScript through tsx).
// Usage: node scripts/test.mjs test/unit test/integration
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
const files = [];
function walk(dir) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const e of entries.sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p);
    else if (e.endsWith('.test.ts')) files.push(p);
  }
}
for (const d of dirs.length ? dirs : ['test/unit', 'test/integration']) walk(d);
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// What a test runs without its own --data-dir (a tokenizer cache, a capture) goes to a folder of this run, never to
// the user's ~/.tokenscope.
const dataDir = process.env.TOKENSCOPE_DATA_DIR ? undefined : mkdtempSync(join(tmpdir(), 'tokenscope-test-data-'));
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...passthrough, ...files], {
  stdio: 'inherit',
  env: dataDir ? { ...process.env, TOKENSCOPE_DATA_DIR: dataDir } : process.env,
});
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
process.exit(r.status ?? 1);
