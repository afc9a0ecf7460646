/**
 * Two `tokenscope serve` processes on one data dir, streamed exchanges through both, `captures` and `show` running
 * meanwhile, and one proxy killed with SIGKILL mid-run: every exchange a client received in full is stored whole
 * (byte-identical) exactly once with no error, and the killed proxy's cut exchanges are marked incomplete with the
 * bytes that arrived. (A small soak: it runs in seconds.)
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { test } from 'node:test';
import { main } from '../../src/cli/main';
import { openStore } from '../../src/core/capture/store';
import { exited, serveChild as serve, startUpstream, tempDir, waitFor } from '../unit/proxy/local-upstream';

const EVENTS = 12;
const body = (r: string) => Array.from({ length: EVENTS }, (_, k) => `data: {"choices":[{"index":0,"delta":{"content":"${r}-${k} "}}]}\n\n`).join('') + 'data: [DONE]\n\n';

function exchange(url: string, r: string): Promise<{ r: string; bytes: Buffer; complete: boolean }> {
  return new Promise((resolve) => {
    let bytes = Buffer.alloc(0);
    const done = (complete: boolean) => resolve({ r, bytes, complete });
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.on('data', (c: Buffer) => (bytes = Buffer.concat([bytes, c])));
      res.once('end', () => done(res.complete));
      res.once('error', () => done(false));
      res.once('close', () => done(res.complete && bytes.length > 0));
    });
    req.once('error', () => done(false));
    req.end(JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: r }] }));
  });
}

test('two proxies on one data dir, read-only commands alongside, one proxy SIGKILLed: nothing lost, duplicated or falsely failed', async () => {
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
    const a = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    const b = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    children.push(a.child, b.child);
    let reading = true;
    const readers = (async () => {
      let runs = 0;
      while (reading) {
        const io = { out: () => undefined, err: (t: string) => assert.fail(`captures wrote an error: ${t}`) };
        assert.equal(await main(['captures', '--data-dir', data.dir, '--limit', '20'], io), 0);
        assert.equal(await main(['captures', '--broken', '--json', '--data-dir', data.dir], { out: () => undefined, err: () => undefined }), 0);
        runs++;
        await new Promise((r) => setTimeout(r, 20));
      }
      return runs;
    })();
    const CLIENTS = 6;
    const EACH = 8;
    setTimeout(() => b.child.kill('SIGKILL'), 700);
    const results = (
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          const out = [];
          for (let n = 0; n < EACH; n++) out.push(await exchange(n % 2 ? b.url : a.url, `c${c}n${n}`));
          return out;
        }),
      )
    ).flat();
    reading = false;
    assert.ok((await readers) > 0, 'the read-only commands ran');
    await exited(b.child);
    a.child.kill('SIGTERM');
    assert.equal(await exited(a.child), 0, a.output());

    // A writable open after both stopped marks what the killed proxy left streaming.
    const store = await openStore(data.dir, { analyze: false });
    const stored = store.list().map((x) => ({ x: store.get(x.id)!, bytes: Buffer.from(store.readResponse(x.id)!.bytes) }));
    await store.close();
    const byMarker = new Map<string, typeof stored>();
    for (const s of stored) {
      const r = /"content":"([^"]+)"/.exec(s.x.requestBody ?? '')?.[1] ?? '?';
      byMarker.set(r, [...(byMarker.get(r) ?? []), s]);
    }
    const full = results.filter((r) => r.complete);
    assert.ok(full.length >= CLIENTS * EACH * 0.5, `${full.length} of ${results.length} exchanges completed`);
    assert.ok(results.some((r) => !r.complete), 'the kill cut some exchanges');
    for (const r of full) {
      const hits = byMarker.get(r.r) ?? [];
      assert.equal(hits.length, 1, `${r.r} is stored exactly once`);
      assert.ok(hits[0].bytes.equals(r.bytes), `${r.r} is stored byte-identical`);
      assert.ok(r.bytes.equals(Buffer.from(body(r.r))), `${r.r}: the client got the whole stream`);
      assert.equal(hits[0].x.state, 'complete', `${r.r}: ${hits[0].x.error}`);
      assert.equal(hits[0].x.error, undefined);
    }
    for (const s of stored) {
      assert.notEqual(s.x.state, 'streaming', `${s.x.id} is left streaming`);
      if (s.x.state === 'incomplete') {
        const r = /"content":"([^"]+)"/.exec(s.x.requestBody ?? '')?.[1] ?? '?';
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
