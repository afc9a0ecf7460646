/**
 * The window between an exchange's first bytes and its database row: the row is written a turn of the event loop
 * after the bytes went out, so a SIGKILL can land before it. A child process records exchanges and kills itself in
 * that very tick (no timing luck involved); a restart must list them from the journal, with their bytes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { tempDir } from '../../unit/proxy/local-upstream';
import { TS_LOADER } from '../../helpers/ts-loader';

const repoRoot = resolve(__dirname, '..', '..', '..');

/** Runs `body` (TypeScript, with `store` open on `dir`) in a child that ends by SIGKILLing itself. */
function childThatDies(dir: string, body: string, storeOptions: Record<string, unknown> = {}): Promise<NodeJS.Signals | null> {
  const code = `const { openStore } = require('./src/core/capture/store');
(async () => {
  const store = await openStore(${JSON.stringify(dir)}, ${JSON.stringify({ analyze: false, ...storeOptions })});
  const begin = (path) => store.begin({ route: 'default', upstreamUrl: 'http://127.0.0.1:9/v1', method: 'POST', path, requestHeaders: { 'content-type': 'application/json' }, requestBody: '{"model":"m/one","stream":true}', agent: 'curl' });
  ${body}
  process.kill(process.pid, 'SIGKILL');
})();`;
  const child = spawn(process.execPath, [...TS_LOADER, '--eval', code], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((r) => child.once('exit', (_code, signal) => r(signal)));
}

const SSE = Buffer.from('data: {"choices":[{"delta":{"content":"hi"}}]}\n\n');

test('SIGKILL in the tick of the first bytes, before any row is written: a restart lists the exchanges from the journal, bytes and all', async () => {
  const tmp = tempDir();
  try {
    const signal = await childThatDies(
      tmp.dir,
      `const a = begin('/v1/chat/completions');
  a.responseStarted(200, { 'content-type': 'text/event-stream' });
  a.chunk(Buffer.from(${JSON.stringify(SSE.toString())}));
  const b = begin('/v1/responses');
  b.responseStarted(200, { 'content-type': 'text/event-stream' });
  b.chunk(Buffer.from(${JSON.stringify(SSE.toString())}));
  b.ended();`,
    );
    assert.equal(signal, 'SIGKILL');

    // The window is real: a read-only open (which repairs nothing) finds no row at all.
    const reader = await openStore(tmp.dir, { analyze: false, readOnly: true });
    assert.equal(reader.list().length, 0, 'no row was written before the kill');
    await reader.close();

    const store = await openStore(tmp.dir, { analyze: false });
    try {
      const byPath = new Map(store.list().map((x) => [x.path, x]));
      assert.equal(byPath.size, 2, 'both exchanges are listed');
      const cut = byPath.get('/v1/chat/completions')!;
      assert.equal(cut.state, 'incomplete');
      assert.equal(cut.status, 200);
      assert.match(cut.error!, /interrupted: Tokenscope stopped while the response was streaming/);
      assert.equal(cut.agent, 'curl');
      assert.ok(Buffer.from(store.readResponse(cut.id)!.bytes).equals(SSE), 'the bytes the client saw are stored');
      assert.equal(store.get(cut.id)!.requestBody, '{"model":"m/one","stream":true}');
      const whole = byPath.get('/v1/responses')!;
      assert.equal(whole.state, 'complete', 'an exchange whose end was journaled is complete');
      assert.equal(whole.responseBytes, SSE.length);
      assert.ok(Buffer.from(store.readResponse(whole.id)!.bytes).equals(SSE));
      assert.deepEqual(
        readdirSync(join(tmp.dir, 'journal')).filter((f) => !f.startsWith(`${process.pid}-`)),
        [],
        "the dead process's journal is gone once replayed",
      );
    } finally {
      await store.close();
    }
    // Replayed once: a second restart changes nothing.
    const again = await openStore(tmp.dir, { analyze: false });
    assert.equal(again.list().length, 2);
    await again.close();
  } finally {
    tmp.remove();
  }
});

test('an exchange deleted before the kill is not brought back by the journal', async () => {
  const tmp = tempDir();
  try {
    const signal = await childThatDies(
      tmp.dir,
      `const a = begin('/v1/deleted');
  a.responseStarted(200, { 'content-type': 'text/event-stream' });
  a.chunk(Buffer.from('data: 1\\n\\n'));
  await a.finish();
  await new Promise((r) => setTimeout(r, 30));
  await store.delete(a.id);
  const b = begin('/v1/kept');
  b.responseStarted(200, {});
  b.chunk(Buffer.from('data: 2\\n\\n'));`,
    );
    assert.equal(signal, 'SIGKILL');
    const store = await openStore(tmp.dir, { analyze: false });
    try {
      assert.deepEqual(
        store.list().map((x) => x.path),
        ['/v1/kept'],
      );
      assert.ok(existsSync(join(tmp.dir, 'bodies', `${store.list()[0].id}.cap`)), 'the kept body file is there');
    } finally {
      await store.close();
    }
  } finally {
    tmp.remove();
  }
});

test("the status and the end go in the body file's write of the bytes: killed with neither in the journal, a restart has both", async () => {
  const tmp = tempDir();
  try {
    // As the relay records them: the status held (the journal's line of it waits for its next write), then `whole`'s
    // start, bytes and end in one read, and `cut`'s start and bytes released (the relay does so before the socket
    // write). Nothing else writes to the journal before the kill, and the spares have not got their names yet.
    const signal = await childThatDies(
      tmp.dir,
      `const whole = begin('/v1/whole');
  const cut = begin('/v1/cut');
  whole.responseStarted(200, { 'content-type': 'text/event-stream' }, undefined, true);
  whole.cork();
  whole.chunk(Buffer.from(${JSON.stringify(SSE.toString())}));
  whole.ended();
  cut.responseStarted(201, { 'content-type': 'text/event-stream' }, undefined, true);
  cut.cork();
  cut.chunk(Buffer.from(${JSON.stringify(SSE.toString())}));
  cut.uncork();`,
    );
    assert.equal(signal, 'SIGKILL');
    const [journal] = readdirSync(join(tmp.dir, 'journal'));
    const lines = readFileSync(join(tmp.dir, 'journal', journal), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => `${l.op} ${l.x.path} ${typeof l.spare}`),
      ['put /v1/whole string', 'put /v1/cut string'],
      'the journal holds the two exchanges and their spare files, and neither status nor end',
    );

    const store = await openStore(tmp.dir, { analyze: false });
    try {
      const byPath = new Map(store.list().map((x) => [x.path, x]));
      const whole = byPath.get('/v1/whole')!;
      assert.equal(whole.state, 'complete', "the file's end mark: the client had the whole response");
      assert.equal(whole.status, 200);
      assert.equal(whole.responseBytes, SSE.length);
      assert.ok(Buffer.from(store.readResponse(whole.id)!.bytes).equals(SSE));
      const cut = byPath.get('/v1/cut')!;
      assert.equal(cut.state, 'incomplete');
      assert.equal(cut.status, 201, "the status from the file's mark");
      assert.match(cut.error!, /while the response was streaming/);
      assert.ok(Buffer.from(store.readResponse(cut.id)!.bytes).equals(SSE), 'the bytes the client could see are stored');
      assert.deepEqual(
        readdirSync(join(tmp.dir, 'spare')).filter((d) => d !== String(process.pid)),
        [],
        "the dead process's spare folder is gone",
      );
    } finally {
      await store.close();
    }
  } finally {
    tmp.remove();
  }
});

test('beyond the spare body files (the file is created on demand), the request body is on disk before the response starts', async () => {
  const tmp = tempDir();
  try {
    // No spares at all: every exchange's file is created off the loop; the kill comes while the upstream "thinks",
    // once the body file holds the request (a fixed 100 ms raced the file's creation on a loaded machine). Written
    // only with the first response byte, as before, it never would: the kill then comes after 10 s and the test fails.
    const wait = `const a = begin('/v1/on-demand');
  const file = require('node:path').join(${JSON.stringify(tmp.dir)}, 'bodies', a.id + '.cap');
  const size = () => { try { return require('node:fs').statSync(file).size; } catch { return 0; } };
  const { FRAME_HEADER } = require('./src/core/capture/log');
  for (const end = Date.now() + 10_000; size() < FRAME_HEADER + 31 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));`;
    const signal = await childThatDies(tmp.dir, wait, { spareFiles: 0 });
    assert.equal(signal, 'SIGKILL');
    const store = await openStore(tmp.dir, { analyze: false });
    try {
      const [x] = store.list();
      assert.equal(x.path, '/v1/on-demand');
      assert.equal(x.state, 'incomplete');
      assert.match(x.error!, /while the request was pending/);
      assert.equal(store.get(x.id)!.requestBody, '{"model":"m/one","stream":true}', 'the request body survived');
    } finally {
      await store.close();
    }
  } finally {
    tmp.remove();
  }
});
