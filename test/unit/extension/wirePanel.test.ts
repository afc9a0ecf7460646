/**
 * The exchange panel answers the Wire tab's page requests (the real ExchangePanels and Exchanges, with a recorded
 * stand-in for `vscode`, on a capture in a real store): a page is read from the stored body and posted back under
 * the request's `seq`; a page past the end and an exchange deleted meanwhile are answered with their state; a
 * malformed request gets no answer and breaks nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { WIRE_SHOWN } from '../../../webview/protocol';
import { OPENROUTER_CHAT } from '../../helpers/exchanges';
import * as stub from './vscode-stub';
import { tempDir } from '../proxy/local-upstream';

stub.install();
// Loaded after the stub is installed: they `require` vscode.
type PanelModule = typeof import('../../../src/extension/exchangePanel');
type ExchangesModule = typeof import('../../../src/extension/exchanges');

const EVENTS = 12_000;

/** The first message the panel posted that `pick` accepts, waited for up to `ms`. */
async function posted(panel: stub.FakePanel, what: string, pick: (m: any) => boolean, ms = 10_000): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    const m = panel.posted.find(pick);
    if (m) return m;
    if (Date.now() > until) throw new Error(`the panel posted no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Sends a page request as the webview does and waits for its answer. */
async function ask(panel: stub.FakePanel, seq: number, from: number): Promise<any> {
  panel.send({ type: 'wirePage', seq, from });
  return (await posted(panel, `wirePage answer for seq ${seq}`, (m) => m.type === 'wirePage' && m.seq === seq)).page;
}

test('the exchange panel reads the page the webview asks for and answers under its seq, never throwing', async () => {
  const { ExchangePanels } = (await import('../../../src/extension/exchangePanel')) as PanelModule;
  const { Exchanges } = (await import('../../../src/extension/exchanges')) as ExchangesModule;
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  const errors: string[] = [];
  const log = { error: (m: string) => errors.push(m), warn() {}, info() {} } as never;
  const exchanges = new Exchanges(() => store, log);
  const panels = new ExchangePanels(stub.Uri.file('/ext') as never, exchanges, async () => ({ reason: 'no tokenizer in this test' }), log);
  try {
    const w = store.begin({
      ...OPENROUTER_CHAT,
      requestBody: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    let pending: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      pending.push(`data: {"choices":[{"index":0,"delta":{"content":" w${i}"}}]}\n\n`);
      if (pending.length === 100) w.chunk(Buffer.from(pending.join('')), i), (pending = []);
    }
    pending.push('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
    w.chunk(Buffer.from(pending.join('')), EVENTS);
    const id = (await w.finish()).id;
    await store.idle();

    await panels.show(id);
    const panel = stub.ui.panels.at(-1)!;
    panel.send({ type: 'ready' });
    const snapshot = await posted(panel, 'exchange snapshot', (m) => m.type === 'exchange');
    assert.equal(snapshot.exchange.wire.eventCount, EVENTS + 2);
    assert.equal(snapshot.exchange.wire.events.length, WIRE_SHOWN, 'the snapshot brings the first page only');

    const page = await ask(panel, 1, 7_000);
    assert.equal(page.state, 'ok', page.message);
    assert.equal(page.from, 7_000);
    assert.equal(page.events.length, WIRE_SHOWN);
    assert.equal(page.events[0].data, '{"choices":[{"index":0,"delta":{"content":" w7000"}}]}');
    const end = await ask(panel, 2, EVENTS + 2 - WIRE_SHOWN);
    assert.equal(end.events.at(-1).data, '[DONE]');
    assert.equal(end.eventCount, EVENTS + 2);

    assert.equal((await ask(panel, 3, EVENTS + 2)).state, 'out-of-range');

    // Not a page request: no answer, nothing thrown.
    for (const bad of [
      { type: 'wirePage', seq: 4, from: -1 },
      { type: 'wirePage', seq: 4, from: 'end' },
      { type: 'wirePage', from: 1 },
    ])
      panel.send(bad);

    await store.delete(id);
    const gone = await ask(panel, 5, 7_000);
    assert.equal(gone.state, 'gone');
    assert.match(gone.message, /no longer in the capture store/);
    assert.equal(panel.posted.filter((p) => p.type === 'wirePage' && p.seq === 4).length, 0);
    assert.deepEqual(errors, []);
  } finally {
    panels.dispose();
    exchanges.dispose();
    await store.close();
    tmp.remove();
  }
});
