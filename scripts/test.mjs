// Runs the test files under the given folders with Node's own test runner (TypeScript through tsx).
// Usage: node scripts/test.mjs test/unit test/integration
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...passthrough, ...files], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
