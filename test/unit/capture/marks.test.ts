// Before a proxied response's first byte reaches the client, Tokenscope writes one thing: the body file, with the
// status (and, when the whole response came in one read, the end) as marks in the same write as the bytes. What a
// restart makes of a stopped process's exchanges comes from those marks (src/core/capture/recovery.ts), and readers
// of response bytes, old ones included, skip them.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { END_MARK, FRAME_HEADER, decodeFrames, frameHeader, startMark } from '../../../src/core/capture/log';
import { journaledSpares, stoppedOutcome } from '../../../src/core/capture/recovery';
import { openStore } from '../../../src/core/capture/store';
import type { CapturedExchange } from '../../../src/core/model';
import { tempDir } from '../proxy/local-upstream';

const SSE = Buffer.from('data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n');

async function rig() {
  const tmp = tempDir('tokenscope-marks-');
  const store = await openStore(tmp.dir, { analyze: false });
  const writes: string[] = [];
  // Every disk operation of the store goes through its guard: count them.
  const guarded = store as unknown as { diskWrite<T>(op: () => T): T | undefined };
  const real = guarded.diskWrite.bind(store);
  guarded.diskWrite = (op) => (writes.push(new Error().stack!.split('\n')[2] ?? ''), real(op));
  const begin = (path: string) =>
    store.begin({ route: 'default', upstreamUrl: 'http://127.0.0.1:9/v1', method: 'GET', path, requestHeaders: {}, agent: 'curl' });
  return { tmp, store, writes, begin };
}

test('a whole response in one read: start, bytes and end reach the disk in one write, and nothing else does', async () => {
  const { tmp, store, writes, begin } = await rig();
  try {
    const w = begin('/v1/whole');
    await new Promise((r) => setImmediate(r)); // the exchange's own turn of the loop (its spare gets its name)
    writes.length = 0;
    // As the relay does it: the status held, the read's bytes gathered, the end, then what the relay queued.
    w.responseStarted(200, { 'content-type': 'text/event-stream' }, undefined, true);
    w.cork();
    w.chunk(SSE);
    w.ended!();
    w.uncork();
    assert.equal(writes.length, 1, `one disk write before the client sees a byte, not ${writes.length}:\n${writes.join('\n')}`);
    const file = readFileSync(join(tmp.dir, 'bodies', `${w.id}.cap`));
    const { response, chunks, marks } = decodeFrames(file);
    assert.ok(Buffer.from(response).equals(SSE));
    assert.equal(chunks.length, 1, 'the marks are no chunks');
    assert.deepEqual(marks, { status: 200, ended: true });
    assert.ok(file.subarray(file.length - FRAME_HEADER).equals(END_MARK), 'the end mark comes last');
    await w.finish();
  } finally {
    await store.close();
    tmp.remove();
  }
});

test('a stream: each read is one write; a head sent before any byte writes the status mark alone', async () => {
  const { tmp, store, writes, begin } = await rig();
  try {
    const w = begin('/v1/stream');
    await new Promise((r) => setImmediate(r));
    writes.length = 0;
    w.responseStarted(201, { 'content-type': 'text/event-stream' }, undefined, true);
    w.uncork(); // the head goes out alone (the upstream sent headers first)
    assert.equal(writes.length, 1, 'the status is on disk before the head reaches the client');
    assert.deepEqual(decodeFrames(readFileSync(join(tmp.dir, 'bodies', `${w.id}.cap`))).marks, { status: 201 });
    for (const part of [SSE.subarray(0, 10), SSE.subarray(10)]) {
      writes.length = 0;
      w.cork();
      w.chunk(part);
      w.uncork();
      assert.equal(writes.length, 1, 'one write per read');
    }
    const x = await w.finish();
    assert.equal(x.state, 'complete');
    assert.ok(Buffer.from(store.readResponse(w.id)!.bytes).equals(SSE));
  } finally {
    await store.close();
    tmp.remove();
  }
});

test("a held start's row fields (status, redacted headers) come a turn of the loop after the first bytes, or with finish if sooner", async () => {
  const { tmp, store, begin } = await rig();
  try {
    const headers = { 'content-type': 'text/event-stream', 'set-cookie': 'session=sk-or-v1-' + 'a'.repeat(64) };
    const later = begin('/v1/later');
    const updates: string[] = [];
    store.onDidChange((e) => e.exchange.id === later.id && e.exchange.status !== undefined && updates.push(e.kind));
    later.responseStarted(200, headers, undefined, true);
    later.cork();
    later.chunk(SSE);
    later.uncork();
    assert.equal(store.get(later.id)?.status, undefined, 'not before the first bytes went out');
    assert.deepEqual(updates, []);
    await new Promise((r) => setImmediate(r));
    assert.equal(store.get(later.id)?.status, 200, 'a turn of the loop later');
    assert.ok(!JSON.stringify(store.get(later.id)?.responseHeaders).includes('a'.repeat(64)), 'the headers are redacted');
    await later.finish();
    // finish in the same turn (a response that ended at once): the fields are recorded before the exchange's end.
    const soon = begin('/v1/soon');
    soon.responseStarted(203, headers, undefined, true);
    soon.chunk(SSE);
    const x = await soon.finish();
    assert.equal(x.status, 203);
    assert.equal(x.state, 'complete');
    assert.equal(typeof x.ttfbMs, 'number');
    assert.equal(store.get(soon.id)?.responseHeaders?.['content-type'], 'text/event-stream');
  } finally {
    await store.close();
    tmp.remove();
  }
});

test('readers of response bytes skip marks, as versions from before marks do (empty R frames)', () => {
  // The body of a version before marks, and the same with marks: the same bytes and chunk times.
  const before = Buffer.concat([frameHeader('Q', 2, 0), Buffer.from('{}'), frameHeader('R', 5, 1.5), Buffer.from('hello')]);
  const after = Buffer.concat([
    frameHeader('Q', 2, 0),
    Buffer.from('{}'),
    startMark(404),
    frameHeader('R', 5, 1.5),
    Buffer.from('hello'),
    END_MARK,
  ]);
  const a = decodeFrames(before);
  const b = decodeFrames(after);
  assert.deepEqual([Buffer.from(b.response).toString(), b.chunks], [Buffer.from(a.response).toString(), a.chunks]);
  assert.deepEqual(a.marks, {});
  assert.deepEqual(b.marks, { status: 404, ended: true });
  // A time that is no status (a torn or foreign frame) is not taken for one.
  assert.deepEqual(decodeFrames(frameHeader('R', 0, -42.5)).marks, {});
});

test("a stopped process's exchange: complete when its file's end mark is there, interrupted otherwise; the status from the mark", () => {
  const x = { id: '0mx0000000abcd', startedAt: 1000, state: 'streaming' } as CapturedExchange;
  const chunks = [
    { t: 3, offset: 0, length: 10 },
    { t: 7.6, offset: 10, length: 5 },
  ];
  assert.deepEqual(stoppedOutcome(x, { chunks, marks: { status: 200, ended: true } }), {
    status: 200,
    ttfbMs: 3,
    state: 'complete',
    responseBytes: 15,
    endedAt: 1008,
    error: null,
  });
  const cut = stoppedOutcome(x, { chunks, marks: { status: 200 } });
  assert.equal(cut.state, 'incomplete');
  assert.match(cut.error!, /while the response was streaming \(15 bytes kept\)/);
  const pending = stoppedOutcome(x, { chunks: [], marks: {} });
  assert.match(pending.error!, /while the request was pending/);
  assert.equal(pending.status, undefined);
  // The row's own status (from its journal line or its batch) wins over the mark.
  assert.equal(
    stoppedOutcome({ ...x, status: 500 }, { chunks, marks: { status: 200 } }).status,
    undefined,
    'a known status is not patched',
  );
});

test('only spare names of the journaled shape become paths', () => {
  const e = (spare: string) => ({ x: {} as CapturedExchange, reqBytes: 0, spare });
  const found = journaledSpares(
    new Map([
      ['0mx0000000abcd', e('123/0mx0000000zzzz.cap')],
      ['0mx0000000abce', e('../../etc/passwd')],
      ['0mx0000000abcf', e('123/../../x.cap')],
      ['../escape', e('123/0mx0000000zzzy.cap')],
    ]),
  );
  assert.deepEqual(found, [{ spare: '123/0mx0000000zzzz.cap', id: '0mx0000000abcd' }]);
});

test('a restart after a kill before the spare got its name: the body file is adopted, the spare folder swept', async () => {
  const tmp = tempDir('tokenscope-marks-');
  try {
    // A dead process's leftovers, as its journal and spare folder hold them (pid 2^22+1 cannot be running).
    const pid = 4194305;
    const id = '0mx5c00000a1b2';
    const spareDir = join(tmp.dir, 'spare', String(pid));
    mkdirSync(spareDir, { recursive: true });
    mkdirSync(join(tmp.dir, 'journal'), { recursive: true });
    writeFileSync(join(spareDir, '0mx5bzzzzzzzzz.cap'), Buffer.concat([startMark(200), frameHeader('R', SSE.length, 2), SSE, END_MARK]));
    const x = {
      id,
      route: 'default',
      upstreamUrl: 'http://127.0.0.1:9/v1',
      method: 'GET',
      path: '/v1/x',
      startedAt: Date.now(),
      sessionId: 's1',
      state: 'streaming',
      requestHeaders: {},
    };
    writeFileSync(
      join(tmp.dir, 'journal', `${pid}-abc.ndjson`),
      JSON.stringify({ op: 'put', x, reqBytes: 0, pid, spare: `${pid}/0mx5bzzzzzzzzz.cap` }) + '\n',
    );
    const store = await openStore(tmp.dir, { analyze: false });
    try {
      const got = store.list().find((e) => e.id === id)!;
      assert.equal(got.state, 'complete');
      assert.equal(got.status, 200);
      assert.ok(Buffer.from(store.readResponse(id)!.bytes).equals(SSE));
      assert.ok(existsSync(join(tmp.dir, 'bodies', `${id}.cap`)));
      assert.ok(!readdirSync(join(tmp.dir, 'spare')).includes(String(pid)), 'the dead spare folder is gone');
    } finally {
      await store.close();
    }
  } finally {
    tmp.remove();
  }
});
