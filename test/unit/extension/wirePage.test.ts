// The Wire tab's page handler (src/extension/wirePage.ts) on real captures in a real store: any page of a
// 40,000-event stream is exactly those events with the gaps the first page's builder gives them, the longest gap is
// found and reachable, and a page past the end, of an exchange still streaming, deleted or never captured is answered
// with its state and one line instead of an error.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { wireEvents } from '../../../src/extension/exchangeView';
import { openExchange } from '../../../src/extension/openExchange';
import { readWirePage } from '../../../src/extension/wirePage';
import { isWebviewMessage, WIRE_SHOWN, type WireEventView } from '../../../webview/protocol';
import { OPENROUTER_CHAT } from '../../helpers/exchanges';

const EVENTS = 40_000;
/** The event after the longest gap (800 ms, beyond the first page). */
const GAP_AT = 23_457;

function begin(store: CaptureStore) {
  const w = store.begin({
    ...OPENROUTER_CHAT,
    requestBody: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  w.responseStarted(200, { 'content-type': 'text/event-stream' });
  return w;
}

describe('the Wire tab’s pages, read from the store', () => {
  let dir: string;
  let store: CaptureStore;
  let id: string;
  let all: WireEventView[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tokenscope-wire-page-'));
    store = await openStore(dir, { maxBodyBytes: 1 << 30 });
    const w = begin(store);
    let t = 0;
    let pending: string[] = [];
    const flush = (gap: number) => {
      if (pending.length) w.chunk(Buffer.from(pending.join('')), (t += gap));
      pending = [];
    };
    for (let i = 0; i < EVENTS; i++) {
      // The event GAP_AT comes alone, 800 ms after the one before it; elsewhere 50 events a chunk, 1 ms apart.
      if (i === GAP_AT) flush(1);
      if (i % 1000 === 10) pending.push(': OPENROUTER PROCESSING\n\n');
      else pending.push(`data: {"model":"kimi-k2","choices":[{"index":0,"delta":{"content":" w${i} <b>é</b>"}}]}\n\n`);
      if (i === GAP_AT) flush(800);
      else if (pending.length === 50) flush(1);
    }
    pending.push('data: [DONE]\n\n');
    flush(1);
    id = (await w.finish()).id;
    await store.idle();
    // What the page must equal: every event as the first page's builder makes view rows of them.
    const body = store.readResponse(id)!;
    const { parseResponseBody } = await import('../../../src/core/wire/index');
    all = wireEvents(parseResponseBody(body.bytes, { chunks: body.chunks, contentType: 'text/event-stream' }));
    assert.equal(all.length, EVENTS + 1);
  });

  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives any page the events and gaps the whole stream has there, the last page with the total', async () => {
    const opened = await openExchange(store, id, (m, e) => assert.fail(`${m}: ${e.message}`));
    assert.ok(opened);
    assert.equal(opened.view.wire.eventCount, EVENTS + 1);
    assert.equal(opened.view.wire.longestGapAt, GAP_AT, 'the event after the longest gap, beyond the first page');
    assert.equal(opened.view.wire.longestGapMs, 800);
    assert.deepEqual(opened.view.wire.events, all.slice(0, WIRE_SHOWN));

    for (const from of [WIRE_SHOWN, 2 * WIRE_SHOWN, Math.floor(GAP_AT / WIRE_SHOWN) * WIRE_SHOWN, 1]) {
      const page = await readWirePage(store, id, from);
      assert.equal(page.state, 'ok', page.message);
      assert.equal(page.from, from);
      assert.deepEqual(page.events, all.slice(from, from + WIRE_SHOWN), `page from ${from}`);
    }
    const gapPage = await readWirePage(store, id, 20_000);
    assert.equal(gapPage.events[GAP_AT - 20_000].gap, 800, 'the longest gap is on its page');

    const last = EVENTS + 1 - WIRE_SHOWN;
    const end = await readWirePage(store, id, last);
    assert.equal(end.state, 'ok');
    assert.deepEqual(end.events, all.slice(last));
    assert.equal(end.events.at(-1)?.data, '[DONE]');
    assert.equal(end.eventCount, EVENTS + 1);
    // Model output stays the text it was (the webview inserts it as text).
    assert.ok(end.events.some((e) => e.data.includes('<b>é</b>')));
  });

  it('answers a page past the end, a stream in flight, a deleted or unknown exchange with a state, never an error', async () => {
    const past = await readWirePage(store, id, EVENTS + 1);
    assert.equal(past.state, 'out-of-range');
    assert.deepEqual(past.events, []);
    assert.equal(past.eventCount, EVENTS + 1);
    assert.match(past.message ?? '', /no event 40,002: the response has 40,001 events/);

    const w = begin(store);
    w.chunk(Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'), 1);
    const streaming = await readWirePage(store, w.id, WIRE_SHOWN);
    assert.equal(streaming.state, 'streaming');
    assert.match(streaming.message ?? '', /still going/);
    await w.finish();

    const gone = await readWirePage(store, 'zzzzzzzzzzzz', WIRE_SHOWN);
    assert.equal(gone.state, 'gone');
    assert.equal((await readWirePage(store, '../../etc/passwd', 0)).state, 'gone');
    assert.equal((await readWirePage(undefined, id, 0)).state, 'gone');

    const doomed = begin(store);
    doomed.chunk(Buffer.from('data: [DONE]\n\n'), 1);
    const doomedId = (await doomed.finish()).id;
    await store.delete(doomedId);
    const deleted = await readWirePage(store, doomedId, 0);
    assert.equal(deleted.state, 'gone');
    assert.match(deleted.message ?? '', /no longer in the capture store/);

    // A body that cannot be read (a read error mid-file) is a state too.
    const broken = {
      get: store.get.bind(store),
      readResponseFrames: () => ({
        [Symbol.iterator]: () => ({
          next: () => {
            throw new Error('EIO: i/o error\nmore');
          },
        }),
      }),
    };
    const unreadable = await readWirePage(broken, id, WIRE_SHOWN);
    assert.equal(unreadable.state, 'unreadable');
    assert.equal(unreadable.message, 'The response body could not be read: EIO: i/o error');
  });

  it('takes only well-formed page requests from the webview', () => {
    assert.ok(isWebviewMessage({ type: 'wirePage', seq: 3, from: 5000 }));
    for (const bad of [
      { type: 'wirePage', seq: 1, from: -1 },
      { type: 'wirePage', seq: 1, from: 1.5 },
      { type: 'wirePage', seq: 1, from: '5' },
      { type: 'wirePage', from: 5 },
      { type: 'wirePage', seq: 1, from: 2 ** 60 },
    ]) {
      assert.equal(isWebviewMessage(bad), false, JSON.stringify(bad));
    }
  });
});
