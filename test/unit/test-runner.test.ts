// The test command's own reporting: every verdict of a test file reaches the runner, even with --test-force-exit
// (scripts/test.mjs uses it), which can otherwise end a file's process before its last reports are out.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from './proxy/local-upstream';

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
    const loader = join(__dirname, '..', 'helpers', 'ts-register.mjs');
    // Without the loader's blocking stdout about half of such runs lose a few verdicts on Linux.
    for (let run = 0; run < 6; run++) {
      const r = spawnSync(process.execPath, ['--import', loader, '--test', '--test-force-exit', '--test-reporter=spec', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: runnerEnv() });
      assert.equal(r.status, 0, r.stderr);
      const reported = r.stdout.split('\n').filter((l) => /^✔ t\d+ /.test(l)).length;
      assert.equal(reported, 400, `run ${run + 1}: ${reported} of 400 verdicts reported`);
    }
  } finally {
    tmp.remove();
  }
});
