/**
 * The exchange webview's Wire tab in Chromium (the real bundle, under the CSP VS Code gets), paging a long stream
 * captured through the real store: the host's own page handler answers the page's `wirePage` requests, as the panel
 * does. The tab says which events it shows, goes to the end (the `[DONE]` event), back one page, and to the event
 * after the longest gap, returns to its page after a reload, and says so when the exchange was deleted; event data
 * holding HTML stays text.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type CaptureStore } from '../../src/core/capture/store';
import { openExchange } from '../../src/extension/openExchange';
import { readWirePage } from '../../src/extension/wirePage';
import type { ExchangeView, HostMessage, WebviewMessage } from '../../webview/protocol';
import { OPENROUTER_CHAT } from '../helpers/exchanges';
import { launchBrowser, screenshot, type Browser } from './harness';
import { openWebviewPage, webviewSkip, type WebviewPage } from './webview-rig';

const skip = webviewSkip('webview');
const EVENTS = 23_000;
const GAP_AT = 17_321;
const HOSTILE = '<img src=x onerror="window.__pwned=1">';

describe('Wire tab paging in Chromium', { skip }, () => {
  let dir: string;
  let store: CaptureStore;
  let view: ExchangeView;
  let id: string;
  let browser: Browser;
  let web: WebviewPage<HostMessage>;
  const asked: number[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tokenscope-e2e-wire-'));
    store = await openStore(dir, { maxBodyBytes: 1 << 30 });
    const w = store.begin({
      ...OPENROUTER_CHAT,
      requestBody: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    let t = 0;
    let pending: string[] = [];
    const flush = (gap: number) => {
      if (pending.length) w.chunk(Buffer.from(pending.join('')), (t += gap));
      pending = [];
    };
    for (let i = 0; i < EVENTS; i++) {
      if (i === GAP_AT) flush(1);
      const text = i % 500 === 7 ? HOSTILE : ` w${i}`;
      pending.push(`data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}}}]}\n\n`);
      if (i === GAP_AT) flush(1234);
      else if (pending.length === 40) flush(2);
    }
    pending.push('data: [DONE]\n\n');
    flush(2);
    id = (await w.finish()).id;
    await store.idle();
    const opened = await openExchange(store, id, (m, e) => assert.fail(`${m}: ${e.message}`));
    view = opened!.view;

    browser = await launchBrowser();
    web = await openWebviewPage(browser, 'webview', { width: 1200, height: 800 });
    // The host's side of `wirePage`, as the panel answers it (exchangePanel.ts).
    await web.page.exposeFunction('__wirePage', async (m: Extract<WebviewMessage, { type: 'wirePage' }>) => {
      asked.push(m.from);
      const page = await readWirePage(store, id, m.from);
      await web.post({ type: 'wirePage', seq: m.seq, page });
    });
    // Every `wirePage` the page posts goes to that handler, in this document and after a reload.
    const relay = `{
      const push = window.__posted.push.bind(window.__posted);
      window.__posted.push = (...ms) => {
        for (const m of ms) if (m.type === 'wirePage') void window.__wirePage(m);
        return push(...ms);
      };
    }`;
    await web.page.addInitScript(relay);
    await web.page.evaluate(relay);
  });

  after(async () => {
    await browser?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the range, pages to the end and back, and goes to the longest gap', async () => {
    const page = web.page;
    await web.post({ type: 'exchange', exchange: view });
    await page.locator('vscode-tab-header', { hasText: 'Wire' }).click();
    const tab = page.locator('[data-panel="wire"]');
    const range = tab.locator('.wire-nav-top .wire-range');
    const rows = tab.locator('table.wire tbody tr');
    assert.equal(await range.innerText(), 'Events 1–5,000 of 23,001');
    assert.equal(await rows.count(), 5000);

    /** Waits (10 s at most) for `loc` to be within the 800 px high view: a scroll lands on a later frame. */
    const inView = async (loc: ReturnType<typeof tab.locator>, what: string) => {
      let y: number | undefined;
      for (const end = Date.now() + 10_000; Date.now() < end; await page.waitForTimeout(50)) {
        y = (await loc.boundingBox())?.y;
        if (y !== undefined && y > 0 && y < 800) return;
      }
      assert.fail(`${what} (y ${y})`);
    };
    const rangeIs = (text: string) =>
      page.waitForFunction((t) => document.querySelector('[data-panel="wire"] .wire-nav-top .wire-range')?.textContent === t, text);

    // The longest gap is beyond the first page: its link opens the page holding it, marked and scrolled to.
    await tab.locator('a.wire-gap-link').click();
    await rangeIs('Events 15,001–20,000 of 23,001');
    const target = tab.locator('tr.wire-target');
    await target.waitFor();
    assert.equal(await target.getAttribute('data-index'), String(GAP_AT));
    assert.equal(await target.locator('td').first().innerText(), (GAP_AT + 1).toLocaleString('en-US'));
    assert.equal(await target.locator('td').nth(2).innerText(), '1234.0');
    await inView(target, 'the marked row is in view'); // scrolled to on the next frame
    await screenshot(page, '22-webview-wire-longest-gap');

    await tab.locator('.wire-nav-top vscode-button[data-action="end"]').click();
    await rangeIs('Events 18,002–23,001 of 23,001');
    assert.equal(await rows.count(), 5000);
    const lastRow = rows.last();
    assert.equal(await lastRow.locator('td').first().innerText(), '23,001');
    assert.equal(await lastRow.locator('code').innerText(), '[DONE]');
    // Model output is text: the <img> is shown, never created, and its handler never ran.
    assert.ok((await tab.innerText()).includes(HOSTILE.replace(/"/g, '\\"')));
    assert.equal(await tab.locator('img').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await inView(lastRow, 'End scrolls to the last event');
    const rangeBox = await range.boundingBox();
    assert.ok(rangeBox && rangeBox.y > 0 && rangeBox.y < 800, `the range shown stays in view above the rows (y ${rangeBox?.y})`);
    await screenshot(page, '21-webview-wire-end');

    // A webview shown again starts over: it asks for the page it showed, not the first.
    await page.reload();
    await web.ready();
    await web.post({ type: 'exchange', exchange: view });
    await rangeIs('Events 18,002–23,001 of 23,001');

    await tab.locator('.wire-nav-top vscode-button[data-action="previous"]').click();
    await rangeIs('Events 13,002–18,001 of 23,001');
    // The gap is on this page now: the link marks it without asking the host.
    await tab.locator('a.wire-gap-link').click();
    await tab.locator(`tr.wire-target[data-index="${GAP_AT}"]`).waitFor();

    await tab.locator('.wire-nav-top vscode-button[data-action="start"]').click();
    await rangeIs('Events 1–5,000 of 23,001');
    assert.deepEqual(asked, [15_000, 18_001, 18_001, 13_001], 'pages on hand (the first, the one shown) are not asked for again');

    // Deleted meanwhile: the host answers with the state, the tab says it in one line and keeps the page it shows.
    await store.delete(id);
    await tab.locator('.wire-nav-top vscode-button[data-action="next"]').click();
    const problem = tab.locator('.wire-problem');
    await problem.waitFor();
    assert.match(await problem.innerText(), /no longer in the capture store/);
    assert.equal(await range.innerText(), 'Events 1–5,000 of 23,001');
    await screenshot(page, '23-webview-wire-gone');
  });
});
