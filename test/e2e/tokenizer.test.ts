/**
 * Getting a tokenizer in a real VS Code (code-server + Chromium). A Kimi K2 exchange shows its tokens at once, from the
 * tokenizer shipped in the extension. A model whose tokenizer is not on the machine opens with the offer instead, and
 * the Hub (a local emulator) is asked nothing until "Download from Hugging Face" is clicked; then the tokens come.
 * "Choose Folder…" puts a folder in tokenscope.tokenizer.folder through VS Code's own dialog.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHfEmulator, type HfEmulator } from '../fixtures/hf-emulator';
import { lenmlDir } from '../unit/tokens/helpers';
import { missingPrerequisite, screenshot, startWorkbenchRig, webviewFrame, type Page, type WorkbenchRig } from './harness';

const qwen = lenmlDir('qwen3');
const skip = missingPrerequisite() ?? ('skip' in qwen ? qwen.skip : undefined);
const QWEN_REPO = 'Qwen/Qwen3-235B-A22B-Instruct-2507';

describe('Tokenscope tokenizers in VS Code', { skip, timeout: 10 * 60_000 }, () => {
  let rig: WorkbenchRig;
  let page: Page;
  let hub: HfEmulator;

  before(async () => {
    const dir = (qwen as { dir: string }).dir;
    hub = await startHfEmulator({
      [QWEN_REPO]: {
        files: { 'tokenizer.json': join(dir, 'tokenizer.json'), 'tokenizer_config.json': join(dir, 'tokenizer_config.json') },
      },
    });
    rig = await startWorkbenchRig(
      [{ slug: 'novita', name: 'Novita', personality: 'correct' }],
      {},
      {
        env: { HF_ENDPOINT: hub.url },
        models: ['moonshotai/kimi-k2-0905', 'qwen/qwen3-235b-a22b-2507', 'z-ai/glm-4.6'],
      },
    );
    page = rig.page;
    await page.locator('.activitybar .action-item a[aria-label^="Tokenscope"]').click({ timeout: 60_000 });
    await page.locator('.statusbar-item', { hasText: `Tokenscope :${rig.proxyPort}` }).waitFor({ timeout: 30_000 });
  });

  after(async () => {
    await rig?.close('tokenizer-99-last');
    await hub?.close();
  });

  async function chat(model: string): Promise<void> {
    const res = await fetch(`http://127.0.0.1:${rig.proxyPort}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-e2e-test' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Say hello.' }] }),
    });
    assert.equal(res.status, 200);
    await res.text();
  }

  /** Opens the newest capture whose row shows `model`; clicks again if the tree swapped the row under the click. */
  async function open(model: string, until: string): Promise<void> {
    const row = page.locator('.part.sidebar .monaco-list-row', { hasText: model }).first();
    await row.waitFor({ timeout: 30_000 });
    for (let attempt = 1; ; attempt++) {
      await row.click();
      try {
        await webviewFrame(page).locator(until).first().waitFor({ timeout: 20_000 });
        return;
      } catch (e) {
        if (attempt === 3) throw e;
      }
    }
  }

  it('Kimi K2: the tokens at once, from the tokenizer shipped in the extension', async () => {
    await chat('moonshotai/kimi-k2-0905');
    await open('moonshotai/kimi-k2-0905', '.row .tok');
    assert.match(await webviewFrame(page).locator('.token-toolbar .source').innerText(), /moonshotai\/Kimi-K2-Instruct-0905 \(tiktoken\)/);
    assert.equal(hub.requests.length, 0, 'the Hub was not asked');
  });

  it('another model: the offer, nothing asked of the Hub; "Download from Hugging Face" brings the tokens', async () => {
    await chat('qwen/qwen3-235b-a22b-2507');
    await open('qwen/qwen3-235b-a22b-2507', '.tokenizer-offer');
    const view = webviewFrame(page);
    assert.match(
      await view.locator('.tokenizer-offer').innerText(),
      /No tokenizer for\s+Qwen\/Qwen3-235B-A22B-Instruct-2507\s+on this machine yet/,
    );
    assert.equal(hub.requests.length, 0, 'opening the exchange asks the Hub nothing');
    await screenshot(page, 'tokenizer-01-offer');
    await view.locator('[data-get-tokenizer="download"]').click();
    await view.locator('.row .tok').first().waitFor({ timeout: 60_000 });
    assert.match(await view.locator('.token-toolbar .source').innerText(), /Qwen\/Qwen3-235B-A22B-Instruct-2507 \(tokenizer\.json\)/);
    assert.ok(
      hub.requests.some((r) => r.path === `/${QWEN_REPO}/resolve/main/tokenizer.json`),
      hub.requests.map((r) => r.path).join(' '),
    );
    await screenshot(page, 'tokenizer-02-downloaded');
  });

  it('"Choose Folder…" sets tokenscope.tokenizer.folder through VS Code\'s dialog and re-tokenizes', async () => {
    await chat('z-ai/glm-4.6');
    await open('z-ai/glm-4.6', '.tokenizer-offer');
    const view = webviewFrame(page);
    await view.locator('[data-get-tokenizer="folder"]').click();
    // code-server's own folder dialog: a quick input holding a path.
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 30_000 });
    const dir = (qwen as { dir: string }).dir;
    await input.fill(`${dir}/`);
    // The dialog lists the typed folder once it has gone there (a folder dialog lists only "..", as models/ holds no
    // folders); an Enter while it is still going there is held until it is done.
    await page.locator('.quick-input-list .monaco-list-row', { hasText: '..' }).first().waitFor({ timeout: 30_000 });
    for (let i = 0; i < 5 && (await input.isVisible()); i++) {
      if ((await input.inputValue()) !== `${dir}/`) await input.fill(`${dir}/`);
      await input.press('Enter');
      await input.waitFor({ state: 'hidden', timeout: 2_000 }).catch(() => undefined);
    }
    // The tokens come from the chosen folder only once tokenscope.tokenizer.folder is set to it.
    try {
      await view.locator('.row .tok').first().waitFor({ timeout: 60_000 });
    } catch (e) {
      await screenshot(page, 'tokenizer-03-folder-failed');
      const dialog = (await input.isVisible())
        ? `dialog open at ${JSON.stringify(await input.inputValue())}: ${await page.locator('.quick-input-widget').innerText()}`
        : 'dialog closed';
      const toasts = await page
        .locator('.notifications-toasts')
        .innerText()
        .catch(() => '');
      const panel = await view
        .locator('body')
        .innerText()
        .catch(() => '');
      throw new Error(`no tokens after choosing ${dir}: ${dialog}; notifications: ${toasts}; panel: ${panel.slice(0, 600)}`, { cause: e });
    }
    assert.match(await view.locator('.token-toolbar .source').innerText(), /tokenizer-qwen3\/models \(tokenizer\.json\)/);
    await screenshot(page, 'tokenizer-03-folder');
  });
});
