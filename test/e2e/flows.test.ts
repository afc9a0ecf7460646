/**
 * The context-menu flows in a real VS Code (code-server + Chromium), driven by clicks and keystrokes as a user would:
 * the OpenRouter key typed into the password box, Re-run… on a captured exchange pinned to another provider of the
 * OpenRouter emulator (the new exchange appears in the tree, linked to the original, and opens), and Export Repro…
 * as Markdown through the redaction preview and the save dialog (the file holds the missing-marker excerpt and not
 * the key the agent sent).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../src/core/capture/store';
import type { CapturedExchange } from '../../src/core/model';
import { READ_TOOL } from '../fixtures/openrouter-emulator';
import {
  contextMenu,
  missingPrerequisite,
  runCommand,
  screenshot,
  startWorkbenchRig,
  webviewFrame,
  type Page,
  type WorkbenchRig,
} from './harness';

const skip = missingPrerequisite();

/** The key the agent sends: it must reach the upstream but never an export. */
const CANARY = `sk-or-v1-${randomBytes(32).toString('hex')}`;
/** The key the user stores with "Set OpenRouter API Key": re-runs must use it. */
const STORED_KEY = `sk-or-v1-${randomBytes(32).toString('hex')}`;

describe('Tokenscope context-menu flows in VS Code', { skip, timeout: 10 * 60_000 }, () => {
  let rig: WorkbenchRig;
  let page: Page;
  let proxyPort: number;
  let captures: string;
  let emulator: WorkbenchRig['emulator'];

  before(async () => {
    // Re-runs reach the (emulated) OpenRouter through the same route the agent uses.
    rig = await startWorkbenchRig([
      { slug: 'chutes', name: 'Chutes', personality: 'leak-content' },
      { slug: 'fireworks', name: 'Fireworks', personality: 'correct' },
    ]);
    ({ page, proxyPort, captures, emulator } = rig);
    await page.locator('.activitybar .action-item a[aria-label^="Tokenscope"]').click({ timeout: 60_000 });
    await page.locator('.statusbar-item', { hasText: `Tokenscope :${proxyPort}` }).waitFor({ timeout: 30_000 });

    // The broken exchange both flows start from, sent through the proxy with the canary key.
    const res = await fetch(`http://127.0.0.1:${proxyPort}/openrouter/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${CANARY}`, 'user-agent': 'opencode/1.0 e2e' },
      body: JSON.stringify({
        model: 'moonshotai/kimi-k2-0905',
        stream: true,
        provider: { only: ['chutes'] },
        messages: [{ role: 'user', content: 'Read README.md and summarize it.' }],
        tools: [READ_TOOL],
      }),
    });
    assert.equal(res.status, 200, `proxy answered ${res.status}`);
    assert.match(await res.text(), /tool_calls_section_begin/);
    await captureRow('Chutes').locator('.codicon-error').waitFor({ timeout: 30_000 });
  });

  after(() => rig?.close('3x-last'));

  const captureRow = (provider: string) => rig.captureRow(provider);

  const quickInput = () => page.locator('.quick-input-widget');

  /** The exchanges as the extension's store holds them now, read through a read-only open of its database. */
  async function storedExchanges(): Promise<Map<string, Partial<CapturedExchange>>> {
    const store = await openStore(captures, { readOnly: true });
    try {
      return new Map(store.list().map((x) => [x.id, x]));
    } finally {
      await store.close();
    }
  }

  /** Whether any file under the capture folder holds `text`. */
  function capturedBytesInclude(text: string): boolean {
    const files = readdirSync(captures, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    return files.some((d) => readFileSync(join(d.parentPath, d.name)).includes(text));
  }

  it('stores the OpenRouter key typed into the password box of "Set OpenRouter API Key"', async () => {
    await runCommand(page, 'Tokenscope: Set OpenRouter API Key');
    const input = quickInput().locator('input[type="password"]');
    await input.waitFor();
    await input.fill(STORED_KEY);
    await screenshot(page, '30-set-key');
    await input.press('Enter');
    await page.locator('.notifications-toasts', { hasText: 'OpenRouter key stored' }).waitFor({ timeout: 15_000 });
  });

  it('re-runs the exchange pinned to another provider from the tree context menu, linked to the original', async () => {
    const before = emulator.requests.length;
    await contextMenu(page, captureRow('Chutes'), 'Re-run…');
    await quickInput().locator('.monaco-list-row', { hasText: 'OpenRouter, pinned to a provider…' }).click();
    // The live provider list of the capture's model, from the (emulated) OpenRouter endpoints API.
    await quickInput()
      .locator('.quick-input-title', { hasText: 'Re-run on one provider of moonshotai/kimi-k2-0905' })
      .waitFor({ timeout: 30_000 });
    const fireworks = quickInput().locator('.monaco-list-row', { hasText: 'Fireworks' });
    await fireworks.waitFor();
    await screenshot(page, '31-rerun-provider');
    await fireworks.click();

    // The new exchange: in the tree, opened in the exchange panel.
    await captureRow('Fireworks').waitFor({ timeout: 60_000 });
    const view = webviewFrame(page);
    await view.locator('h1', { hasText: 'Fireworks' }).waitFor({ timeout: 60_000 });
    await view.locator('.meta div', { hasText: /Pin\s*fireworks/ }).waitFor();
    await view.locator('.meta div', { hasText: /Re-run of\s*\S+ on openrouter:fireworks/ }).waitFor();
    await screenshot(page, '32-rerun-opened');
    await view.locator('vscode-tab-header', { hasText: 'Findings' }).click();
    await screenshot(page, '32b-rerun-findings');

    // It went out with the stored key and the provider pin, not with the agent's key.
    const sent = emulator.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions'));
    assert.equal(sent.length, 1, 'one re-run request reached OpenRouter');
    assert.equal(sent[0].headers.authorization, `Bearer ${STORED_KEY}`);
    assert.deepEqual(sent[0].body.provider?.only ?? sent[0].body.provider?.order, ['fireworks']);

    const stored = [...(await storedExchanges()).values()];
    const original = stored.find((x) => x.servedProvider === 'Chutes' && !x.parentId);
    const rerun = stored.find((x) => x.parentId);
    assert.ok(original && rerun, 'the store holds the original and its re-run');
    assert.equal(rerun.parentId, original.id, 'the re-run is linked to the original');
    assert.equal(rerun.target, 'openrouter:fireworks');
  });

  it('exports a Markdown repro through the redaction preview and the save dialog, without the agent key', async () => {
    await contextMenu(page, captureRow('Chutes'), 'Export Repro…');
    await quickInput().locator('.monaco-list-row', { hasText: 'Markdown issue' }).click();

    const modal = page.locator('.monaco-dialog-box');
    await modal.waitFor();
    // The preview lists what the export redacts; the Authorization header was already redacted when it was captured.
    assert.match(await modal.innerText(), /export this exchange\?[\s\S]*Redacted:/);
    await screenshot(page, '33-export-preview');
    await modal.locator('.monaco-button', { hasText: 'Export' }).click();

    // code-server's save dialog is the simple file dialog: a quick input holding the path.
    const target = join(rig.server.workspace, 'kimi-repro.md');
    const path = quickInput().locator('input');
    await quickInput().locator('.quick-input-title', { hasText: 'Save the repro' }).waitFor();
    // The dialog fills in the suggested path once it has listed the folder; typing before that would be overwritten.
    await page.waitForFunction(
      (dir) => (document.querySelector('.quick-input-widget input') as HTMLInputElement | null)?.value.startsWith(dir),
      rig.server.workspace,
    );
    await path.fill(target);
    assert.equal(await path.inputValue(), target);
    await screenshot(page, '34-export-save');
    await path.press('Enter');
    await page.locator('.notifications-toasts', { hasText: `saved ${target}` }).waitFor({ timeout: 15_000 });
    await screenshot(page, '35-export-saved');

    assert.ok(existsSync(target), `${target} was written`);
    const md = readFileSync(target, 'utf8');
    assert.ok(md.includes('missing here: <|tool_calls_section_end|>'), 'the excerpt marks the missing section end');
    assert.ok(!md.includes(CANARY), 'the agent key is not in the export');
    assert.ok(!md.includes(CANARY.slice(0, 24)), 'no prefix of the agent key is in the export');
    assert.ok(!capturedBytesInclude(CANARY), 'the agent key never reached the capture folder either');
  });

  it("compares the providers from the tree: a broken provider's samples are marked broken, never a green ✓", async () => {
    await contextMenu(page, captureRow('Chutes'), 'Compare Providers…');
    // Every provider serving the model, from the (emulated) OpenRouter endpoints API, ticked.
    await quickInput()
      .locator('.quick-input-title', { hasText: 'compare moonshotai/kimi-k2-0905 across providers' })
      .waitFor({ timeout: 30_000 });
    await quickInput().locator('.monaco-list-row', { hasText: 'Fireworks' }).waitFor();
    await quickInput().locator('.monaco-list-row', { hasText: 'Chutes' }).waitFor();
    await screenshot(page, '36-compare-pick');
    await quickInput().locator('input').first().press('Enter');
    await quickInput().locator('.quick-input-title', { hasText: 'samples per provider' }).waitFor({ timeout: 30_000 });
    const samples = quickInput().locator('input').first();
    await samples.fill('2');
    await samples.press('Enter');

    const view = webviewFrame(page);
    await view.locator('table.matrix').waitFor({ timeout: 60_000 });
    await view.locator('.status', { hasText: 'Finished 4 samples' }).waitFor({ timeout: 120_000 });
    const row = (name: string) => view.locator('table.matrix tbody tr', { hasText: name });
    // Chutes leaks its call as text: each sample answered HTTP 200, with error findings. Broken, not ✓.
    assert.equal(await row('Chutes').locator('.cell.state-broken').count(), 2);
    assert.equal(await row('Chutes').locator('.cell .codicon-pass').count(), 0, 'no green ✓ on a broken sample');
    assert.equal((await row('Chutes').locator('.cell .codicon-error').count()) >= 2, true);
    assert.equal(await row('Fireworks').locator('.cell.state-ok .codicon-pass').count(), 2, 'the healthy provider keeps its ✓');
    // Costs read as money, never as float noise.
    for (const text of await view.locator('td.perf div[title="Median USD per request"]').allInnerTexts())
      assert.match(text, /^(\$\d+\.\d+|—)$/, text);
    await screenshot(page, '37-compare-view');
  });
});
