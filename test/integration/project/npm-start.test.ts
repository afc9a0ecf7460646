/**
 * `npm start` runs the capture proxy; stopping `npm start` stops the proxy. npm passes a SIGTERM only to the shell it
 * runs the script in, so a proxy started under that shell used to keep running, its port taken, after `npm start` was
 * killed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { test } from 'node:test';
import { repoRoot } from '../../helpers/shared';
import { tempDir } from '../../unit/proxy/local-upstream';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npmMissing = spawnSync(npm, ['--version'], { encoding: 'utf8' }).status === 0 ? undefined : 'npm is not on PATH';

/** True when something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

test('SIGTERM to `npm start` stops the proxy it started: the port closes within seconds', {
  skip: npmMissing && `skipped: ${npmMissing}`,
}, async () => {
  const data = tempDir();
  // Its own process group, so that whatever it leaves behind can be ended here, and only that.
  const child = spawn(npm, ['start', '--silent', '--', '--no-build', '--port', '0', '--data-dir', data.dir], {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not start the proxy in 120 s:\n${out}`)), 120_000);
      const check = () => {
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m && out.includes('Press Ctrl+C')) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      void exited.then((code) => reject(new Error(`npm start exited with ${code}:\n${out}`)));
    });
    assert.ok(await listening(port), 'the proxy listens');
    child.kill('SIGTERM');
    // A few seconds: the proxy closes its port once it sees npm's shell go (it looks four times a second).
    const deadline = Date.now() + 8_000;
    while ((await listening(port)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await listening(port), false, `the proxy still listens on ${port} after npm start was stopped:\n${out}`);
    await exited;
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The group is gone already: nothing was left behind.
    }
    data.remove();
  }
});
