/**
 * Regression tests for the capture store faults users hit (issue #11): read-only commands that changed the data dir,
 * a stale "interrupted" error, a log that never compacted, unbounded bodies and retention, open permissions, ids
 * used as paths, FIFOs, credentials in URLs and headers.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliLines as cli } from '../../helpers/cli-main';
import { analyzeExchange } from '../../../src/core/analyze';
import { LOG_FILE, SPARE_DIR } from '../../../src/core/capture/log';
import { DB_FILE, openStore } from '../../../src/core/capture/store';
import { repoRoot } from '../../helpers/shared';
import { tempDir } from '../proxy/local-upstream';
import { TS_LOADER } from '../../helpers/ts-loader';

const init = (over: Record<string, unknown> = {}) => ({
  route: 'openrouter',
  upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
  method: 'POST',
  path: '/openrouter/v1/chat/completions',
  requestHeaders: { 'content-type': 'application/json' },
  requestBody: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  agent: 'opencode',
  ...over,
});
const SSE = (i: number) => `data: {"id":"c","choices":[{"index":0,"delta":{"content":"part ${i} "}}]}\n\n`;
const DONE = 'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

/** Every path under `dir` with its type, size, mode and mtime: what "nothing changed" compares. */
function snapshot(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((d) => {
      const p = join(d.parentPath, d.name);
      const st = statSync(p);
      return `${p.slice(dir.length)} ${d.isDirectory() ? 'dir' : st.size} ${(st.mode & 0o777).toString(8)} ${st.mtimeMs}`;
    })
    .sort();
}

const SPARES = 4;

/** Resolves once this process's spare folder holds `count` body files (the store tops it up off the event loop). */
async function sparesReady(dir: string, count: number): Promise<void> {
  const own = join(dir, SPARE_DIR, String(process.pid));
  for (const t0 = Date.now(); !existsSync(own) || readdirSync(own).length < count; ) {
    if (Date.now() - t0 > 60_000) throw new Error(`the store did not top its spare files up to ${count} in 60 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('captures, show, lint ID and export change nothing in the data dir while the proxy streams; the exchange ends complete', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false, spareFiles: SPARES });
    const done = store.begin(init());
    done.responseStarted(200, { 'content-type': 'text/event-stream' });
    done.chunk(Buffer.from(SSE(0) + DONE));
    await done.finish();
    const live = store.begin(init());
    live.responseStarted(200, { 'content-type': 'text/event-stream' });
    live.chunk(Buffer.from(SSE(1)));
    // Everything the store still had to write is on disk, whatever the machine's load: the first exchange's end pass
    // (idle), the rows batched at the response start (written on the next turn of the event loop, ahead of this one:
    // store.ts `schedule`), and the spare body files topped up again after the first exchange took one.
    await store.idle();
    await new Promise((r) => setImmediate(r));
    await sparesReady(tmp.dir, SPARES);
    const before = snapshot(tmp.dir);
    for (let i = 0; i < 3; i++) {
      assert.equal((await cli(['captures', '--data-dir', tmp.dir])).code, 0);
      assert.equal((await cli(['captures', '--json', '--data-dir', tmp.dir])).code, 0);
      assert.equal((await cli(['show', live.id, '--data-dir', tmp.dir])).code, 0);
      assert.equal((await cli(['show', done.id, '--data-dir', tmp.dir])).code, 0);
      const lint = await cli(['lint', done.id, '--data-dir', tmp.dir]);
      assert.ok(lint.code === 0 || lint.code === 1, lint.err); // clean or with findings: it ran
      assert.equal((await cli(['export', done.id, '--format', 'har', '--data-dir', tmp.dir])).code, 0);
    }
    assert.deepEqual(snapshot(tmp.dir), before, 'no file created, renamed, deleted or written by a read-only command');

    live.chunk(Buffer.from(DONE));
    const x = await live.finish();
    assert.equal(x.state, 'complete');
    // The next exchanges still get their (pre-created) body files.
    for (let i = 0; i < 6; i++) {
      const w = store.begin(init());
      w.responseStarted(200, { 'content-type': 'text/event-stream' });
      w.chunk(Buffer.from(SSE(i) + DONE));
      const y = await w.finish();
      assert.equal(y.state, 'complete', y.error);
      assert.equal(Buffer.from(store.readResponse(y.id)!.bytes).toString(), SSE(i) + DONE);
    }
    await store.close();
    const again = await openStore(tmp.dir, { analyze: false, readOnly: true });
    const stored = again.get(live.id)!;
    assert.equal(stored.state, 'complete');
    assert.equal(stored.error, undefined, 'no stale "interrupted" error on an exchange that completed');
    assert.equal(again.list().length, 8);
    await again.close();
  } finally {
    tmp.remove();
  }
});

test('a read-only open of a missing data dir creates nothing', async () => {
  const tmp = tempDir();
  try {
    const dir = join(tmp.dir, 'none');
    assert.equal((await cli(['captures', '--data-dir', dir])).code, 0);
    assert.equal(existsSync(dir), false);
    const store = await openStore(dir, { readOnly: true });
    assert.deepEqual(store.list(), []);
    assert.throws(() => store.begin(init()), /read-only/);
    await store.close();
    assert.equal(existsSync(dir), false);
  } finally {
    tmp.remove();
  }
});

test('many updates of one exchange do not grow the store (the old log never compacted)', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin(init());
    for (let i = 0; i < 1100; i++) {
      w.annotate({ servedProvider: `p${i}` });
      if (i % 10 === 0) await new Promise((r) => setImmediate(r)); // each batch is written
    }
    await w.finish();
    await store.close();
    assert.equal(existsSync(join(tmp.dir, LOG_FILE)), false, 'no append-only log');
    const size = statSync(join(tmp.dir, DB_FILE)).size;
    assert.ok(size < 256 * 1024, `the database is ${size} bytes after 1,100 updates of one exchange`);
    const read = await openStore(tmp.dir, { readOnly: true });
    assert.equal(read.get(w.id)?.servedProvider, 'p1099');
    await read.close();
  } finally {
    tmp.remove();
  }
});

test('a body over the cap is cut (a finding says where), and retention does not wipe older captures for it', async () => {
  const tmp = tempDir();
  const warnings: string[] = [];
  try {
    const store = await openStore(tmp.dir, {
      analyze: false,
      maxBodyBytes: 4000,
      retention: { maxBytes: 40_000 },
      onWarning: (m) => warnings.push(m),
    });
    const small: string[] = [];
    for (let i = 0; i < 3; i++) {
      const w = store.begin(init());
      w.responseStarted(200, { 'content-type': 'text/event-stream' });
      w.chunk(Buffer.from(SSE(i) + DONE));
      small.push((await w.finish()).id);
    }
    const big = store.begin(init());
    big.responseStarted(200, { 'content-type': 'text/event-stream' });
    const piece = Buffer.from(SSE(7));
    for (let i = 0; i < 20_000; i++) big.chunk(piece); // ~1.2 MB decoded
    const x = await big.finish();
    assert.equal(x.responseBytes, 4000);
    assert.deepEqual(x.truncated, { keptBytes: 4000, receivedBytes: piece.length * 20_000 });
    assert.equal(store.readResponse(x.id)!.bytes.length, 4000);
    for (const id of small) assert.ok(store.get(id), 'older captures are kept');
    assert.deepEqual(warnings, []);
    const { analysis } = analyzeExchange(store.get(x.id)!, store.readResponse(x.id)!.bytes);
    const cut = analysis.findings.find((f) => f.rule === 'capture-truncated');
    assert.match(cut?.message ?? '', new RegExp(`first 4000 of ${piece.length * 20_000} decoded response bytes`));
    assert.ok(!analysis.findings.some((f) => f.severity === 'error'), 'the cut is no stream error');
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('retention by size removes the oldest and says what it removed', async () => {
  const tmp = tempDir();
  const warnings: string[] = [];
  try {
    const store = await openStore(tmp.dir, { analyze: false, retention: { maxBytes: 6000 }, onWarning: (m) => warnings.push(m) });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const w = store.begin(init());
      w.responseStarted(200, {});
      w.chunk(Buffer.alloc(600, 0x61));
      ids.push((await w.finish()).id);
    }
    assert.ok(!store.get(ids[0]), 'the oldest went');
    assert.ok(store.get(ids[7]), 'the newest stays');
    assert.ok(
      warnings.some((m) => /^retention removed \d+ captures? \(\d+ oldest to stay under 6 KiB; .* freed\)$/.test(m)),
      warnings.join('\n'),
    );
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('files are 0600 and folders 0700; an existing 0755/0644 data dir is made private on open', async () => {
  const tmp = tempDir();
  try {
    const fresh = join(tmp.dir, 'fresh');
    const store = await openStore(fresh, { analyze: false });
    const w = store.begin(init());
    w.responseStarted(200, {});
    w.chunk(Buffer.from('{}'));
    await w.finish();
    await store.close();
    const modes = (dir: string) =>
      [dir, ...readdirSync(dir, { recursive: true }).map((p) => join(dir, String(p)))].map(
        (p) => [p.slice(dir.length), statSync(p).isDirectory(), statSync(p).mode & 0o777] as const,
      );
    for (const [p, isDir, mode] of modes(fresh)) assert.equal(mode, isDir ? 0o700 : 0o600, `${p || '/'} is ${mode.toString(8)}`);
    assert.ok(
      modes(fresh).some(([, isDir]) => !isDir),
      'some files were written',
    );

    for (const [p, isDir] of modes(fresh)) chmodSync(join(fresh, p), isDir ? 0o755 : 0o644);
    const again = await openStore(fresh, { analyze: false });
    await again.close();
    for (const [p, isDir, mode] of modes(fresh))
      assert.equal(mode, isDir ? 0o700 : 0o600, `${p || '/'} is ${mode.toString(8)} after reopening`);
  } finally {
    tmp.remove();
  }
});

test('a log record whose id is a path (../../victim) is skipped: nothing outside the data dir is touched', async () => {
  const tmp = tempDir();
  const warnings: string[] = [];
  try {
    const dataDir = join(tmp.dir, 'data');
    mkdirSync(dataDir);
    const victim = join(tmp.dir, 'victim.cap');
    writeFileSync(victim, 'precious');
    const evil = {
      id: '../../victim',
      sessionId: 's',
      startedAt: 1,
      state: 'complete',
      route: 'x',
      upstreamUrl: 'u',
      method: 'GET',
      path: '/',
      requestHeaders: {},
    };
    appendFileSync(
      join(dataDir, LOG_FILE),
      JSON.stringify({ op: 'put', x: evil }) + '\n' + JSON.stringify({ op: 'del', id: '../../victim' }) + '\n',
    );
    assert.equal((await cli(['captures', '--data-dir', dataDir])).code, 0);
    const store = await openStore(dataDir, { analyze: false, retention: { maxAgeDays: 1 }, onWarning: (m) => warnings.push(m) });
    assert.equal(store.get('../../victim'), undefined);
    assert.equal(store.readResponse('../../victim'), undefined);
    assert.equal(store.list().length, 0);
    await store.close();
    assert.equal(readFileSync(victim, 'utf8'), 'precious');
    assert.ok(
      warnings.some((m) => m.includes('invalid id')),
      warnings.join('\n'),
    );
  } finally {
    tmp.remove();
  }
});

test('a body file replaced by a FIFO does not hang show', async (t) => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin(init());
    w.responseStarted(200, {});
    w.chunk(Buffer.from('{}'));
    const { id } = await w.finish();
    await store.close();
    const body = readdirSync(tmp.dir, { recursive: true })
      .map(String)
      .find((p) => p.includes(id));
    if (!body) return t.skip('this store keeps no per-exchange body file');
    rmSync(join(tmp.dir, body));
    try {
      execFileSync('mkfifo', [join(tmp.dir, body)]);
    } catch {
      return t.skip('mkfifo is not available');
    }
    // In a child: a blocking open would stall this process's event loop, and a timer here could not fire. A hang
    // never ends; the limit is generous because starting the child alone can take many seconds on a loaded machine.
    const child = spawnSync(
      process.execPath,
      [
        ...TS_LOADER,
        '--eval',
        `require('./src/cli/main').main(${JSON.stringify(['show', id, '--data-dir', tmp.dir])}).then((c) => process.exit(c))`,
      ],
      {
        cwd: repoRoot,
        timeout: 120_000,
        encoding: 'utf8',
      },
    );
    assert.equal(child.signal, null, 'show returned instead of hanging');
    assert.equal(child.status, 0, child.stderr);
  } finally {
    tmp.remove();
  }
});

test('credentials in the URL query and in any header named key, token, secret, auth or session never reach the disk', async () => {
  const tmp = tempDir();
  try {
    const secrets = [
      'qk_live_9f8e7d6c5b4a',
      'AMZTOKEN0123456789',
      'llmkey0123456789',
      'portkey0123456789',
      'sess0123456789ab',
      'tok0123456789abcd',
    ];
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin(
      init({
        path: `/v1/chat/completions?api_key=${secrets[0]}&model=x`,
        upstreamUrl: `https://example.invalid/v1/chat/completions?api_key=${secrets[0]}&access_token=${secrets[5]}`,
        requestHeaders: {
          'x-amz-security-token': secrets[1],
          'x-litellm-api-key': secrets[2],
          'x-portkey-api-key': secrets[3],
          'x-session-id': secrets[4],
          'x-ratelimit-remaining-tokens': '100',
        },
      }),
    );
    w.responseStarted(200, { 'x-auth-thing': secrets[5] });
    w.chunk(Buffer.from('{}'));
    const x = await w.finish();
    await store.close();
    assert.equal(x.requestHeaders['x-ratelimit-remaining-tokens'], '100', 'counters stay readable');
    assert.match(x.path, /api_key=%5BREDACTED%3Aquery-api_key%5D&model=x$/);
    for (const f of readdirSync(tmp.dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile())) {
      const text = readFileSync(join(f.parentPath, f.name)).toString('latin1');
      for (const s of secrets) assert.ok(!text.includes(s), `${f.name} holds ${s}`);
    }
  } finally {
    tmp.remove();
  }
});
