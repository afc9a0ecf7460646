/**
 * The comparison webview's real bundle (media/compare.js + compare.css) in Chromium, under the same CSP as in
 * VS Code, with a stand-in for acquireVsCodeApi, fed the matrix of a real comparison against the OpenRouter
 * emulator: rows and failed cells render, provider- and model-supplied HTML stays text, clicks become the right
 * messages to the host, and the selection survives a reload (the panel hidden and shown again).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type CaptureStore } from '../../src/core/capture/store';
import { compareProviders } from '../../src/core/upstream/compare';
import { OpenRouterClient } from '../../src/core/upstream/openrouter';
import { compareView, type CompareState } from '../../src/extension/compare/matrix';
import { alignTokenStreams } from '../../src/extension/compare/tokenDiff';
import type { CompareHostMessage, CompareView } from '../../webview/compare/protocol';
import type { TokenStreamView } from '../../webview/protocol';
import { startOpenRouterEmulator, type OpenRouterEmulator } from '../fixtures/openrouter-emulator';
import { COMPARE_PROVIDERS, COMPARE_REQUEST } from '../helpers/compare';
import { launchBrowser, screenshot, type Browser, type Page } from './harness';
import { openWebviewPage, webviewSkip, type WebviewPage } from './webview-rig';

const skip = webviewSkip('compare');

const REQUEST = COMPARE_REQUEST;
const PROVIDERS = COMPARE_PROVIDERS;
const INJECTION = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

describe('comparison webview in Chromium', { skip }, () => {
  let emu: OpenRouterEmulator;
  let dir: string;
  let store: CaptureStore;
  let browser: Browser;
  let web: WebviewPage<CompareHostMessage>;
  let page: Page;
  let view: CompareView;

  before(async () => {
    emu = await startOpenRouterEmulator({ chunkDelayMs: 1 });
    dir = mkdtempSync(join(tmpdir(), 'tokenscope-e2e-compare-'));
    store = await openStore(dir);
    const client = new OpenRouterClient({ baseUrl: emu.url, apiKey: 'sk-or-v1-test' });
    const endpoints = await client.endpoints(REQUEST.model);
    const state: CompareState = {
      model: REQUEST.model,
      reference: 'fireworks',
      samples: 2,
      concurrency: 8,
      state: 'running',
      progress: { done: 0, total: 8, running: 0, failed: 0 },
      providers: PROVIDERS.map((slug) => ({ slug, endpoint: endpoints.find((e) => e.slug === slug) })),
      results: new Map(),
    };
    const report = await compareProviders({
      request: REQUEST,
      client,
      providers: PROVIDERS,
      samples: 2,
      reference: 'fireworks',
      store,
      onSample: (_s, row) => state.results.set(row.slug, row),
    });
    state.state = 'done';
    state.wallMs = report.wallMs;
    state.progress = { done: 8, total: 8, running: 0, failed: report.providers.reduce((n, p) => n + p.failed, 0) };
    // Provider-supplied strings the page must show as text: an error body and a served-provider name.
    const fw = state.results.get('fireworks')!;
    state.results.set('fireworks', { ...fw, verified: false, servedBy: ['Fireworks', INJECTION] });
    view = compareView(state);
    const down = view.rows.find((r) => r.slug === 'atlas-cloud')!;
    down.samples[0].errorBody = `{"error":{"message":"${INJECTION}"}}`;

    browser = await launchBrowser();
    web = await openWebviewPage(browser, 'compare', { width: 1400, height: 900 });
    page = web.page;
    await web.post({ type: 'snapshot', view });
    await page.locator('table.matrix').waitFor();
  });

  after(async () => {
    await browser?.close();
    await store?.close();
    await emu?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const lastPosted = async () => (await web.posted()).at(-1);

  it('draws one row per provider, failed samples as cells with status and error body, a mismatch highlighted', async () => {
    assert.equal(await page.locator('table.matrix tbody tr').count(), PROVIDERS.length);
    assert.equal(await page.locator('.cell').count(), PROVIDERS.length * 2);
    const down = page.locator('tr', { hasText: 'AtlasCloud' });
    assert.equal(await down.locator('.cell.state-failed').count(), 2, 'both failed samples are cells');
    assert.match(await down.locator('.failure').first().innerText(), /HTTP 5\d\d/);
    assert.equal(await page.locator('tr.row-mismatch').count(), 1);
    assert.match(await page.locator('tr.row-mismatch td.served').innerText(), /requested Fireworks/);
    assert.match(await page.locator('tr', { hasText: 'Groq' }).locator('td.num').nth(1).innerText(), /0\.0%/, 'schema accuracy column');
    await screenshot(page, '20-compare-matrix');
  });

  it('shows provider- and model-supplied HTML as text and runs none of it', async () => {
    await page.locator('tr', { hasText: 'AtlasCloud' }).locator('details summary').first().click();
    const shown = await page.locator('.failure pre').first().innerText();
    assert.ok(shown.includes(INJECTION), 'the error body is shown verbatim');
    assert.ok((await page.locator('tr.row-mismatch td.served').innerText()).includes(INJECTION));
    const stream = (texts: string[]): TokenStreamView => ({
      tokenizer: 'kimi-k2',
      source: 'text',
      ids: texts.map((_, i) => i),
      texts,
      starts: texts.map(() => 0),
      ends: texts.map(() => 0),
      kinds: texts.map(() => 0),
      segments: texts.map(() => 2),
      accounting: [],
      findings: [],
    });
    const diff = alignTokenStreams(
      { label: 'l', exchangeId: 'a', stream: stream(['Hi', INJECTION]) },
      { label: 'r', exchangeId: 'b', stream: stream(['Hi']) },
    );
    await web.post({ type: 'tokenDiff', diff });
    await page.locator('table.diff').waitFor();
    // Token chips show whitespace visibly (a space as ·).
    assert.ok((await page.locator('table.diff td.del').innerText()).includes(INJECTION.replaceAll(' ', '·')));
    // The diff opens below the matrix: the screenshot is of the diff.
    await page.locator('table.diff').scrollIntoViewIfNeeded();
    await screenshot(page, '21-compare-token-diff');
    assert.equal(await page.locator('#app img, #app script').count(), 0, 'no element was created from model text');
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  });

  it('turns clicks into messages for the host: open, reference, side by side', async () => {
    const groq = page.locator('tr', { hasText: 'Groq' });
    await groq.locator('button.open').first().click();
    const ids = view.rows.find((r) => r.slug === 'groq')!.samples.map((s) => s.exchangeId!);
    assert.deepEqual(await lastPosted(), { type: 'openExchange', id: ids[0] });

    await page.selectOption('#reference', 'groq');
    assert.deepEqual(await lastPosted(), { type: 'setReference', slug: 'groq' });

    const tokenDiff = page.locator('vscode-button', { hasText: 'Token diff' });
    assert.equal(await tokenDiff.getAttribute('disabled'), '', 'needs two samples');
    await groq.locator('input[type=checkbox]').nth(0).check();
    await groq.locator('input[type=checkbox]').nth(1).check();
    await page.locator('vscode-button:not([disabled])', { hasText: 'Token diff' }).click();
    assert.deepEqual(await lastPosted(), { type: 'diff', kind: 'tokens', left: ids[0], right: ids[1] });
  });

  it('updates only what changed while samples stream in (an open dropdown or focus is not torn down)', async () => {
    await page.evaluate(() => {
      (document.getElementById('reference') as HTMLSelectElement & { __mark?: boolean }).__mark = true;
      (document.querySelector('table.matrix tbody tr') as HTMLElement & { __mark?: boolean }).__mark = true;
    });
    const running: CompareView = { ...view, state: 'running', progress: { done: 7, total: 8, running: 1, failed: 2 } };
    const rows = running.rows.map((r) => (r.slug === 'groq' ? { ...r, ttft: '999 ms' } : r));
    await web.post({ type: 'snapshot', view: { ...running, rows } });
    await page.locator('.status', { hasText: '7/8 samples done · 1 running · 2 failed' }).waitFor();
    assert.match(await page.locator('tr', { hasText: 'Groq' }).locator('td.perf').innerText(), /999 ms/);
    const marks = await page.evaluate(() => [
      (document.getElementById('reference') as HTMLSelectElement & { __mark?: boolean }).__mark,
      (document.querySelector('table.matrix tbody tr') as HTMLElement & { __mark?: boolean }).__mark,
    ]);
    assert.deepEqual(marks, [true, true], 'the reference selector and the unchanged first row are the same elements');
    await web.post({ type: 'snapshot', view });
  });

  it('shows an action that failed on the host at the foot, as text, over the matrix, until dismissed', async () => {
    const top = await page.locator('table.matrix').boundingBox();
    await web.post({ type: 'error', message: `tokenizing failed: ${INJECTION}` });
    const banner = page.locator('.panel-error[role=alert]');
    await banner.waitFor();
    assert.equal(await banner.locator('.panel-error-text').innerText(), `tokenizing failed: ${INJECTION}`);
    assert.deepEqual(await page.locator('table.matrix').boundingBox(), top, 'the matrix does not move');
    await screenshot(page, '22-compare-host-error');
    await web.post({ type: 'error', message: 'a later error replaces it' });
    await page.locator('.panel-error-text', { hasText: 'a later error replaces it' }).waitFor();
    assert.equal(await banner.count(), 1);
    await banner.locator('button.panel-error-close').click();
    await banner.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  });

  it('keeps the selection across a reload, resynced from a fresh host snapshot', async () => {
    await page.reload();
    await web.ready();
    await web.post({ type: 'snapshot', view });
    await page.locator('table.matrix').waitFor();
    assert.equal(await page.locator('.cell.selected').count(), 2);
    assert.match(await page.locator('.selection').innerText(), /groq #1 ↔ groq #2/);
  });
});
