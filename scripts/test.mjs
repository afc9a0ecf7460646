// Runs the test files under the given folders with Node's own test runner (TypeScript through tsx).
// Usage: node scripts/test.mjs test/unit test/integration
//
// Two passes. Files that measure time or memory (they use test/helpers/timing, performance.now, the process's CPU or
// memory figures) run one at a time, alone, as the last pass: another test file beside them would be load they did
// not ask for. Every other file runs in the first pass, two files at a time (TOKENSCOPE_TEST_CONCURRENCY to change),
// which mostly overlaps one file's waiting (child processes, servers, timers) with another's work.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
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

/** A file that times or weighs something: it runs alone. */
const MEASURES = /helpers\/timing|performance\.now\(|\.cpuUsage\(|\.memoryUsage\(|max-rss|resourceUsage\(|Date\.now\(\) - (t0|started)/;
const alone = files.filter((f) => MEASURES.test(readFileSync(f, 'utf8')));
const together = files.filter((f) => !alone.includes(f));
const concurrency = Math.max(1, Number(process.env.TOKENSCOPE_TEST_CONCURRENCY) || 2);

// What a test runs without its own --data-dir (a tokenizer cache, a capture) goes to a folder of this run, never to
// the user's ~/.tokenscope.
const dataDir = process.env.TOKENSCOPE_DATA_DIR ? undefined : mkdtempSync(join(tmpdir(), 'tokenscope-test-data-'));
const env = dataDir ? { ...process.env, TOKENSCOPE_DATA_DIR: dataDir } : process.env;
const loader = join(import.meta.dirname, '..', 'test', 'helpers', 'ts-register.mjs');

function pass(list, n, what) {
  if (list.length === 0) return 0;
  console.log(`\n# ${what}: ${list.length} file${list.length === 1 ? '' : 's'}\n`);
  // A test stuck for 10 minutes fails (tests may set their own limit), and a file's process ends once its tests are
  // done even if something it started is still open: a hang fails the run instead of stopping it for good.
  const limits = ['--test-timeout=600000', '--test-force-exit'];
  const r = spawnSync(process.execPath, ['--import', loader, '--test', `--test-concurrency=${n}`, '--test-reporter=spec', ...limits, ...passthrough, ...list], { stdio: 'inherit', env });
  return r.status ?? 1;
}

const t0 = performance.now();
const first = pass(together, concurrency, `test files, ${concurrency} at a time`);
const second = pass(alone, 1, 'test files that measure time or memory, one at a time');
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
console.log(`\n# ${files.length} test files in ${((performance.now() - t0) / 1000).toFixed(1)} s${first || second ? ': FAILED' : ''}`);
process.exit(first || second);
