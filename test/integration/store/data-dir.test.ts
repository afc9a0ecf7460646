/**
 * Data dirs that are not as expected, through the CLI: a damaged capture database (serve moves it aside and starts a
 * new one), a database serve cannot use at all (it forwards with capture off), a --data-dir that cannot hold a store
 * (/proc/1: one line and exit 2, at once), a read-only mount (captures and show still read it), and a mistyped
 * --data-dir for a read-only command (exit 2, not "no captures").
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliLines as cli } from '../../helpers/cli-main';
import { CaptureDb, DB_FILE } from '../../../src/core/capture/database';
import { openStore } from '../../../src/core/capture/store';
import { exited, rawRequest, serveChild as serve, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';
import { TS_LOADER } from '../../helpers/ts-loader';
import { repoRoot } from '../../helpers/shared';

/** Every path under `dir` with its size and mtime. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .map((p) => `${p} ${statSync(join(dir, p)).size} ${statSync(join(dir, p)).mtimeMs}`)
    .sort();
}

const answer = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
  req.resume();
  req.once('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}');
  });
};

test('a garbage capture database: serve moves it aside (named), starts a new one, forwards and captures', {
  timeout: 180_000,
}, async () => {
  const up = await startUpstream(answer);
  const data = tempDir();
  let child: ChildProcess | undefined;
  try {
    const garbage = Buffer.from('this is not a database '.repeat(400));
    writeFileSync(join(data.dir, DB_FILE), garbage);
    const s = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    child = s.child;
    const aside = readdirSync(data.dir).filter((f) => /^captures\.db\.corrupt-\d{8}-\d{6}$/.test(f));
    assert.equal(aside.length, 1, readdirSync(data.dir).join(' '));
    assert.ok(readFileSync(join(data.dir, aside[0])).equals(garbage), 'the damaged file is kept, as it was');
    assert.match(
      s.output(),
      new RegExp(`could not be read \\(file is not a database\\): it was moved aside to ${aside[0]} and a new one started`),
    );
    assert.match(s.output(), /capturing to /);
    const r = await rawRequest(`${s.url}/v1/chat/completions`, {
      body: '{"model":"m/one","messages":[]}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(r.status, 200);
    s.child.kill('SIGTERM');
    assert.equal(await exited(s.child), 0, s.output());
    const store = await openStore(data.dir, { readOnly: true, analyze: false });
    assert.equal(store.list().length, 1, 'the exchange is captured in the new database');
    await store.close();
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await up.close();
    data.remove();
  }
});

test('a capture database serve cannot use at all: it forwards anyway and says capture is off', { timeout: 180_000 }, async () => {
  const up = await startUpstream(answer);
  const data = tempDir();
  let child: ChildProcess | undefined;
  try {
    // Written by a newer Tokenscope: not damaged (never moved aside), just not this version's to write.
    CaptureDb.open(join(data.dir, DB_FILE)).close();
    const db = CaptureDb.open(join(data.dir, DB_FILE));
    db.write('PRAGMA user_version = 99');
    db.close();
    const s = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    child = s.child;
    assert.match(
      s.output(),
      /tokenscope: capture is off: the capture database in .* cannot be used \(.*newer Tokenscope.*\); the proxy forwards without recording/,
    );
    assert.doesNotMatch(s.output(), /capturing to/);
    const r = await rawRequest(`${s.url}/v1/chat/completions`, {
      body: '{"model":"m/one","messages":[]}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(r.status, 200);
    assert.match(r.body.toString(), /"content":"ok"/);
    s.child.kill('SIGTERM');
    assert.equal(await exited(s.child), 0, s.output());
    assert.ok(!readdirSync(data.dir).some((f) => f.includes('corrupt')), 'nothing was moved aside');
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await up.close();
    data.remove();
  }
});

test('serve --data-dir /proc/1 fails at once with one line (it spun at full CPU, deaf to Ctrl+C)', { timeout: 120_000 }, async (t) => {
  if (!existsSync('/proc/1')) return t.skip('no /proc/1 here (not Linux)');
  const child = spawn(
    process.execPath,
    [
      ...TS_LOADER,
      '--eval',
      `require('./src/cli/main').main(['serve', '--port', '0', '--data-dir', '/proc/1']).then((c) => process.exit(c))`,
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    const code = await exited(child);
    assert.equal(child.signalCode, null, `serve did not stop by itself in 60 s:\n${out}`);
    assert.equal(code, 2, out);
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 1, out);
    assert.match(
      lines[0],
      /^tokenscope serve: cannot open the capture store: cannot create folders in \/proc\/1: \/proc\/1 cannot hold a capture store$/,
    );
  } finally {
    clearTimeout(killer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

test('captures and show read a store on a read-only mount', { timeout: 120_000 }, async (t) => {
  const data = tempDir();
  try {
    const probe = spawnSync(
      'unshare',
      ['--map-root-user', '--mount', 'sh', '-c', `mount --bind '${data.dir}' '${data.dir}' && mount -o remount,bind,ro '${data.dir}'`],
      { encoding: 'utf8' },
    );
    if (probe.error || probe.status !== 0)
      return t.skip(`a read-only mount needs unshare with user and mount namespaces: ${probe.error?.message ?? probe.stderr.trim()}`);
    // Recorded by a process that then stops cleanly, as a proxy leaves a data dir: the database file holds every
    // capture, and SQLite's shared-memory file is gone (a read-only folder cannot have one made).
    const made = spawnSync(
      process.execPath,
      [
        ...TS_LOADER,
        '--eval',
        `(async () => {
  const store = await require('./src/core/capture/store').openStore(${JSON.stringify(data.dir)}, { analyze: false });
  const w = store.begin({ route: 'default', upstreamUrl: 'http://127.0.0.1:9/v1', method: 'POST', path: '/v1/chat/completions', requestHeaders: {}, requestBody: '{"model":"m/one"}' });
  w.responseStarted(200, { 'content-type': 'application/json' });
  w.chunk(Buffer.from('{"choices":[{"message":{"content":"ok"}}]}'));
  process.stdout.write((await w.finish()).id);
  await store.close();
})();`,
      ],
      { cwd: repoRoot, encoding: 'utf8' },
    );
    assert.equal(made.status, 0, made.stderr);
    const id = made.stdout.trim();
    assert.ok(!existsSync(join(data.dir, `${DB_FILE}-shm`)), 'no shared-memory file is left');
    const before = snapshot(data.dir);
    // The CLI in a mount namespace of its own, where the data dir is a read-only bind mount of itself.
    const run = (argv: string[]) => {
      const node = [
        process.execPath,
        ...TS_LOADER,
        '--eval',
        `require('./src/cli/main').main(${JSON.stringify(argv)}).then((c) => process.exit(c))`,
      ]
        .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
        .join(' ');
      const script = `mount --bind '${data.dir}' '${data.dir}' && mount -o remount,bind,ro '${data.dir}' && touch '${data.dir}/probe' 2>/dev/null && echo WRITABLE; exec ${node}`;
      return spawnSync('unshare', ['--map-root-user', '--mount', 'sh', '-c', script], { cwd: repoRoot, encoding: 'utf8' });
    };
    const listed = run(['captures', '--data-dir', data.dir]);
    assert.doesNotMatch(listed.stdout, /WRITABLE/, 'the mount is read-only');
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${id} .*200`));
    const shown = run(['show', id, '--data-dir', data.dir]);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^id +${id}`, 'm'));
    assert.deepEqual(snapshot(data.dir), before, 'nothing changed there');
  } finally {
    data.remove();
  }
});

test('a mistyped --data-dir for a read-only command is an error (exit 2), not "no captures"', async () => {
  const data = tempDir();
  try {
    const file = join(data.dir, 'a-file');
    writeFileSync(file, 'x');
    for (const dir of [join(data.dir, 'no-such-folder', 'data'), file, join(file, 'data')]) {
      for (const argv of [['captures'], ['captures', '--json'], ['show', 'abc'], ['providers']]) {
        const r = await cli([...argv, '--data-dir', dir]);
        assert.equal(r.code, 2, `${argv.join(' ')} --data-dir ${dir}: ${r.out}`);
        assert.equal(r.out, '');
        assert.equal(r.err.trim().split('\n').length, 1, r.err);
        assert.match(r.err, /cannot open the capture store: .*(does not exist, nor does the folder above it|is a file, not a folder)/);
      }
    }
    // A missing data dir whose folder exists is just an empty one (nothing created), and serve may still create it.
    const fresh = join(data.dir, 'fresh');
    const r = await cli(['captures', '--data-dir', fresh]);
    assert.equal(r.code, 0);
    assert.match(r.out, /^no captures in /);
    assert.ok(!existsSync(fresh));
  } finally {
    data.remove();
  }
});

test('a clean stop leaves no empty spare or journal files behind', { timeout: 180_000 }, async () => {
  const up = await startUpstream(answer);
  const data = tempDir();
  let child: ChildProcess | undefined;
  try {
    const s = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    child = s.child;
    for (let i = 0; i < 5; i++)
      assert.equal(
        (
          await rawRequest(`${s.url}/v1/chat/completions`, {
            body: `{"model":"m/one","n":${i}}`,
            headers: { 'content-type': 'application/json' },
          })
        ).status,
        200,
      );
    await waitFor(() => (s.output().match(/m\/one/g) ?? []).length >= 5, 'the exchanges to be printed');
    s.child.kill('SIGTERM');
    assert.equal(await exited(s.child), 0, s.output());
    const left = readdirSync(data.dir, { recursive: true }).map(String).sort();
    assert.deepEqual(
      left.filter((f) => !f.startsWith('bodies') && !f.startsWith(DB_FILE)),
      [],
      `left behind: ${left.join(' ')}`,
    );
    assert.equal(left.filter((f) => f.startsWith('bodies/')).length, 5);
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await up.close();
    data.remove();
  }
});
