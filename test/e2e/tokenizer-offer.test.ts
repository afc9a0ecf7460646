/**
 * The Tokens tab without a tokenizer, in Chromium (the real bundle, under the CSP VS Code gets): what is missing and
 * the two ways to get it, "Download from Hugging Face" (its progress, a failure said beside the offer, a second click
 * ignored while it runs) and "Choose Folder…"; the token view replaces the offer once the tokens come.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ExchangeView, HostMessage, TokenStreamView } from '../../webview/protocol';
import { launchBrowser, screenshot, type Browser } from './harness';
import { openWebviewPage, webviewSkip, type WebviewPage } from './webview-rig';

const skip = webviewSkip('webview');
const NEEDED = { repo: 'Qwen/Qwen3-235B-A22B-Instruct-2507', dir: '/home/me/.tokenscope/tokenizers/Qwen/Qwen3-235B-A22B-Instruct-2507' };

const exchange: ExchangeView = {
  id: 'q1',
  title: 'qwen/qwen3-235b-a22b-2507 · Example',
  meta: [{ label: 'model', value: 'qwen/qwen3-235b-a22b-2507' }],
  findings: [],
  native: { text: 'Hello world', source: 'raw' },
  wire: { events: [], eventCount: 0, longestGapMs: 0, chunkCount: 0 },
};

const stream: TokenStreamView = {
  tokenizer: 'Qwen/Qwen3-235B-A22B-Instruct-2507 (tokenizer.json)',
  source: 'text',
  ids: [9707, 1879],
  texts: ['Hello', ' world'],
  starts: [0, 5],
  ends: [5, 11],
  kinds: [0, 0],
  segments: [2, 2],
  accounting: [],
  findings: [],
};

describe('Tokens tab: getting a missing tokenizer', { skip }, () => {
  let browser: Browser;
  let web: WebviewPage<HostMessage>;

  before(async () => {
    browser = await launchBrowser();
    web = await openWebviewPage(browser, 'webview', { width: 1100, height: 700 });
  });
  after(async () => {
    await browser?.close();
  });

  const asks = async () => (await web.posted()).filter((m) => m.type === 'getTokenizer');

  it('offers the download and a folder instead of a plain dump, and the native text below', async () => {
    const page = web.page;
    await web.post({ type: 'exchange', exchange });
    await web.post({ type: 'tokens', reason: 'No tokenizer for Qwen/Qwen3-235B-A22B-Instruct-2507 on this machine yet', needed: NEEDED });
    const offer = page.locator('[data-panel="tokens"] .tokenizer-offer');
    await offer.waitFor();
    assert.match(await offer.innerText(), /No tokenizer for\s+Qwen\/Qwen3-235B-A22B-Instruct-2507\s+on this machine yet/);
    assert.match(await offer.innerText(), /\/home\/me\/\.tokenscope\/tokenizers\/Qwen\/Qwen3-235B-A22B-Instruct-2507/);
    await page.locator('[data-get-tokenizer="download"]', { hasText: 'Download from Hugging Face' }).waitFor();
    await page.locator('[data-get-tokenizer="folder"]', { hasText: 'Choose Folder…' }).waitFor();
    assert.equal(await page.locator('[data-panel="tokens"] pre.native').innerText(), 'Hello world');
    await screenshot(page, '30-webview-tokenizer-offer');
  });

  it('a download: asked once, its progress shown, a failure said beside the offer', async () => {
    const page = web.page;
    await page.locator('[data-get-tokenizer="download"]').click();
    await page.locator('.tokenizer-progress', { hasText: 'Starting the download…' }).waitFor();
    // Clicks while it runs ask for nothing more.
    await page.locator('[data-get-tokenizer="download"]').click({ force: true });
    assert.deepEqual(await asks(), [{ type: 'getTokenizer', how: 'download' }]);
    await web.post({ type: 'tokenizerProgress', progress: { file: 'tokenizer.json', received: 3_400_000, total: 11_400_000 } });
    await page.locator('.tokenizer-progress-text', { hasText: 'Downloading tokenizer.json: 3.4 of 11.4 MB' }).waitFor();
    await screenshot(page, '31-webview-tokenizer-download');
    const error =
      'No tokenizer: cannot reach the Hugging Face Hub at https://huggingface.co (ENOTFOUND) to fetch Qwen/Qwen3-235B-A22B-Instruct-2507/tokenizer.json';
    await web.post({ type: 'tokens', reason: error, needed: { ...NEEDED, error } });
    await page.locator('.tokenizer-error', { hasText: 'cannot reach the Hugging Face Hub' }).waitFor();
    assert.equal(await page.locator('.tokenizer-progress').count(), 0);
    assert.equal(await page.locator('[data-get-tokenizer="download"]').getAttribute('disabled'), null, 'the offer can be taken again');
  });

  it('a folder: asked for, and the token view replaces the offer when the tokens come', async () => {
    const page = web.page;
    await page.locator('[data-get-tokenizer="folder"]').click();
    assert.deepEqual((await asks()).at(-1), { type: 'getTokenizer', how: 'folder' });
    await web.post({ type: 'tokens', stream });
    await page.locator('.row .tok').first().waitFor();
    assert.equal(await page.locator('.tokenizer-offer').count(), 0);
    assert.match(await page.locator('.token-toolbar .source').innerText(), /Qwen\/Qwen3-235B-A22B-Instruct-2507 \(tokenizer\.json\)/);
  });
});
