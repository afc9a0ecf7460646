/**
 * Crash safety: `tokenscope serve` is killed with SIGKILL mid-stream; after a restart everything that had arrived
 * is in the store, marked incomplete. The serving process is a real child (`tokenscope serve` run through tsx).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { test } from 'node:test';
import { main } from '../../src/cli/main';
import { openStore } from '../../src/core/capture/store';
import { exited, serveChild as serve, startUpstream, tempDir, waitFor } from '../unit/proxy/local-upstream';

test('SIGKILL mid-stream, restart: every byte the client saw is stored, the exchange is incomplete', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const timer = setInterval(() => res.write(`data: {"i":${i++}}\n\n`), 10);
    res.once('close', () => clearInterval(timer));
  });
  const data = tempDir();
  let first: ChildProcess | undefined;
  let second: ChildProcess | undefined;
  try {
    const s1 = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    first = s1.child;
    let seen = Buffer.alloc(0);
    const cut = new Promise<void>((resolve) => {
      const req = request(`${s1.url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        res.on('data', (c: Buffer) => {
          seen = Buffer.concat([seen, c]);
          if (seen.length > 200 && s1.child.exitCode === null && !s1.child.killed) s1.child.kill('SIGKILL');
        });
        res.once('error', () => resolve());
        res.once('close', () => resolve());
      });
      req.once('error', () => resolve());
      req.end('{"model":"moonshotai/kimi-k2-0905","stream":true}');
    });
    await cut;
    await exited(s1.child);
    assert.equal(s1.child.signalCode, 'SIGKILL');

    // Restart on the same data dir: it must come up and load the interrupted exchange.
    const s2 = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    second = s2.child;
    s2.child.kill('SIGTERM');
    const code = await exited(s2.child);
    assert.equal(code, 0, s2.output());

    const store = await openStore(data.dir, { analyze: false });
    const [x] = store.list();
    assert.equal(store.list().length, 1);
    assert.equal(x.state, 'incomplete');
    assert.equal(x.requestModel, 'moonshotai/kimi-k2-0905');
    assert.match(x.error!, /interrupted/);
    const stored = Buffer.from(store.readResponse(x.id)!.bytes);
    assert.ok(stored.length >= seen.length, `stored ${stored.length} bytes, the client saw ${seen.length}`);
    assert.ok(stored.subarray(0, seen.length).equals(seen), 'the stored body starts with exactly what the client saw');
    await store.close();

    // The CLI reads it back too.
    let listed = '';
    assert.equal(await main(['captures', '--data-dir', data.dir], { out: (t) => (listed += t + '\n'), err: () => undefined }), 0);
    assert.match(listed, new RegExp(`${x.id}.*200 incomplete`));
  } finally {
    for (const c of [first, second]) if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await up.close();
    await waitFor(() => [first, second].every((c) => !c || c.exitCode !== null || c.signalCode !== null), 'children to exit');
    data.remove();
  }
});
