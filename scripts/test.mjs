// Runs the test files under the given folders with Node's own test runner (TypeScript through tsx).
// Usage: node scripts/test.mjs test/unit test/integration   (folders, or single .test.ts files)
//
// Two passes. Files that measure time or memory (they use test/helpers/timing, performance.now, the process's CPU or
// memory figures) run one at a time, alone, as the last pass: another test file beside them would be load they did
// not ask for. Every other file runs in the first pass, two files at a time (TOKENSCOPE_TEST_CONCURRENCY to change),
// which mostly overlaps one file's waiting (child processes, servers, timers) with another's work.
//
// The last line adds up both passes, as CI reads it: `N passed, N failed, N skipped` (a cancelled test counts as
// failed, a todo as skipped). The exit status is 1 when anything failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
const files = [];
function walk(dir) {
  let entries;
  try {
    if (statSync(dir).isFile()) {
      if (dir.endsWith('.test.ts')) files.push(dir);
      return;
    }
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

// The runner's own closing figures of each pass, written by a reporter of ours beside the one the user sees.
const totalsDir = mkdtempSync(join(tmpdir(), 'tokenscope-test-totals-'));
const totalsReporter = join(import.meta.dirname, 'test-totals-reporter.mjs');
const userReporters = passthrough.filter((a) => a.startsWith('--test-reporter='));
const reporters =
  userReporters.length === 0
    ? ['--test-reporter=spec', '--test-reporter-destination=stdout']
    : passthrough.some((a) => a.startsWith('--test-reporter-destination='))
      ? []
      : userReporters.map(() => '--test-reporter-destination=stdout');
const counted = { passed: 0, failed: 0, skipped: 0 };

function pass(list, n, what) {
  if (list.length === 0) return 0;
  console.log(`\n# ${what}: ${list.length} file${list.length === 1 ? '' : 's'}\n`);
  const totals = join(totalsDir, `pass-${n}-${list.length}.txt`);
  // A test stuck for 10 minutes fails (tests may set their own limit), and a file's process ends once its tests are
  // done even if something it started is still open: a hang fails the run instead of stopping it for good.
  const limits = ['--test-timeout=600000', '--test-force-exit'];
  const args = [
    '--import',
    loader,
    '--test',
    `--test-concurrency=${n}`,
    ...reporters,
    ...limits,
    ...passthrough,
    `--test-reporter=${totalsReporter}`,
    '--test-reporter-destination=stdout',
    ...list,
  ];
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...env, TOKENSCOPE_TEST_TOTALS: totals } });
  const status = r.status ?? 1;
  const figures = existsSync(totals) ? readTotals(readFileSync(totals, 'utf8')) : undefined;
  if (!figures) {
    // The runner ended before its closing figures (it crashed, or was killed): that counts as a failure.
    console.log(`# the test runner gave no totals for ${what} (exit ${r.status ?? r.signal}): counted as 1 failed`);
    counted.failed += 1;
    return status || 1;
  }
  counted.passed += figures.pass;
  counted.failed += figures.fail + figures.cancelled;
  counted.skipped += figures.skipped + figures.todo;
  if (status !== 0 && figures.fail + figures.cancelled === 0) {
    // Every test passed, yet the runner failed (a file that did not load, a reporter's error): the line says so too.
    console.log(`# the test runner exited ${r.status ?? r.signal} for ${what} with no failed test: counted as 1 failed`);
    counted.failed += 1;
  }
  return status || (figures.fail + figures.cancelled > 0 ? 1 : 0);
}

/** The runner's closing figures (the last value of each: a test's own diagnostic could come before them), if whole. */
function readTotals(text) {
  const got = {};
  for (const line of text.split('\n')) {
    const m = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(line);
    if (m) got[m[1]] = Number(m[2]);
  }
  const keys = ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo'];
  return keys.every((k) => Number.isInteger(got[k])) ? got : undefined;
}

const t0 = performance.now();
const first = pass(together, concurrency, `test files, ${concurrency} at a time`);
const second = pass(alone, 1, 'test files that measure time or memory, one at a time');
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
rmSync(totalsDir, { recursive: true, force: true });
const failed = first || second || counted.failed > 0;
console.log(`\n# ${files.length} test files in ${((performance.now() - t0) / 1000).toFixed(1)} s${failed ? ': FAILED' : ''}`);
console.log(`${counted.passed} passed, ${counted.failed} failed, ${counted.skipped} skipped`);
process.exit(failed ? first || second || 1 : 0);
