/**
 * A large exchange's analysis row never holds the proxy's event loop. The row of a 16 MB response of dense text is
 * about 7 MB even in its stored form (./stored-form.ts: each text once, deflated), and one SQLite statement of that
 * size held the thread that ran it for 50-200 ms; the structured clone of the text from the capture worker added
 * 10-15 ms. The worker now writes the row on its own connection, only the summary and the findings cross back, and
 * this process's batched row writes wait meanwhile instead of waiting on the write lock.
 *
 * Real store in a temp dir, real capture worker; another stream is recorded through the same store meanwhile (a chunk
 * every 2 ms, a new exchange every ~10 ms, so row batches fall due while the worker writes). Gaps are timed on a clock
 * that stands still while this thread waits for a core (../../helpers/timing.ts). A reader (as another process's
 * would) holds a snapshot from before the row until 50 ms after the row is visible: the commit cannot copy the row
 * from the write-ahead log into the database file then, and that copy must not fall to this thread's next batch.
 */
import assert from 'node:assert/strict';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ANALYSIS_VERSION, analyzeCaptured } from '../../../src/core/capture/analysis';
import { CaptureDb, DB_FILE } from '../../../src/core/capture/database';
import { openStore } from '../../../src/core/capture/store';
import { packAnalysis } from '../../../src/core/capture/stored-form';
import { OPENROUTER_CHAT } from '../../helpers/exchanges';
import { prng } from '../../helpers/prng';
import { scheduledNow, timingSource } from '../../helpers/timing';
import { tempDir } from '../proxy/local-upstream';

const MB = 1024 * 1024;
const REQUEST = JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] });
/** The longest gap allowed around the row's write: the old code's was 60-200 ms, the new one's 4-10 ms. */
const BOUND_MS = 40;

/** ~16 MB of SSE: deltas of 50,000 characters of seeded prose (reasoning, then content), as a dense model turn streams. */
function denseBody(bytes: number): Buffer {
  const words =
    'The user wants the weather in Florence , Italy . I will read src/a.ts first const return { } Olá café — \n weather( );'.split(' ');
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const rand = prng(i);
    const text: string[] = [];
    for (let n = 0; n < 50_000; ) {
      const w = words[Math.floor(rand() * words.length)] + (rand() < 0.3 ? String(Math.floor(rand() * 1000)) : '');
      text.push(w);
      n += w.length + 1;
    }
    const delta = i % 3 === 0 ? { reasoning: text.join(' ') } : { content: text.join(' ') };
    const ev = `data: ${JSON.stringify({ id: 'g', object: 'chat.completion.chunk', model: 'moonshotai/kimi-k2-0905', choices: [{ index: 0, delta }] })}\n\n`;
    parts.push(ev);
    size += ev.length;
  }
  parts.push('data: [DONE]\n\n');
  return Buffer.from(parts.join(''));
}

const SMALL = 'data: {"id":"a","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hello"}}]}\n\n';

test("a 16 MB dense response's analysis row is written off the proxy's thread, and another stream is not held meanwhile", {
  timeout: 120_000,
}, async (t) => {
  const tmp = tempDir();
  // Every row write on this thread, by size: the big one must not be among them.
  const putHere: number[] = [];
  const put = CaptureDb.prototype.putAnalysis;
  CaptureDb.prototype.putAnalysis = function (this: CaptureDb, ...args: Parameters<typeof put>) {
    putHere.push(args[2].length);
    return put.apply(this, args);
  };
  let analysedAt = 0;
  let outcome: { stored?: string; findings: unknown[] } | undefined;
  const store = await openStore(tmp.dir, {
    maxBodyBytes: 1 << 30,
    onAnalyzed: (x, r) => x.responseBytes! > MB && ((analysedAt = scheduledNow()), (outcome = r)),
  });
  let stop = false;
  try {
    const body = denseBody(16 * MB);
    const w = store.begin({ ...OPENROUTER_CHAT, requestBody: REQUEST });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    for (let at = 0, ms = 0; at < body.length; at += MB) w.chunk(body.subarray(at, at + MB), (ms += 1));

    // The other stream, and the loop's gaps as it sees them.
    const gaps: [at: number, gap: number][] = [];
    let last = scheduledNow();
    const tick = setInterval(() => {
      const now = scheduledNow();
      gaps.push([last, now - last]);
      last = now;
    }, 1);
    // The reader, and a poll for the row (cheap reads on this thread, as a view of the store would make).
    const reader = CaptureDb.open(join(tmp.dir, DB_FILE), { readOnly: true });
    reader.write('BEGIN');
    reader.rows('SELECT count(*) FROM analyses');
    const poll = CaptureDb.open(join(tmp.dir, DB_FILE), { readOnly: true });
    let visibleAt = 0;
    const watch = setInterval(() => {
      if (visibleAt || poll.rows('SELECT 1 FROM analyses WHERE exchange_id = ?', w.id).length === 0) return;
      visibleAt = scheduledNow();
      setTimeout(() => reader.write('COMMIT'), 50);
    }, 5);
    const others: string[] = [];
    const other = (async () => {
      while (!stop) {
        const o = store.begin({ ...OPENROUTER_CHAT, requestBody: '{"model":"m","stream":true}' });
        o.responseStarted(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < 5 && !stop; i++) o.chunk(Buffer.from(SMALL)), await new Promise((r) => setTimeout(r, 2));
        others.push((await o.finish()).id);
      }
    })();
    const id = (await w.finish()).id;
    while (!analysedAt) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 150));
    stop = true;
    await other;
    await store.idle();
    clearInterval(tick);
    clearInterval(watch);
    reader.close();
    poll.close();

    // The row: written, in the form every release reads today (the same text packAnalysis gives), and read back whole.
    const x = store.get(id)!;
    const res = store.readResponse(id)!;
    const fresh = analyzeCaptured({ ...x, requestBody: REQUEST }, res.bytes, res.chunks);
    const expected = packAnalysis({ version: ANALYSIS_VERSION, summary: fresh.summary, analysis: fresh.analysis });
    await store.close();
    const db = CaptureDb.open(join(tmp.dir, DB_FILE), { readOnly: true });
    const row = db.rows<{ result: string }>('SELECT result FROM analyses WHERE exchange_id = ?', id)[0]?.result;
    const stored = db.get(id)?.x;
    const written = others.filter((o) => db.get(o)?.x.state === 'complete').length;
    db.close();
    assert.ok(
      row !== undefined && row === expected,
      `the stored row is the one packAnalysis gives (${row?.length} chars, ${expected.length} expected)`,
    );
    assert.ok(
      expected.length > 4 * MB && (JSON.parse(expected) as { version: number }).version === 2000 + ANALYSIS_VERSION,
      'a deflated row of megabytes',
    );
    assert.deepEqual(stored?.summary, JSON.parse(JSON.stringify(fresh.summary)), "the exchange's summary was written with it");
    assert.equal(written, others.length, `every row of the other stream was written (${others.length} exchanges)`);
    assert.ok(others.length > 10, `the other stream recorded exchanges meanwhile (${others.length})`);

    // Off this thread: no row of a megabyte was written here, and the text never crossed back.
    assert.ok(
      putHere.every((n) => n < MB),
      `rows written on the proxy's thread: ${JSON.stringify(putHere.filter((n) => n >= 1000))} chars`,
    );
    assert.equal(outcome?.stored, undefined, "the stored text did not cross to the proxy's thread");

    // The loop: its longest gap from 400 ms before the result came back (the worker's write) to 150 ms after.
    const around = gaps.filter(([at]) => at >= analysedAt - 400 && at <= analysedAt + 150).map(([, g]) => g);
    const longest = Math.max(...around);
    const load = loadavg()[0];
    t.diagnostic(
      `16 MB dense response, row of ${(expected.length / MB).toFixed(1)} MB; load ${load.toFixed(1)} on ${availableParallelism()} cores; longest gap of the loop around the row's write: ${longest.toFixed(1)} ms (${around.length} ticks); ${others.length} other exchanges; times: ${timingSource}`,
    );
    assert.ok(around.length > 20, `the loop ticked around the write (${around.length})`);
    assert.ok(visibleAt > 0, 'the row became visible while the reader held its snapshot');
    assert.ok(longest <= BOUND_MS, `the loop was held ${longest.toFixed(1)} ms around the row's write`);
  } finally {
    stop = true;
    CaptureDb.prototype.putAnalysis = put;
    await store.close();
    tmp.remove();
  }
});
