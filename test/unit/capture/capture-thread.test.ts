// The capture worker is ended once idle, so the heap a large analysis grew does not stay with `serve`; the next
// large exchange starts a new one.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { StoredAnalysis } from '../../../src/core/capture/analysis';
import { CaptureThread } from '../../../src/core/capture/capture-thread';
import { CaptureDb, DB_FILE } from '../../../src/core/capture/database';
import { FRAME_HEADER } from '../../../src/core/capture/log';
import { searchSplitKeys } from '../../../src/core/capture/split-keys-body';
import { unpackAnalysis } from '../../../src/core/capture/stored-form';
import { openStore } from '../../../src/core/capture/store';
import { tempDir } from '../proxy/local-upstream';

/** A store, a worker thread with a short idle time, and one exchange whose streamed response is starting. */
async function rig() {
  const tmp = tempDir();
  const store = await openStore(tmp.dir, { analyze: false });
  const thread = new CaptureThread(100);
  const w = store.begin({
    route: 'default',
    upstreamUrl: 'http://127.0.0.1:9/v1',
    method: 'POST',
    path: '/v1/chat/completions',
    requestHeaders: {},
    requestBody: '{"model":"m","stream":true}',
  });
  w.responseStarted(200, { 'content-type': 'text/event-stream' });
  return { tmp, store, thread, w };
}

const SSE =
  'data: {"id":"a","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hello"}}]}\n\ndata: {"id":"a","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

test('the capture worker ends after its idle time and a new one answers the next job', async () => {
  const { tmp, store, thread, w } = await rig();
  try {
    w.chunk(Buffer.from(SSE));
    const x = await w.finish();
    const path = join(tmp.dir, 'bodies', `${x.id}.cap`);

    const first = await thread.analyze(x, path);
    assert.equal((JSON.parse(first!.stored!) as StoredAnalysis).analysis.message.content, 'hello');
    assert.deepEqual(first?.findings, [], 'a healthy turn');
    assert.equal(thread.running, true, 'kept for the next job meanwhile');
    const ended = Date.now() + 5000;
    while (thread.running && Date.now() < ended) await new Promise((r) => setTimeout(r, 20));
    assert.equal(thread.running, false, 'ended once idle');

    const second = await thread.analyze(x, path);
    assert.equal((JSON.parse(second!.stored!) as StoredAnalysis).analysis.message.content, 'hello', 'a new worker answers');
    assert.equal(thread.running, true);
  } finally {
    await thread.close();
    await store.close();
    tmp.remove();
  }
});

test('the worker finds the same split-key masks as the in-thread search, for body frames and plain bytes', async () => {
  const KEY = 'sk-proj-AbCdEfGhIjKlMnOp0123456789';
  const ev = (d: string) =>
    `data: ${JSON.stringify({ id: 'a', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: d } }] })}\n\n`;
  const text = `filler ${'lorem ipsum '.repeat(50)} then ${KEY} and the end`;
  const sse = [...Array(Math.ceil(text.length / 3)).keys()].map((i) => ev(text.slice(i * 3, i * 3 + 3))).join('') + 'data: [DONE]\n\n';
  const { tmp, store, thread, w } = await rig();
  try {
    // Frames are written after the request frame: the search starts where the response starts.
    const half = Math.floor(sse.length / 2);
    w.chunk(Buffer.from(sse.slice(0, half)));
    w.chunk(Buffer.from(sse.slice(half)));
    // The body file has the exchange's name from the turn of the loop after it began (a spare file until then).
    await new Promise((r) => setImmediate(r));
    const path = join(tmp.dir, 'bodies', `${w.id}.cap`);
    const raw = readFileSync(path);
    const responseFrom = raw.indexOf(Buffer.from('data: ')) - FRAME_HEADER; // the first response frame's header
    const plain = join(tmp.dir, 'plain.sse');
    writeFileSync(plain, sse);
    for (const job of [
      { path, framed: true, from: responseFrom, size: raw.length },
      { path: plain, framed: false, from: 0, size: sse.length },
    ]) {
      const here = searchSplitKeys(readFileSync(job.path).subarray(job.from), job);
      assert.ok(
        here && here.keys === 1 && here.writes.length > 0,
        `the in-thread search finds the key (${job.framed ? 'frames' : 'plain'})`,
      );
      const off = await thread.splitKeys(job);
      assert.deepEqual(
        off,
        { ...here, writes: here.writes.map((x) => ({ pos: x.pos, bytes: new Uint8Array(x.bytes) })) },
        'the worker finds the same masks',
      );
      // Written back, no run of the key is left in the file.
      const file = Buffer.from(readFileSync(job.path));
      for (const x of off!.writes) file.set(x.bytes, x.pos);
      assert.ok(!file.includes(KEY.slice(8, 12)) && file.length === readFileSync(job.path).length);
    }
    await w.finish();
  } finally {
    await thread.close();
    await store.close();
    tmp.remove();
  }
});

test('the capture worker runs below the proxy thread priority, so a long job yields the core to forwarding', async (t) => {
  if (!existsSync('/proc/thread-self')) return t.skip('needs Linux per-thread scheduling (/proc/thread-self)');
  if (getPriority() >= 19) return t.skip('this process already runs at the lowest priority');
  /** Each thread of this process with its nice value. */
  const niceOf = () =>
    new Map(
      readdirSync(`/proc/${process.pid}/task`).flatMap((tid) => {
        try {
          const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
          return [[tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])] as const]; // field 19: nice
        } catch {
          return []; // a thread that ended meanwhile
        }
      }),
    );
  // Threads there before this test (an earlier test's worker may still be ending, at its lowered priority).
  const before = niceOf();
  const { tmp, store, thread, w } = await rig();
  try {
    w.chunk(Buffer.from(SSE));
    const x = await w.finish();
    await thread.analyze(x, join(tmp.dir, 'bodies', `${x.id}.cap`));
    const own = getPriority();
    const want = Math.min(19, own + 10);
    const started = [...niceOf()].filter(([tid]) => !before.has(tid));
    assert.ok(
      started.some(([, nice]) => nice === want),
      `a thread this job started runs at nice ${want}: ${started.map(([tid, nice]) => `${tid}:${nice}`).join(' ')}`,
    );
    assert.equal(getPriority(), own, 'the process (and its main thread) keep their priority');
  } finally {
    await thread.close();
    await store.close();
    tmp.remove();
  }
});

test('the worker writes an analysis row on its own connection once told to; when it cannot, the row text comes back to be written', async () => {
  const { tmp, store, thread, w } = await rig();
  try {
    w.chunk(Buffer.from(SSE));
    const x = await w.finish();
    await store.idle();
    const path = join(tmp.dir, 'bodies', `${x.id}.cap`);
    let asked = 0;
    const ready = () => (asked++, x);
    const here = await thread.analyze(x, path, { db: join(tmp.dir, DB_FILE), ready });
    assert.deepEqual([here?.written, here?.stored, asked], [true, undefined, 1], 'written there, asked once, no text back');
    const db = CaptureDb.open(join(tmp.dir, DB_FILE), { readOnly: true });
    const row = unpackAnalysis(db.analysis(x.id));
    const summary = db.get(x.id)?.x.summary;
    db.close();
    assert.equal(row?.analysis.message.content, 'hello', 'the row reads back');
    assert.deepEqual(summary, here?.summary, "the exchange's summary was written with it");

    // No database there: the outcome comes back whole, for the caller to write.
    const failed = await thread.analyze(x, path, { db: join(tmp.dir, 'no-such-dir', DB_FILE), ready });
    assert.equal(failed?.written, undefined);
    assert.equal((JSON.parse(failed!.stored!) as StoredAnalysis).analysis.message.content, 'hello');
    // Told not to write: nothing is written, and nothing but the summary and findings comes back.
    const skipped = await thread.analyze(x, path, { db: join(tmp.dir, DB_FILE), ready: () => undefined });
    assert.deepEqual([skipped?.written, skipped?.stored], [false, undefined]);
  } finally {
    await thread.close();
    await store.close();
    tmp.remove();
  }
});
