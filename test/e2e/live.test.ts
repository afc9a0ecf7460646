/**
 * The live view in a real VS Code (code-server + Chromium): while the OpenRouter emulator streams an answer slowly
 * through the extension's proxy, the Captures tree shows the exchange in flight (spinner, bytes and seconds so far),
 * opening it shows the growing silence before the first token ("no bytes for N s") and then tokens before the stream
 * has ended; when it ends the same panel becomes the finished exchange, with its findings, without a reload.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { READ_TOOL } from '../fixtures/openrouter-emulator';
import { missingPrerequisite, screenshot, startWorkbenchRig, webviewFrame, type Page, type WorkbenchRig } from './harness';
import { assertRowsWhole, rowGeometry } from './webview-rig';

const skip = missingPrerequisite();

/** Silence before the first token, then 40 chunks 150 ms apart: about 11 s of stream. */
const TTFT_MS = 5000;
const CHUNKS = 40;
const GAP_MS = 150;

describe('Tokenscope live view in VS Code', { skip, timeout: 10 * 60_000 }, () => {
  let rig: WorkbenchRig;
  let page: Page;

  before(async () => {
    // The token view tokenizes with the Kimi K2 tokenizer shipped in the extension.
    rig = await startWorkbenchRig([
      { slug: 'chutes', name: 'Chutes', personality: 'leak-content', ttftMs: TTFT_MS, chunks: CHUNKS, chunkDelayMs: GAP_MS },
    ]);
    page = rig.page;
    await page.locator('.activitybar .action-item a[aria-label^="Tokenscope"]').click({ timeout: 60_000 });
    await page.locator('.statusbar-item', { hasText: `Tokenscope :${rig.proxyPort}` }).waitFor({ timeout: 30_000 });
  });

  after(() => rig?.close('49-live-last'));

  it('shows a slow stream while it streams, then the finished exchange in the same panel', async () => {
    // The agent's request, read as it arrives; `ended` is when the client saw the last byte.
    let ended: number | undefined;
    let firstDataAt: number | undefined;
    const res = await fetch(`http://127.0.0.1:${rig.proxyPort}/openrouter/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-e2e-live', 'user-agent': 'opencode/1.0 e2e' },
      body: JSON.stringify({
        model: 'moonshotai/kimi-k2-0905',
        stream: true,
        provider: { only: ['chutes'] },
        messages: [{ role: 'user', content: 'Read README.md' }],
        tools: [READ_TOOL],
      }),
    });
    assert.equal(res.status, 200);
    const reading = (async () => {
      const dec = new TextDecoder();
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (firstDataAt === undefined && dec.decode(value).includes('data: {')) firstDataAt = Date.now();
      }
      ended = Date.now();
    })();

    // The tree: the exchange in flight, with bytes and seconds so far.
    const row = page.locator('.part.sidebar .monaco-list-row', { hasText: 'streaming ·' }).first();
    await row.waitFor({ timeout: 30_000 });
    assert.match(await row.innerText(), /streaming · \d+ B · \d+ s/);
    assert.ok((await row.locator('.codicon-loading').count()) > 0, 'a spinner on the row');
    await screenshot(page, '40-live-tree');

    // Open it while the upstream is still silent: the silence is shown, and grows.
    await row.click();
    const view = webviewFrame(page);
    const banner = view.locator('.live-banner');
    await banner.waitFor({ timeout: 20_000 });
    // A mark on the webview's document: still there at the end means the panel was updated, never reloaded.
    await view.locator('body').evaluate((b) => b.setAttribute('data-live-mark', 'kept'));
    await view.locator('.live-banner', { hasText: /no bytes for [3-9] s/ }).waitFor({ timeout: 10_000 });
    const first = Number(/no bytes for (\d+) s/.exec(await banner.innerText())![1]);
    await page.waitForTimeout(1200);
    if (firstDataAt === undefined) {
      const later = /no bytes for (\d+) s/.exec(await banner.innerText());
      if (later) assert.ok(Number(later[1]) > first, `the gap grows: ${first} s, then ${later[1]} s`);
    }
    await screenshot(page, '41-live-gap');
    // Mid-stream, a finding only the end of the stream can make true is not shown (the panel opened while streaming).
    assert.equal(
      await view.locator('.finding-chip', { hasText: /terminal event/ }).count(),
      0,
      'no "ended without its terminal event" while streaming',
    );

    // Tokens appear before the stream has ended.
    await view.locator('.row .tok').first().waitFor({ timeout: 20_000 });
    const tokensSeenAt = Date.now();
    assert.equal(ended, undefined, 'tokens were shown while the stream was still going');
    assert.ok(firstDataAt !== undefined);
    console.log(
      `live view: first tokens on screen ${tokensSeenAt - firstDataAt!} ms after the client received the first data chunk (includes the test's polling)`,
    );
    const countEarly = await view.locator('.token-toolbar .source').innerText();
    await page.waitForTimeout(1500);
    const countLater = await view.locator('.token-toolbar .source').innerText();
    const n = (s: string) => Number(/^([\d,]+) completion tokens/.exec(s.trim())?.[1].replace(/,/g, '') ?? NaN);
    if (ended === undefined) assert.ok(n(countLater) > n(countEarly), `tokens keep arriving: ${countEarly} → ${countLater}`);
    await screenshot(page, '42-live-tokens');
    assertRowsWhole(await rowGeometry(view.locator('.scroller')), 'the live token view');

    // The stream ends: same panel, no live banner, the finished exchange with its findings.
    await reading;
    await view.locator('.live-banner').waitFor({ state: 'detached', timeout: 20_000 });
    await view.locator('.title-icon.sev-error').waitFor({ timeout: 20_000 });
    await view
      .locator('.finding-chip', { hasText: /section|markup|finish/i })
      .first()
      .waitFor({ timeout: 20_000 });
    assert.equal(
      await view.locator('body[data-live-mark="kept"]').count(),
      1,
      'the same document: it became the finished exchange in place',
    );
    await screenshot(page, '43-live-finished');
  });
});
