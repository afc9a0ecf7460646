// The test command's own reporting: every verdict of a test file reaches the runner, even with --test-force-exit
// (scripts/test.mjs uses it), which can otherwise end a file's process before its last reports are out.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../proxy/local-upstream';

/** The environment of a fresh test command (this process runs as a test file: its runner's marker is not passed on). */
function runnerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

test('a file of 400 tests with long names reports 400 verdicts, run after run', () => {
  const tmp = tempDir('tokenscope-runner-');
  try {
    const file = join(tmp.dir, 'many.test.mjs');
    writeFileSync(file, "import { test } from 'node:test';\nfor (let i = 0; i < 400; i++) test(`t${i} ${'x'.repeat(2000)}`, () => {});\n");
    const loader = join(__dirname, '..', '..', 'helpers', 'ts-register.mjs');
    // Without the loader's blocking stdout about half of such runs lose a few verdicts on Linux.
    for (let run = 0; run < 6; run++) {
      const r = spawnSync(process.execPath, ['--import', loader, '--test', '--test-force-exit', '--test-reporter=spec', file], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        env: runnerEnv(),
      });
      assert.equal(r.status, 0, r.stderr);
      const reported = r.stdout.split('\n').filter((l) => /^✔ t\d+ /.test(l)).length;
      assert.equal(reported, 400, `run ${run + 1}: ${reported} of 400 verdicts reported`);
    }
  } finally {
    tmp.remove();
  }
});

/** Runs the test command on a folder of test files; its output and exit status. */
function testCommand(dir: string, extra: string[] = []): { status: number | null; lines: string[]; out: string } {
  const script = join(__dirname, '..', '..', '..', 'scripts', 'test.mjs');
  const r = spawnSync(process.execPath, [script, dir, ...extra], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: runnerEnv() });
  const out = r.stdout + r.stderr;
  return { status: r.status, lines: r.stdout.trimEnd().split('\n'), out };
}

const CLOSING = /^\d+ passed, \d+ failed(, \d+ skipped)?$/;

test('the test command closes with one line adding up both passes, and exits 1 when a test failed', () => {
  const tmp = tempDir('tokenscope-runner-');
  try {
    // The first pass: files run together.
    writeFileSync(
      join(tmp.dir, 'a.test.ts'),
      "import { test } from 'node:test';\n" +
        "test('p1', () => {});\ntest('p2', () => {});\n" +
        "test('parent', async (t) => { await t.test('c1', () => {}); await t.test('c2', () => {}); });\n" +
        "test('s1', { skip: 'not here' }, () => {});\ntest('todo', { todo: true }, () => {});\n" +
        // A test's own diagnostic that looks like a closing figure changes nothing.
        "test('noise', (t) => { t.diagnostic('pass 999'); console.log('ℹ fail 999'); });\n",
    );
    writeFileSync(
      join(tmp.dir, 'b.test.ts'),
      "import { test } from 'node:test';\ntest('p', () => {});\ntest('f', () => { throw new Error('b failed'); });\n",
    );
    // The second pass: a file that measures time runs alone (spelled in pieces here, so that this file is not one).
    const now = ['performance', 'now()'].join('.');
    writeFileSync(
      join(tmp.dir, 'timed.test.ts'),
      `import { test } from 'node:test';\nconst t0 = ${now};\n` +
        `test('t1', () => {});\ntest('t2', () => { if (${now} >= t0) throw new Error('timed failed'); });\ntest('t3', { skip: true }, () => {});\n`,
    );
    const r = testCommand(tmp.dir);
    assert.equal(r.status, 1, r.out);
    // pass: p1 p2 parent c1 c2 noise (a) + p (b) + t1 (timed) = 8; failed: f, t2; skipped: s1, todo, t3.
    assert.equal(r.lines.at(-1), '8 passed, 2 failed, 3 skipped', r.out);
    assert.equal(r.lines.filter((l) => CLOSING.test(l)).length, 1, 'one closing line');
    assert.match(r.out, /# test files that measure time or memory, one at a time: 1 file/, 'both passes ran');
  } finally {
    tmp.remove();
  }
});

test('the test command exits 0 with "N passed, 0 failed" when all pass, and counts a file that does not load as failed', () => {
  const tmp = tempDir('tokenscope-runner-');
  try {
    writeFileSync(join(tmp.dir, 'ok.test.ts'), "import { test } from 'node:test';\ntest('a', () => {});\ntest('b', () => {});\n");
    const ok = testCommand(tmp.dir);
    assert.equal(ok.status, 0, ok.out);
    assert.equal(ok.lines.at(-1), '2 passed, 0 failed, 0 skipped', ok.out);

    writeFileSync(
      join(tmp.dir, 'broken.test.ts'),
      "import { test } from 'node:test';\nthrow new Error('cannot load');\ntest('never', () => {});\n",
    );
    const broken = testCommand(tmp.dir);
    assert.equal(broken.status, 1, broken.out);
    assert.match(broken.lines.at(-1)!, /^2 passed, [1-9]\d* failed, 0 skipped$/, broken.out);
  } finally {
    tmp.remove();
  }
});

test('the test command finds *.test.ts files in subfolders at any depth, and nothing else', () => {
  const tmp = tempDir('tokenscope-runner-');
  try {
    const ok = (name: string) => `import { test } from 'node:test';\ntest('${name}', () => {});\n`;
    mkdirSync(join(tmp.dir, 'proxy', 'ws', 'deep'), { recursive: true });
    writeFileSync(join(tmp.dir, 'top.test.ts'), ok('top'));
    writeFileSync(join(tmp.dir, 'proxy', 'one.test.ts'), ok('one'));
    writeFileSync(join(tmp.dir, 'proxy', 'ws', 'deep', 'deep.test.ts'), ok('deep'));
    // A helper beside the tests is not a test file: loading it as one would fail the run.
    writeFileSync(join(tmp.dir, 'proxy', 'ws', 'helper.ts'), "throw new Error('a helper was run as a test file');\n");
    const r = testCommand(tmp.dir);
    assert.equal(r.status, 0, r.out);
    assert.equal(r.lines.at(-1), '3 passed, 0 failed, 0 skipped', r.out);
    assert.match(r.out, /✔ deep /, r.out);
    // A subfolder given alone runs its own tree only.
    const sub = testCommand(join(tmp.dir, 'proxy'));
    assert.equal(sub.lines.at(-1), '2 passed, 0 failed, 0 skipped', sub.out);
  } finally {
    tmp.remove();
  }
});
