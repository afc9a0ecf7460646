/**
 * The exchange webview's Parsed tab in Chromium (the real bundle, under the CSP VS Code gets): the parse of a turn
 * beside the provider's structured calls, built by the host's own view builder from a response whose logprobs show
 * a call the provider dropped and arguments it changed. Model output holding HTML stays text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { prepare, runChecks } from '../../src/core/analyze';
import type { ParsedResponse } from '../../src/core/model';
import { turnReport } from '../../src/core/parsed';
import { parsedView } from '../../src/extension/exchangeView';
import type { ExchangeView, HostMessage } from '../../webview/protocol';
import { launchBrowser, screenshot, type Browser } from './harness';
import { openWebviewPage, webviewSkip, type WebviewPage } from './webview-rig';

const skip = webviewSkip('webview');
const K = {
  S: '<|tool_calls_section_begin|>',
  E: '<|tool_calls_section_end|>',
  C: '<|tool_call_begin|>',
  A: '<|tool_call_argument_begin|>',
  Z: '<|tool_call_end|>',
};
const HOSTILE = '<img src=x onerror="window.__pwned=1">';

function exchange(): ExchangeView {
  const content = `Reading both ${HOSTILE}.`;
  const raw = `${content}${K.S}${K.C}functions.read:0${K.A}{"filePath":"a.ts"}${K.Z}${K.C}functions.ls:1${K.A}{"path":"${HOSTILE.replace(/"/g, '\\"')}"}${K.Z}${K.E}`;
  const response: ParsedResponse = {
    protocol: 'openai-chat',
    streamed: false,
    terminated: true,
    events: [],
    wireIssues: [],
    model: 'moonshotai/kimi-k2-0905',
    finishReason: 'tool_calls',
    message: { content, toolCalls: [{ index: 0, id: 'functions.read:0', name: 'read', arguments: '{"filePath":"b.ts"}' }] },
    logprobTokens: [{ token: raw }],
  };
  const { ctx, familySource, message } = prepare({ response });
  const findings = runChecks(ctx);
  const parsed = parsedView(
    turnReport({ family: ctx.format?.id, familySource, native: ctx.native, message, findings }, ctx),
    response.message,
  );
  return {
    id: 'parsed',
    title: 'moonshotai/kimi-k2-0905 · Example',
    meta: [],
    worst: 'error',
    findings: [],
    wire: { events: [], eventCount: 0, longestGapMs: 0, chunkCount: 0 },
    parsed,
  };
}

describe('Parsed tab in Chromium', { skip }, () => {
  let browser: Browser;
  let web: WebviewPage<HostMessage>;

  before(async () => {
    browser = await launchBrowser();
    web = await openWebviewPage(browser, 'webview', { width: 1200, height: 800 });
  });

  after(async () => {
    await browser?.close();
  });

  it('shows the parse beside the provider’s calls, the differences highlighted, model HTML as text', async () => {
    const page = web.page;
    await web.post({ type: 'exchange', exchange: exchange() });
    await page.locator('vscode-tab-header', { hasText: 'Parsed' }).click();
    const model = page.locator('[data-side="model"]');
    const provider = page.locator('[data-side="provider"]');
    await model.locator('.call-card').first().waitFor();
    assert.equal(await model.locator('.call-card').count(), 2);
    assert.equal(await provider.locator('.call-card').count(), 1);
    // The dropped call and the changed arguments are marked on the model's side, the changed call on the provider's.
    assert.equal(await model.locator('.call-card.mismatch').count(), 2);
    assert.match(await model.locator('.call-card[data-call="1"]').innerText(), /not in the provider’s tool_calls/);
    assert.match(await provider.locator('.call-card.mismatch').innerText(), /arguments changed by the provider/);
    assert.equal(await page.locator('.parsed-mismatches li').count(), 2);
    // Model output is text: the <img> is shown, never created, and its handler never ran.
    assert.ok((await model.innerText()).includes(HOSTILE));
    assert.equal(await page.locator('.parsed img').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await screenshot(page, '20-webview-parsed-tab');
  });
});
