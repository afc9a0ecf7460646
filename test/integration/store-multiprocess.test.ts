/**
 * The multi-process soak: two `tokenscope serve` processes on one data dir, clients streaming through both, a loop of
 * read-only commands (`captures`, `captures --broken --json`, `show`) meanwhile, and one proxy SIGKILLed at random
 * moments and restarted on the same data dir: every exchange a client received in full is stored whole
 * (byte-identical) exactly once with no error, and the killed proxy's cut exchanges are marked incomplete with the
 * bytes that arrived. `npm test` runs a small size; TOKENSCOPE_SOAK=full runs the 20 clients × 50 exchanges.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { test } from 'node:test';
import { main } from '../../src/cli/main';
import { openStore } from '../../src/core/capture/store';
import type { CapturedExchange } from '../../src/core/model';
import { exited, serveChild as serve, startUpstream, tempDir, waitFor } from '../unit/proxy/local-upstream';

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

const EVENTS = 12;
const body = (r: string) => Array.from({ length: EVENTS }, (_, k) => `data: {"choices":[{"index":0,"delta":{"content":"${r}-${k} "}}]}\n\n`).join('') + 'data: [DONE]\n\n';

/**
 * Each request's marker, in its body and in a header: a proxy killed before its body file exists (a burst beyond the
 * spare files opens one on demand) leaves a row with the request's headers and no body, which still says whose it is.
 */
const MARKER = 'x-soak-marker';
const markerOf = (x: CapturedExchange) => /"content":"([^"]+)"/.exec(x.requestBody ?? '')?.[1] ?? x.requestHeaders?.[MARKER] ?? '?';

/** `midStream(1)` once the first bytes have arrived, `midStream(-1)` once half the events have (or the exchange ended). */
function exchange(url: string, r: string, midStream: (d: 1 | -1) => void = () => undefined): Promise<{ r: string; bytes: Buffer; complete: boolean }> {
  return new Promise((resolve) => {
    let bytes = Buffer.alloc(0);
    let streaming = false;
    const done = (complete: boolean) => {
      if (streaming) (streaming = false), midStream(-1);
      resolve({ r, bytes, complete });
    };
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', [MARKER]: r } }, (res) => {
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
    });
    req.once('error', () => done(false));
    req.end(JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: r }] }));
  });
}

test('two proxies on one data dir, read-only commands alongside, one proxy SIGKILLed at random and restarted: nothing lost, duplicated or falsely failed', { timeout: FULL ? 900_000 : 120_000 }, async (t) => {
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
        else (clearInterval(timer), res.end());
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
    let reading = true;
    let lastId: string | undefined;
    const readers = (async () => {
      let runs = 0;
      while (reading) {
        const io = { out: () => undefined, err: (t: string) => assert.fail(`captures wrote an error: ${t}`) };
        assert.equal(await main(['captures', '--data-dir', data.dir, '--limit', '20'], io), 0);
        let json = '';
        assert.equal(await main(['captures', '--broken', '--json', '--data-dir', data.dir], { out: (t) => (json += t), err: () => undefined }), 0);
        const listed = JSON.parse(json) as { id: string }[];
        if (listed[0]) lastId = listed[0].id;
        if (lastId) assert.equal(await main(['show', lastId, '--data-dir', data.dir], { out: () => undefined, err: (t) => assert.fail(`show wrote an error: ${t}`) }), 0);
        runs++;
        await new Promise((r) => setTimeout(r, 20));
      }
      return runs;
    })();
    // Random SIGKILLs of the second proxy, each followed by a restart on the same data dir.
    let clientsDone = false;
    let kills = 0;
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
        const next = await serve(args);
        children.push(next.child);
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
    const line = `${results.length} exchanges (${CLIENTS} clients × ${EACH}), ${full.length} received in full, ${stored.length} stored, ${incomplete} marked incomplete, ${kills} SIGKILLs, ${readRuns} read-only loops, ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    t.diagnostic(line);
    if (FULL) console.log(`soak: ${line}`);
    assert.ok(full.length >= CLIENTS * EACH * 0.5, `${full.length} of ${results.length} exchanges completed`);
    assert.ok(results.some((r) => !r.complete), 'the kills cut some exchanges');
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
