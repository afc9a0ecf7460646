// What an open exchange panel keeps in the extension host for a 16 MB, 200,000-event stream: the view and the
// analysis without the wire events (the Wire tab gets the first WIRE_SHOWN of them, the count and the longest gap),
// and what paging to the stream's end costs (a page is read from the body file, and only that page is kept).
// Measured on the heap after collections, with the opened exchange held as the panel holds it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import type { ParsedResponse } from '../../../src/core/model';
import { wireView } from '../../../src/extension/exchangeView';
import { openExchange, type OpenedView } from '../../../src/extension/openExchange';
import { readWirePage } from '../../../src/extension/wirePage';
import { WIRE_SHOWN } from '../../../webview/protocol';
import { OPENROUTER_CHAT } from '../../helpers/exchanges';

const EVENTS = 200_000;
/** Before, the opened exchange held every event twice (parsed, and as view rows): 58-63 MB on this stream. */
const BUDGET_MB = 16;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** The heap in use after collections, once what the last turns of the loop still referred to is let go. */
async function heapMB(): Promise<number> {
  await new Promise((r) => setTimeout(r, 20));
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

describe('an open exchange in the extension host', () => {
  let dir: string;
  let store: CaptureStore;
  let id: string;
  let bytes = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tokenscope-open-memory-'));
    store = await openStore(dir, { maxBodyBytes: 1 << 30 });
    const w = store.begin({
      ...OPENROUTER_CHAT,
      requestBody: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    let pending: string[] = [];
    let t = 0;
    const flush = () => {
      const chunk = Buffer.from(pending.join(''));
      bytes += chunk.length;
      w.chunk(chunk, (t += 1 + (t === 40 ? 250 : 0)));
      pending = [];
    };
    for (let i = 0; i < EVENTS; i++) {
      pending.push(`data: {"model":"kimi-k2","choices":[{"index":0,"delta":{"content":" w${i % 997}"}}]}\n\n`);
      if (pending.length === 800) flush();
    }
    pending.push('data: [DONE]\n\n');
    flush();
    id = (await w.finish()).id;
  });

  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`keeps the view and the analysis of a ${EVENTS.toLocaleString()}-event stream, not its events`, async () => {
    assert.ok(bytes > 15e6, `the stream is ${(bytes / 1e6).toFixed(1)} MB`);
    // A first open warms what every open shares (the stored analysis read, parsers compiled).
    await openExchange(store, id, (m, e) => assert.fail(`${m}: ${e.message}`));
    const base = await heapMB();
    const opened: OpenedView | undefined = await openExchange(store, id, (m, e) => assert.fail(`${m}: ${e.message}`));
    const held = (await heapMB()) - base;
    assert.ok(opened?.result, 'the exchange was analysed');
    const r = opened.result.response;
    console.log(`${(bytes / 1e6).toFixed(1)} MB, ${EVENTS} events: an open exchange holds ${held.toFixed(1)} MB of heap`);

    // What the user sees: the first WIRE_SHOWN events, and the count and longest gap of all of them.
    const wire = opened.view.wire;
    assert.equal(wire.eventCount, EVENTS + 1);
    assert.equal(wire.events.length, WIRE_SHOWN);
    assert.equal(wire.events[0].data, '{"model":"kimi-k2","choices":[{"index":0,"delta":{"content":" w0"}}]}');
    assert.equal(wire.longestGapMs, 251, 'the longest gap is found beyond the rows shown');
    assert.equal(wire.longestGapAt, 40 * 800, 'and the event after it: the first of the 41st chunk, which came 251 ms late');
    assert.equal(opened.view.response?.message.content?.length, r.message.content?.length);
    assert.ok((r.message.content?.length ?? 0) > 800_000);

    // What is kept: the response without its events (their count stays), also where the checks' context refers to it.
    assert.equal(r.events.length, 0);
    assert.equal(r.eventCount, EVENTS + 1);
    assert.ok(!opened.result.ctx?.response || opened.result.ctx.response.events.length === 0);
    assert.ok(held < BUDGET_MB, `an open exchange holds ${held.toFixed(1)} MB (budget ${BUDGET_MB} MB)`);
    // Held to here: the measurement above is of a live object.
    assert.equal(opened.exchange.id, id);
  });

  it('pages to the end of the stream reading one page of events at a time, and keeps none of them', async () => {
    const opened = await openExchange(store, id, (m, e) => assert.fail(`${m}: ${e.message}`));
    assert.ok(opened);
    const last = EVENTS + 1 - WIRE_SHOWN;
    await readWirePage(store, id, last); // warm: the page read's code compiled
    const base = await heapMB();
    // The heap's high mark while the page is read: sampled between the turns the read yields to the event loop.
    let peak = 0;
    let turns = 0;
    const sampler = setInterval(() => (turns++, (peak = Math.max(peak, process.memoryUsage().heapUsed / 1e6))), 1);
    const t0 = performance.now();
    const page = await readWirePage(store, id, last);
    const ms = performance.now() - t0;
    clearInterval(sampler);
    const withPage = (await heapMB()) - base;
    assert.equal(page.state, 'ok', page.message);
    assert.equal(page.events.length, WIRE_SHOWN);
    assert.equal(page.events.at(-1)?.data, '[DONE]');
    assert.equal(page.events.at(-2)?.data, `{"model":"kimi-k2","choices":[{"index":0,"delta":{"content":" w${(EVENTS - 1) % 997}"}}]}`);
    assert.equal(page.eventCount, EVENTS + 1);
    console.log(
      `the last page of ${EVENTS} events: read in ${ms.toFixed(0)} ms over ${turns}+ turns of the event loop, ${withPage.toFixed(1)} MB held with the page, heap peak ${(peak - base).toFixed(1)} MB above the base while reading (garbage included)`,
    );
    assert.ok(turns >= 3, `the read gave the event loop ${turns} turns: it must not hold the extension host for the whole body`);
    // All 200,001 events as objects would be 30+ MB (the view rows alone were 30 MB before the first page was cut).
    assert.ok(withPage < 4, `the last page holds ${withPage.toFixed(1)} MB`);
    assert.equal(opened.result?.response.events.length, 0, 'the open exchange still keeps no events');
    const after = await heapMB();
    assert.ok(after - base < 4, `after the page is let go the heap is ${(after - base).toFixed(1)} MB above the base`);
    assert.equal(page.from, last);
  });

  it('shows every event of a short stream, with the same gaps', () => {
    const res = {
      streamed: true,
      events: [
        { data: 'a', t: 100 },
        { data: 'b', t: 130 },
        { data: ': c', comment: true },
        { data: 'd', t: 180 },
      ],
    } as ParsedResponse;
    const v = wireView(res, 2);
    assert.deepEqual(
      v.events.map((e) => [e.data, e.gap]),
      [
        ['a', undefined],
        ['b', 30],
        [': c', undefined],
        ['d', 50],
      ],
    );
    assert.deepEqual(
      { eventCount: v.eventCount, longestGapMs: v.longestGapMs, longestGapAt: v.longestGapAt, chunkCount: v.chunkCount },
      { eventCount: 4, longestGapMs: 50, longestGapAt: 3, chunkCount: 2 },
    );
    assert.deepEqual(wireView(undefined, 0), { events: [], eventCount: 0, longestGapMs: 0, chunkCount: 0 });
  });
});
