/**
 * Another program holding the capture database's write lock (a backup tool, `sqlite3` in a terminal sitting in
 * `BEGIN IMMEDIATE;`) must not slow forwarding: the proxy never waits for the lock. Rows that cannot be written are
 * queued (in memory and in the journal) and written once the lock is free. A real `tokenscope serve` child forwards
 * to a local upstream while a second child holds the lock through libsql for several seconds.
 *
 * Goal: the delay the lock adds to an exchange stays under 50 ms. The same mix of requests (every fifth one refused for
 * a foreign Host, a 403 that never touches the store) runs for the same time just before the lock, as the baseline on
 * the same loaded machine: the lock's 95th percentile may exceed the baseline's by less than 50 ms, and no single
 * request may take a second (each waited for SQLite's busy timeout, 5 s, before the fix).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { test } from 'node:test';
import { DB_FILE, openStore } from '../../../src/core/capture/store';
import { exited, rawRequest, serveChild as serve, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';
import { repoRoot } from '../../helpers/shared';

const LOCK_MS = 5000;
/** How long requests run with the lock held (and, before it, without). */
const PHASE_MS = 3000;
const ADDED_MS = 50;

/** A child that takes the write lock on `db` through libsql and holds it for `ms`; resolves once it holds it. */
function holdLock(db: string, ms: number): Promise<ChildProcess> {
  const code = `const Database = require(${JSON.stringify(require.resolve('libsql', { paths: [repoRoot] }))});
const db = new Database(${JSON.stringify(db)});
db.pragma('busy_timeout = 5000');
db.exec('BEGIN IMMEDIATE');
db.exec("INSERT INTO meta (key, value) VALUES ('lock-test', 'held') ON CONFLICT (key) DO UPDATE SET value = excluded.value");
process.stdout.write('locked\\n');
setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (l) => l === 'locked' && resolve(child));
    child.once('exit', (c) => reject(new Error(`the lock holder exited with ${c} before it held the lock`)));
  });
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function storedCount(dir: string): Promise<number> {
  const store = await openStore(dir, { readOnly: true, analyze: false });
  try {
    return store.list().length;
  } finally {
    await store.close();
  }
}

/** The stored row count once it reaches `n` (or after 20 s). */
async function rowsReach(dir: string, n: number): Promise<number> {
  let count = 0;
  for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100)))
    if ((count = await storedCount(dir)) >= n) break;
  return count;
}

test('another process holding the database write lock adds under 50 ms to every exchange; the rows appear once it is released', {
  timeout: 180_000,
}, async (t) => {
  const up = await startUpstream((req, res) => {
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\ndata: [DONE]\n\n');
    });
  });
  const data = tempDir();
  const children: ChildProcess[] = [];
  try {
    const s = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    children.push(s.child);
    let n = 0;
    const one = async (foreign = false) => {
      const t0 = performance.now();
      const r = await rawRequest(`${s.url}/v1/chat/completions`, {
        body: JSON.stringify({ model: 'm/one', stream: true, messages: [{ role: 'user', content: `r${n++}` }] }),
        headers: { 'content-type': 'application/json', ...(foreign && { host: 'evil.example:80' }) },
      });
      return { ms: performance.now() - t0, status: r.status };
    };
    /** Requests one after another for `ms`, every fifth one refused; their latencies, and how many were captured. */
    const run = async (ms: number) => {
      const out: { ms: number; status: number; foreign: boolean }[] = [];
      for (const t0 = Date.now(); Date.now() - t0 < ms; ) {
        const foreign = out.length % 5 === 4;
        out.push({ ...(await one(foreign)), foreign });
      }
      return { out, captured: out.filter((d) => !d.foreign).length };
    };
    // Warm up, then the baseline: the same requests for the same time, without the lock.
    for (let i = 0; i < 10; i++) await one();
    const base = await run(PHASE_MS);
    const stored = await rowsReach(data.dir, 10 + base.captured);
    assert.equal(stored, 10 + base.captured, 'the rows before the lock are written');

    const holder = await holdLock(join(data.dir, DB_FILE), LOCK_MS);
    children.push(holder);
    const lockedAt = Date.now();
    const { out: during, captured } = await run(PHASE_MS);
    for (const d of during)
      assert.ok(
        d.ms < 1000,
        `a request took ${d.ms.toFixed(1)} ms during the lock (baseline p95 ${quantile(
          base.out.map((b) => b.ms),
          0.95,
        ).toFixed(1)} ms)`,
      );
    // The lock is real: none of the rows recorded meanwhile is in the database yet (a reader is not blocked by it).
    const whileLocked = await storedCount(data.dir);
    assert.ok(Date.now() - lockedAt < LOCK_MS, 'the lock was still held when the rows were counted');
    assert.ok(whileLocked <= stored, `${whileLocked} rows while locked: the lock holder did not hold the lock`);
    assert.equal(await exited(holder), 0);

    // Released: every capture is written, soon.
    assert.equal(
      await rowsReach(data.dir, stored + captured),
      stored + captured,
      'every exchange forwarded during the lock is stored once it is free',
    );

    const ms = (xs: { ms: number }[]) => xs.map((d) => d.ms);
    const worst = Math.max(...ms(during));
    const line = `baseline (${base.out.length} requests) p50 ${quantile(ms(base.out), 0.5).toFixed(1)} ms, p95 ${quantile(ms(base.out), 0.95).toFixed(1)} ms; during the lock (${during.length}) p50 ${quantile(ms(during), 0.5).toFixed(1)} ms, p95 ${quantile(ms(during), 0.95).toFixed(1)} ms, worst ${worst.toFixed(1)} ms`;
    t.diagnostic(line);
    assert.ok(during.length >= 10, `only ${during.length} requests went through during the lock: ${line}`);
    assert.ok(
      during.filter((d) => d.foreign).every((d) => d.status === 403),
      'foreign Host requests are refused',
    );
    assert.ok(
      during.filter((d) => !d.foreign).every((d) => d.status === 200),
      'every other request is answered',
    );
    assert.ok(quantile(ms(during), 0.95) < quantile(ms(base.out), 0.95) + ADDED_MS, `the lock added 50 ms or more: ${line}`);
    assert.ok(quantile(ms(during), 0.5) < quantile(ms(base.out), 0.5) + ADDED_MS, `the lock added 50 ms or more: ${line}`);

    // The user hears of the lock once, and of its end.
    assert.match(s.output(), /has been locked by another program for \d+ s: \d+ captures? waits? in memory and in the journal/);
    assert.match(s.output(), /the capture database is writable again: writing the \d+ captures? that waited/);
    s.child.kill('SIGTERM');
    assert.equal(await exited(s.child), 0, s.output());
    assert.doesNotMatch(s.output(), /not written|cannot rollback|SQLITE_/, 'a clean stop after the lock leaves nothing behind');
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await up.close();
    await waitFor(() => children.every((c) => c.exitCode !== null || c.signalCode !== null), 'children to exit');
    data.remove();
  }
});
