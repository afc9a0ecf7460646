import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { findCapture, openStore, type StoreChange } from '../../../src/core/capture/store';
import { LOG_FILE, decodeFrames, frameHeader } from '../../../src/core/capture/log';
import { containsSecret } from '../../../src/core/redact';
import { tempDir } from '../proxy/local-upstream';
import { seedExchanges, setRecorderPid } from './db-helpers';
import { scheduledNow } from '../../helpers/timing';

const KEY = 'sk-or-v1-0123456789abcdef0123456789abcdef';
const init = (over: Record<string, unknown> = {}) => ({
  route: 'openrouter',
  upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
  method: 'POST',
  path: '/openrouter/v1/chat/completions',
  requestHeaders: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  requestBody: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: `my key is ${KEY}` }] }),
  agent: 'opencode',
  ...over,
});

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

test('an exchange round-trips: metadata, request body, response bytes with chunk timing, change events', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const events: StoreChange['kind'][] = [];
    store.onDidChange((e) => events.push(e.kind));
    const w = store.begin(init());
    w.responseStarted(200, { 'content-type': 'text/event-stream', 'set-cookie': 'session=abc' });
    w.chunk(Buffer.from('data: {"a":1}\n\n'));
    w.chunk(Buffer.from('data: [DONE]\n\n'));
    assert.equal(store.get(w.id)?.state, 'streaming');
    const x = await w.finish();
    assert.equal(x.state, 'complete');
    assert.equal(x.responseBytes, 29);
    assert.deepEqual(events, ['added', 'updated', 'updated']);
    await store.close();

    const again = await openStore(tmp.dir, { analyze: false });
    const got = again.get(w.id)!;
    assert.equal(got.status, 200);
    assert.equal(got.responseHeaders?.['set-cookie'], '[REDACTED:set-cookie-header]');
    assert.match(got.requestBody!, /kimi-k2-0905/);
    const res = again.readResponse(w.id)!;
    assert.equal(Buffer.from(res.bytes).toString(), 'data: {"a":1}\n\ndata: [DONE]\n\n');
    assert.deepEqual(
      res.chunks.map((c) => [c.offset, c.length]),
      [
        [0, 15],
        [15, 14],
      ],
    );
    assert.ok(res.chunks[1].t >= res.chunks[0].t);
    assert.equal(again.list()[0].requestBody, undefined, 'list() carries metadata only');
    assert.equal(findCapture(again, w.id.slice(0, 10)).id, w.id);
    await again.close();
  } finally {
    tmp.remove();
  }
});

test('keys are redacted before anything touches disk', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin(init({ requestHeaders: { 'x-api-key': KEY, 'x-custom': `token ${KEY}`, cookie: 'a=b' } }));
    // Checked while the exchange is still open: nothing waits for finish to be redacted.
    for (const f of allFiles(tmp.dir)) assert.ok(!containsSecret(readFileSync(f, 'utf8')), `${f} holds a key`);
    w.responseStarted(200, {});
    await new Promise((r) => setImmediate(r)); // the row is written
    for (const f of allFiles(tmp.dir)) assert.ok(!readFileSync(f, 'latin1').includes('a=b'), `${f}: cookie value written`);
    await w.finish();
    await store.close();
    for (const f of allFiles(tmp.dir)) assert.ok(!readFileSync(f, 'utf8').includes(KEY.slice(6)), `${f} holds a key`);
  } finally {
    tmp.remove();
  }
});

test('an exchange the process never finished loads as incomplete with every byte that arrived', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin(init());
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    w.chunk(Buffer.from('data: {"x":1}\n\n'));
    w.chunk(Buffer.from('data: {"x":2}\n\n'));
    // No finish, no close: the writes are already in the files, as after a kill. The recorder is made a process that
    // has exited (a live one may still be streaming: see the multi-process tests).
    await new Promise((r) => setImmediate(r));
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    setRecorderPid(tmp.dir, w.id, dead);
    const after = await openStore(tmp.dir, { analyze: false });
    const x = after.get(w.id)!;
    assert.equal(x.state, 'incomplete');
    assert.equal(x.responseBytes, 30);
    assert.match(x.error!, /interrupted/);
    assert.equal(Buffer.from(after.readResponse(w.id)!.bytes).toString(), 'data: {"x":1}\n\ndata: {"x":2}\n\n');
    await after.close();
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('a response that ended is "complete" in the database before the client sees the end: a kill then leaves no false "interrupted"', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const seen: string[] = [];
    store.onDidChange((e) => seen.push(e.exchange.state));
    const w = store.begin(init());
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    w.chunk(Buffer.from('data: {"x":1}\n\ndata: [DONE]\n\n'));
    w.ended!(); // what the proxy calls right before it ends the client's response
    assert.ok(!seen.includes('complete'), 'listeners still see it streaming until finish');
    // The process dies here (SIGKILL): the next writable open finds a finished row, not a streaming one.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    setRecorderPid(tmp.dir, w.id, dead);
    const after = await openStore(tmp.dir, { analyze: false });
    const x = after.get(w.id)!;
    assert.equal(x.state, 'complete');
    assert.equal(x.error, undefined);
    assert.equal(x.responseBytes, 29);
    await after.close();
    // Had it not died, finish records the outcome and tells listeners.
    const done = await w.finish({ error: 'the upstream said so' });
    assert.equal(done.state, 'error');
    assert.equal(seen.at(-1), 'error');
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('a data dir of the NDJSON version: imported on first open (corrupt and torn lines skipped with a warning), then left alone', async () => {
  const tmp = tempDir();
  try {
    const ok = {
      id: '0mx2r5k0y009e8',
      sessionId: 's0mx2r5k0y009e8',
      startedAt: Date.now() - 1000,
      state: 'complete',
      status: 200,
      route: 'openrouter',
      upstreamUrl: 'u',
      method: 'POST',
      path: '/v1/chat/completions',
      requestHeaders: {},
    };
    const log = join(tmp.dir, LOG_FILE);
    writeFileSync(
      log,
      JSON.stringify({ op: 'put', x: ok, reqBytes: 0 }) +
        '\n' +
        JSON.stringify({ op: 'patch', id: ok.id, x: { servedProvider: 'Chutes' } }) +
        '\n',
    );
    appendFileSync(log, '{"op":"put","x":{garbage\n');
    appendFileSync(log, '{"op":"patch","id":"torn"'); // the process died mid-line
    const before = readFileSync(log);

    const warnings: string[] = [];
    const s2 = await openStore(tmp.dir, { analyze: false, onWarning: (m) => warnings.push(m) });
    assert.equal(warnings.length, 2, warnings.join('\n'));
    assert.match(warnings[0], /line \d+ is corrupt and was skipped/);
    assert.equal(s2.get(ok.id)?.servedProvider, 'Chutes');
    const b = s2.begin(init());
    b.responseStarted(201, {});
    await b.finish();
    await s2.close();

    const s3 = await openStore(tmp.dir, { analyze: false, onWarning: (m) => warnings.push(m) });
    assert.deepEqual(
      s3
        .list()
        .map((x) => x.status)
        .sort(),
      [200, 201],
    );
    await s3.close();
    assert.equal(warnings.length, 2, 'the log is read once');
    assert.ok(readFileSync(log).equals(before), 'the old log is left as it was');
  } finally {
    tmp.remove();
  }
});

test('exchanges group into sessions by agent and idle time, across restarts', async () => {
  const tmp = tempDir();
  try {
    const t = Date.now() - 3 * 3600_000;
    const store = await openStore(tmp.dir, { analyze: false, sessionIdleMs: 30 * 60_000 });
    const ids = [
      store.begin(init({ startedAt: t })),
      store.begin(init({ startedAt: t + 10 * 60_000 })),
      store.begin(init({ startedAt: t + 12 * 60_000, agent: 'claude-code' })),
      store.begin(init({ startedAt: t + 90 * 60_000 })),
    ];
    for (const w of ids) await w.finish();
    const s = ids.map((w) => store.get(w.id)!.sessionId);
    assert.equal(s[0], s[1]);
    assert.notEqual(s[2], s[0]);
    assert.notEqual(s[3], s[0]);
    await store.close();
    const again = await openStore(tmp.dir, { analyze: false });
    const next = again.begin(init({ startedAt: t + 100 * 60_000 }));
    assert.equal(again.get(next.id)!.sessionId, s[3], 'the session continues after a restart');
    await again.close();
  } finally {
    tmp.remove();
  }
});

test('retention drops the oldest finished exchanges by size and by age, files included', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const old = store.begin(init({ startedAt: Date.now() - 40 * 86_400_000 }));
    await old.finish();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const w = store.begin(init({ startedAt: Date.now() - (5 - i) * 1000 }));
      w.responseStarted(200, {});
      w.chunk(Buffer.alloc(10_000, 97));
      await w.finish();
      ids.push(w.id);
    }
    await store.close();
    const deleted: string[] = [];
    const warnings: string[] = [];
    const s2 = await openStore(tmp.dir, {
      analyze: false,
      retention: { maxAgeDays: 30, maxBytes: 25_000 },
      onWarning: (m) => warnings.push(m),
    });
    // One start removes at most a tenth of the captures on its own (none of 6): the rest is held back, and said so.
    assert.equal(s2.list().length, 6);
    assert.ok(
      warnings.some((m) =>
        /^retention held back 1 capture older than 30 days and the captures over 25 KiB: .*`tokenscope captures --prune --max-size-mb 0.024` removes them$/.test(
          m,
        ),
      ),
      warnings.join('\n'),
    );
    s2.onDidChange((e) => e.kind === 'deleted' && deleted.push(e.exchange.id));
    // With the user's consent (`captures --prune`) they go.
    const pruned = await s2.prune();
    assert.equal(pruned.removed, 6 - s2.list().length);
    deleted.length = 0;
    const kept = s2.list().map((x) => x.id);
    assert.ok(!kept.includes(old.id), 'older than maxAgeDays');
    assert.ok(kept.length >= 1 && kept.length <= 2, `kept ${kept.length}`);
    assert.deepEqual(kept, ids.slice(-kept.length).reverse(), 'the newest are kept');
    assert.ok(!existsSync(join(tmp.dir, 'bodies', `${ids[0]}.cap`)));
    await s2.delete(kept[0]);
    assert.deepEqual(deleted, [kept[0]]);
    assert.equal(s2.get(kept[0]), undefined);
    await s2.close();
  } finally {
    tmp.remove();
  }
});

test('a full disk is one clear warning, the exchange says what was lost, and the store keeps working', async (t) => {
  if (!existsSync('/dev/full')) return t.skip('/dev/full is not available to simulate ENOSPC');
  const tmp = tempDir();
  try {
    const warnings: string[] = [];
    // No spare files: each body file is created under its own name, which the test points at /dev/full.
    const store = await openStore(tmp.dir, { analyze: false, spareFiles: 0, onWarning: (m) => warnings.push(m) });
    // Every write to the first exchange's body fails with ENOSPC, as on a full disk.
    const off = store.onDidChange((e) => e.kind === 'added' && symlinkSync('/dev/full', join(tmp.dir, 'bodies', `${e.exchange.id}.cap`)));
    const w = store.begin(init());
    off();
    w.responseStarted(200, {});
    w.chunk(Buffer.from('data: lost\n\n'));
    w.chunk(Buffer.from('data: lost too\n\n'));
    const x = await w.finish();
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /disk is full.*proxy keeps forwarding/);
    assert.equal(x.state, 'incomplete');
    assert.match(x.error!, /disk refused a write/);
    const next = store.begin(init());
    next.chunk(Buffer.from('fine'));
    assert.equal((await next.finish()).responseBytes, 4);
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('10,000 exchanges: open and list stay fast', async () => {
  const tmp = tempDir();
  try {
    const N = 10_000;
    // Rows written in one transaction, as a long-running proxy leaves them (recording 10,000 one by one is the proxy
    // tests' job, and slow on a shared machine).
    await (await openStore(tmp.dir, { analyze: false })).close();
    seedExchanges(tmp.dir, N);

    // Timed on a clock that stands still while this thread waits for a core (other processes' turns on a loaded
    // machine); what the store does, reads from disk or blocks on is all counted.
    let started = scheduledNow();
    const again = await openStore(tmp.dir, { analyze: false });
    const openMs = scheduledNow() - started;
    started = scheduledNow();
    const list = again.list();
    const firstListMs = scheduledNow() - started;
    started = scheduledNow();
    for (let i = 0; i < 100; i++) again.list();
    const listMs = (scheduledNow() - started) / 100;
    assert.equal(list.length, N);
    assert.ok(list[0].startedAt > list[N - 1].startedAt, 'newest first');
    process.stdout.write(
      `# 10k exchanges: open ${openMs.toFixed(0)} ms, first list ${firstListMs.toFixed(1)} ms, cached list ${listMs.toFixed(2)} ms\n`,
    );
    assert.ok(openMs < 3000, `open took ${openMs} ms`);
    assert.ok(listMs < 20, `list took ${listMs} ms`);
    await again.close();
  } finally {
    tmp.remove();
  }
});

test('body frames: a frame torn by a crash still yields the bytes it holds', () => {
  const frames = Buffer.concat([
    frameHeader('Q', 2, 0),
    Buffer.from('{}'),
    frameHeader('R', 5, 1.5),
    Buffer.from('hello'),
    frameHeader('R', 6, 2.25),
    Buffer.from(' wor'), // cut: 2 of 6 bytes missing
  ]);
  const d = decodeFrames(frames);
  assert.equal(Buffer.from(d.request!).toString(), '{}');
  assert.equal(Buffer.from(d.response).toString(), 'hello wor');
  assert.deepEqual(d.chunks, [
    { t: 1.5, offset: 0, length: 5 },
    { t: 2.25, offset: 5, length: 4 },
  ]);
  assert.equal(decodeFrames(frames.subarray(0, 20)).response.length, 0, 'a torn header is dropped');
});

test('a view that queries the store on every change (as the Providers view does) does not stop the analysis', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir);
    // The final change of an exchange reaches listeners before the store hands it to the analysis service: a query
    // there flushes the rows, and the exchange must still be analysed once.
    store.onDidChange(() => void store.query({ limit: 50 }));
    const w = store.begin(init());
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    const leak =
      'I will read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"README.md"}<|tool_call_end|>';
    w.chunk(
      Buffer.from(
        `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', model: 'moonshotai/kimi-k2-0905', choices: [{ index: 0, delta: { content: leak }, finish_reason: null }] })}\n\n`,
      ),
    );
    w.chunk(
      Buffer.from(
        `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', model: 'moonshotai/kimi-k2-0905', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`,
      ),
    );
    await w.finish();
    await store.idle();
    const x = store.get(w.id)!;
    assert.ok(x.summary, 'the exchange was analysed');
    assert.ok(x.summary.counts.error > 0, 'the leaked section is an error');
    assert.ok(store.readAnalysis(w.id), 'the full analysis is stored');
    assert.ok(
      store.query({ broken: true, limit: 10 }).some((y) => y.id === w.id),
      'it is listed as broken',
    );
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('spare body files are topped up after every exchange, however many come back to back', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false, spareFiles: 4 });
    const spares = () => readdirSync(join(tmp.dir, 'spare', String(process.pid))).length;
    assert.equal(spares(), 4, 'four spares are ready when the store opens');
    for (let i = 0; i < 60; i++) {
      const w = store.begin(init());
      w.responseStarted(200, { 'content-type': 'application/json' });
      w.chunk(Buffer.from('{}'));
      await w.finish();
      // Back to back, as a tight agent loop sends them: the next begins a turn of the loop after this one finished.
      await new Promise((r) => setImmediate(r));
    }
    // A refill that ended in the tick it began once latched for good: every later exchange created its body file on
    // demand, on the forwarding path.
    for (let i = 0; i < 100 && spares() < 4; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(spares(), 4, 'the spares are back to four after the burst');
    const w = store.begin(init());
    w.responseStarted(200, {});
    w.chunk(Buffer.from('{}'));
    await w.finish();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(readdirSync(join(tmp.dir, 'bodies')).length, 61, 'every exchange has its body file');
    for (let i = 0; i < 100 && spares() < 4; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(spares(), 4, 'and the one it took was replaced');
    await store.close();
  } finally {
    tmp.remove();
  }
});
