/**
 * The multi-process soak: two `tokenscope serve` processes on one data dir, clients streaming through both, a loop of
 * read-only commands (`captures`, `captures --broken --json`, `show`) meanwhile, another program taking the
 * database's write lock now and then and sitting on it (as a backup tool or `sqlite3` in a terminal does), and one
 * proxy SIGKILLed at random moments and restarted on the same data dir, the first time with its clock 31 days ahead:
 * every exchange a client received in full is stored whole (byte-identical) exactly once with no error, the killed
 * proxy's cut exchanges are marked incomplete with the bytes that arrived, no exchange waits on the lock, and the
 * clock ahead removes nothing. `npm test` runs a small size; TOKENSCOPE_SOAK=full runs 20 clients × 50 exchanges.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { DB_FILE, openStore } from '../../../src/core/capture/store';
import type { CapturedExchange } from '../../../src/core/model';
import { exited, serveChild as serve, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';
import { repoRoot } from '../../helpers/shared';

const FULL = process.env.TOKENSCOPE_SOAK === 'full';
const CLIENTS = FULL ? 20 : 6;
const EACH = FULL ? 50 : 10;
const MAX_KILLS = FULL ? 12 : 2;
/**
 * When the second proxy is killed (it is restarted at once): once a random share of all exchanges is done, a share in
 * each of MAX_KILLS + 1 equal parts of the run but the last. Tied to the clients' progress, not to a pause: a pause
 * could outlast the whole run on a fast machine, and then nothing was ever killed.
 */
const KILL_AT = Array.from({ length: MAX_KILLS }, (_, k) => (k + 0.1 + 0.8 * Math.random()) / (MAX_KILLS + 1));

/** How long the lock holder sits on the write lock each time, and how long it lets go between two holds. */
const HOLD_MS = [1000, 2500] as const;
const FREE_MS = [300, 1500] as const;
/** The clock of the proxy's first restart, ahead of the real one. */
const CLOCK_AHEAD_MS = 31 * 86_400_000;

/**
 * Another program on the database: it takes the write lock (BEGIN IMMEDIATE, a write, then nothing) for HOLD_MS, lets
 * go for FREE_MS, and again, until stopped; it says how often and how long it held the lock.
 */
function lockHolder(db: string): { child: ChildProcess; stop(): Promise<{ holds: number; heldMs: number }> } {
  const code = `const Database = require(${JSON.stringify(require.resolve('libsql', { paths: [repoRoot] }))});
const db = new Database(${JSON.stringify(db)});
db.pragma('busy_timeout = 10000');
let holds = 0, heldMs = 0, stopping = false;
const r = (a, b) => a + Math.random() * (b - a);
function hold() {
  if (stopping) return;
  const t0 = Date.now();
  db.exec('BEGIN IMMEDIATE');
  db.exec("INSERT INTO meta (key, value) VALUES ('soak-lock', '" + t0 + "') ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  setTimeout(() => {
    db.exec('COMMIT');
    holds++;
    heldMs += Date.now() - t0;
    setTimeout(hold, r(${FREE_MS[0]}, ${FREE_MS[1]}));
  }, r(${HOLD_MS[0]}, ${HOLD_MS[1]}));
}
setTimeout(hold, 200);
process.stdin.on('data', () => undefined);
process.stdin.on('end', () => {
  stopping = true;
  const done = () => (db.inTransaction ? setTimeout(done, 20) : (process.stdout.write(JSON.stringify({ holds, heldMs }) + '\\n'), db.close(), process.exit(0)));
  done();
});`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const result = new Promise<{ holds: number; heldMs: number }>((resolve) =>
    createInterface({ input: child.stdout! }).once('line', (l) => resolve(JSON.parse(l))),
  );
  return { child, stop: () => (child.stdin!.end(), result) };
}

/** `tokenscope serve` in a child whose clock reads `aheadMs` ahead of the real one (Date.now, for the whole process). */
function serveAhead(args: string[], aheadMs: number): ReturnType<typeof serve> {
  return serve(args, { nodeArgs: ['--import', `data:text/javascript,const real = Date.now; Date.now = () => real() + ${aheadMs};`] });
}

const EVENTS = 12;
const body = (r: string) =>
  Array.from({ length: EVENTS }, (_, k) => `data: {"choices":[{"index":0,"delta":{"content":"${r}-${k} "}}]}\n\n`).join('') +
  'data: [DONE]\n\n';

/**
 * Each request's marker, in its body and in a header: a proxy killed before its body file exists (a burst beyond the
 * spare files opens one on demand) leaves a row with the request's headers and no body, which still says whose it is.
 */
const MARKER = 'x-soak-marker';
const markerOf = (x: CapturedExchange) => /"content":"([^"]+)"/.exec(x.requestBody ?? '')?.[1] ?? x.requestHeaders?.[MARKER] ?? '?';

/** `midStream(1)` once the first bytes have arrived, `midStream(-1)` once half the events have (or the exchange ended). */
function exchange(
  url: string,
  r: string,
  midStream: (d: 1 | -1) => void = () => undefined,
): Promise<{ r: string; bytes: Buffer; complete: boolean; ms: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let bytes = Buffer.alloc(0);
    let streaming = false;
    const done = (complete: boolean) => {
      if (streaming) (streaming = false), midStream(-1);
      resolve({ r, bytes, complete, ms: performance.now() - t0 });
    };
    const req = request(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', [MARKER]: r } },
      (res) => {
        res.on('data', (c: Buffer) => {
          bytes = Buffer.concat([bytes, c]);
          // Mid-stream: bytes came and at least half the events are still due (each comes 4 ms after the last).
          const events = bytes.toString().split('\n\n').length - 1;
          if (!streaming && events < EVENTS / 2) (streaming = true), midStream(1);
          else if (streaming && events >= EVENTS / 2) (streaming = false), midStream(-1);
        });
        res.once('end', () => done(res.complete));
        res.once('error', () => done(false));
        res.once('close', () => done(res.complete && bytes.length > 0));
      },
    );
    req.once('error', () => done(false));
    req.end(JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: r }] }));
  });
}

test('two proxies on one data dir, read-only commands alongside, one proxy SIGKILLed at random and restarted: nothing lost, duplicated or falsely failed', {
  timeout: FULL ? 900_000 : 120_000,
}, async (t) => {
  const up = await startUpstream((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const r = /"content":"([^"]+)"/.exec(text)?.[1] ?? 'x';
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const events = body(r).split(/(?<=\n\n)/);
      let i = 0;
      const timer = setInterval(() => {
        if (i < events.length) res.write(events[i++]);
        else clearInterval(timer), res.end();
      }, 4);
      res.once('close', () => clearInterval(timer));
    });
  });
  const data = tempDir();
  const children: ChildProcess[] = [];
  try {
    const t0 = Date.now();
    const args = ['--port', '0', '--data-dir', data.dir, '--upstream', up.url];
    const a = await serve(args);
    let b: Awaited<ReturnType<typeof serve>> | undefined = await serve(args);
    children.push(a.child, b.child);
    const holder = lockHolder(join(data.dir, DB_FILE));
    children.push(holder.child);
    let reading = true;
    let lastId: string | undefined;
    const readers = (async () => {
      let runs = 0;
      while (reading) {
        const io = { out: () => undefined, err: (t: string) => assert.fail(`captures wrote an error: ${t}`) };
        assert.equal(await main(['captures', '--data-dir', data.dir, '--limit', '20'], io), 0);
        let json = '';
        assert.equal(
          await main(['captures', '--broken', '--json', '--data-dir', data.dir], { out: (t) => (json += t), err: () => undefined }),
          0,
        );
        const listed = JSON.parse(json) as { id: string }[];
        if (listed[0]) lastId = listed[0].id;
        if (lastId)
          assert.equal(
            await main(['show', lastId, '--data-dir', data.dir], {
              out: () => undefined,
              err: (t) => assert.fail(`show wrote an error: ${t}`),
            }),
            0,
          );
        runs++;
        await new Promise((r) => setTimeout(r, 20));
      }
      return runs;
    })();
    // Random SIGKILLs of the second proxy, each followed by a restart on the same data dir.
    let clientsDone = false;
    let kills = 0;
    let ahead: Awaited<ReturnType<typeof serve>> | undefined;
    let exchangesDone = 0;
    const midStream = new Map<string, number>();
    const killer = (async () => {
      for (const share of KILL_AT) {
        while (!clientsDone && exchangesDone < share * CLIENTS * EACH) await new Promise((r) => setTimeout(r, 2));
        // Killed while a response is in its first half (a kill between exchanges, or after the last bytes were sent,
        // would cut nothing).
        const until = Date.now() + 5000;
        while (!clientsDone && b && (midStream.get(b.url) ?? 0) === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 1));
        if (clientsDone || !b) break;
        const dying = b;
        b = undefined; // new requests go to the first proxy until the second is back
        dying.child.kill('SIGKILL');
        await exited(dying.child);
        kills++;
        if (clientsDone) break;
        // The first restart runs with the clock 31 days ahead: its retention must remove nothing.
        const next = kills === 1 ? await serveAhead(args, CLOCK_AHEAD_MS) : await serve(args);
        children.push(next.child);
        if (kills === 1) ahead = next;
        b = next;
      }
    })();
    killer.catch(() => undefined); // awaited below, once the clients are done
    const results = (
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          const out = [];
          for (let n = 0; n < EACH; n++) {
            const url = n % 2 && b ? b.url : a.url;
            out.push(await exchange(url, `c${c}n${n}`, (d) => midStream.set(url, (midStream.get(url) ?? 0) + d)));
            exchangesDone++;
          }
          return out;
        }),
      )
    ).flat();
    clientsDone = true;
    await killer; // a restart that failed fails the test here
    const locking = await holder.stop();
    reading = false;
    const readRuns = await readers;
    assert.ok(readRuns > 0, 'the read-only commands ran');
    assert.ok(kills > 0, 'the second proxy was killed');
    for (const c of children.slice(1)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM'), await exited(c);
    a.child.kill('SIGTERM');
    assert.equal(await exited(a.child), 0, a.output());

    // A writable open after both stopped marks what the killed proxy left streaming.
    const store = await openStore(data.dir, { analyze: false });
    const stored = store.list().map((x) => ({ x: store.get(x.id)!, bytes: Buffer.from(store.readResponse(x.id)!.bytes) }));
    await store.close();
    const byMarker = new Map<string, typeof stored>();
    for (const s of stored) {
      const r = markerOf(s.x);
      byMarker.set(r, [...(byMarker.get(r) ?? []), s]);
    }
    const full = results.filter((r) => r.complete);
    const incomplete = stored.filter((s) => s.x.state === 'incomplete').length;
    const times = full.map((r) => r.ms).sort((x, y) => x - y);
    const line = `${results.length} exchanges (${CLIENTS} clients × ${EACH}), ${full.length} received in full, ${stored.length} stored, ${incomplete} marked incomplete, ${kills} SIGKILLs${ahead ? ' (the first restart with its clock 31 days ahead)' : ''}, ${readRuns} read-only loops, the write lock held ${locking.holds} times for ${(locking.heldMs / 1000).toFixed(1)} s by another process, exchange time p50 ${times[Math.floor(times.length / 2)].toFixed(0)} ms / p99 ${times[Math.floor(times.length * 0.99)].toFixed(0)} ms / max ${times.at(-1)!.toFixed(0)} ms, ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    t.diagnostic(line);
    if (FULL) console.log(`soak: ${line}`);
    assert.ok(full.length >= CLIENTS * EACH * 0.5, `${full.length} of ${results.length} exchanges completed`);
    assert.ok(locking.holds > 0, 'the other process held the write lock');
    // No exchange waited on the lock (SQLite's busy timeout made each wait 5 s): its 12 events take about 50 ms.
    assert.ok(times.at(-1)! < 4000, `an exchange took ${times.at(-1)!.toFixed(0)} ms: ${line}`);
    if (FULL) assert.ok(ahead, 'the proxy was restarted with its clock ahead');
    if (ahead) assert.doesNotMatch(ahead.output(), /retention removed/, 'the restart with its clock ahead removed nothing');
    if (ahead) assert.match(ahead.output(), /retention: the clock \([\d-]+\) is 31 days ahead of the newest capture/);
    assert.ok(
      results.some((r) => !r.complete),
      'the kills cut some exchanges',
    );
    for (const [r, hits] of byMarker) assert.ok(hits.length <= 1, `${r} is stored ${hits.length} times`);
    for (const r of full) {
      const hits = byMarker.get(r.r) ?? [];
      assert.equal(hits.length, 1, `${r.r} is stored exactly once`);
      assert.ok(hits[0].bytes.equals(r.bytes), `${r.r} is stored byte-identical`);
      assert.ok(r.bytes.equals(Buffer.from(body(r.r))), `${r.r}: the client got the whole stream`);
      assert.equal(hits[0].x.state, 'complete', `${r.r}: ${hits[0].x.error}`);
      assert.equal(hits[0].x.error, undefined);
    }
    // A cut exchange that reached the client at all is stored, with at least what the client got.
    for (const r of results.filter((x) => !x.complete && x.bytes.length > 0)) {
      const hits = byMarker.get(r.r) ?? [];
      assert.equal(hits.length, 1, `${r.r} (cut after ${r.bytes.length} bytes) is stored exactly once`);
      assert.ok(hits[0].bytes.subarray(0, r.bytes.length).equals(r.bytes), `${r.r}: stored what the client saw`);
    }
    for (const s of stored) {
      assert.notEqual(s.x.state, 'streaming', `${s.x.id} is left streaming`);
      if (s.x.state === 'incomplete') {
        const r = markerOf(s.x);
        const seen = results.find((x) => x.r === r)?.bytes ?? Buffer.alloc(0);
        assert.ok(s.bytes.length >= seen.length && s.bytes.subarray(0, seen.length).equals(seen), `${r}: stored what the client saw`);
        assert.equal(s.x.responseBytes, s.bytes.length);
      }
    }
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await up.close();
    await waitFor(() => children.every((c) => c.exitCode !== null || c.signalCode !== null), 'children to exit');
    data.remove();
  }
});
