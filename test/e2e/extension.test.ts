/**
 * Tokenscope in a real VS Code (code-server + Chromium): a request through the extension's proxy to the OpenRouter
 * emulator's leaky provider shows up broken in the Captures tree, opens in the token view with the unterminated
 * section drawn inline, lands in the Problems panel, and HTML in model output renders as inert text.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { READ_TOOL } from '../fixtures/openrouter-emulator';
import { sharedDir } from '../helpers/shared';
import {
  missingPrerequisite,
  runCommand,
  screenshot,
  screenshotsDir,
  startWorkbenchRig,
  webviewFrame,
  type Page,
  type WorkbenchRig,
} from './harness';
import { assertRowsWhole, rowGeometry } from './webview-rig';

const skip = missingPrerequisite();


describe('Tokenscope in VS Code', { skip, timeout: 10 * 60_000 }, () => {
  let rig: WorkbenchRig;
  let page: Page;
  let proxyPort: number;
  const dialogs: string[] = [];

  before(async () => {
    const tokenizer = sharedDir() && join(sharedDir()!, 'tokenizers', 'kimi-k2');
    rig = await startWorkbenchRig(
      [
        { slug: 'chutes', name: 'Chutes', personality: 'leak-content' },
        { slug: 'novita', name: 'Novita', personality: 'html-injection' },
      ],
      tokenizer ? { 'tokenscope.tokenizer.folder': tokenizer } : {},
    );
    ({ page, proxyPort } = rig);
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });

  /** A streamed chat completion sent the way an agent would: through the extension's proxy, default route. */
  async function chat(extra: Record<string, unknown>): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${proxyPort}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-e2e-test', 'user-agent': 'opencode/1.0 e2e' },
      body: JSON.stringify({
        model: 'moonshotai/kimi-k2-0905',
        stream: true,
        messages: [{ role: 'user', content: 'Read README.md and summarize it.' }],
        ...extra,
      }),
    });
    assert.equal(res.status, 200, `proxy answered ${res.status}`);
    return res.text();
  }

  const captureRow = (provider: string) => rig.captureRow(provider);

  // Whatever happened, keep a picture of the last state.
  after(() => rig?.close('99-last'));

  it('shows the Tokenscope container in the activity bar and the proxy in the status bar', async () => {
    const item = page.locator('.activitybar .action-item a[aria-label^="Tokenscope"]');
    await item.waitFor({ timeout: 60_000 });
    await item.click();
    // The container holds the Captures and Providers views, each under its pane header.
    await page.locator('.part.sidebar .pane-header', { hasText: /captures/i }).waitFor();
    await page.locator('.part.sidebar .pane-header', { hasText: /providers/i }).waitFor();
    await page.locator('.part.sidebar .welcome-view-content', { hasText: 'No exchanges captured yet' }).waitFor();
    await page.locator('.statusbar-item', { hasText: `Tokenscope :${proxyPort}` }).waitFor({ timeout: 30_000 });
    await screenshot(page, '01-activity-bar');
  });

  it('captures a leaky exchange through the proxy and marks it broken in the tree', async () => {
    const body = await chat({ provider: { only: ['chutes'] }, tools: [READ_TOOL] });
    // The agent got the provider's leaked markup as plain content, byte for byte.
    assert.match(body, /tool_calls_section_begin/);
    const row = captureRow('Chutes');
    await row.waitFor({ timeout: 30_000 });
    await row.locator('.codicon-error').waitFor({ timeout: 30_000 });
    assert.match(await row.innerText(), /\d+ findings?/);
    await page.locator('.statusbar-item', { hasText: /1 captured · 1 broken/ }).waitFor();
    await screenshot(page, '02-captures-tree');
  });

  it('opens the exchange in the token view with the unterminated section drawn inline', async () => {
    const view = webviewFrame(page);
    // The tree re-renders the row when the capture's analysis lands; a click that falls in that swap is lost, so
    // click again if no panel came up.
    for (let attempt = 1; ; attempt++) {
      await captureRow('Chutes').click();
      try {
        await view.locator('.row .tok').first().waitFor({ timeout: 20_000 });
        break;
      } catch (e) {
        if (attempt === 3) throw e;
      }
    }
    // The provider returned the markers as content text: drawn as "marker spelled as text" chips, not special ids.
    await view.locator('.tok.k-marker-as-text', { hasText: 'section' }).first().waitFor();
    // The missing section end is a ghost where it belongs.
    const ghost = view.locator('.ghost', { hasText: 'expected here: <|tool_calls_section_end|>' });
    await ghost.waitFor();
    assert.ok((await view.locator('.tok.f-error').count()) > 0, 'offending tokens carry an error squiggle');
    assert.ok((await view.locator('.gutter .codicon-error').count()) > 0, 'the row has a gutter mark');
    await screenshot(page, '03-token-view');
    // The rows of a normal-size view: whole, and none under the finding chips above them.
    assertRowsWhole(await rowGeometry(view.locator('.scroller')), 'the token view', 2);
    await view.locator('.scroller').screenshot({ path: join(screenshotsDir, '03b-token-rows.png') });

    await view.locator('vscode-tab-header', { hasText: 'Findings' }).click();
    const finding = view.locator('.finding.sev-error', { hasText: /section/i }).first();
    await finding.waitFor();
    await screenshot(page, '04-findings');
    // Clicking a finding goes back to the tokens and flashes where it is.
    await finding.click();
    await view.locator('.flash').first().waitFor();

    for (const [tab, name] of [['Request', '05-request'], ['Response', '06-response'], ['Wire', '07-wire']] as const) {
      await view.locator('vscode-tab-header', { hasText: tab }).click();
      await view.locator(`[data-panel="${tab.toLowerCase()}"] .doc`).waitFor();
      await screenshot(page, name);
    }
    assert.ok((await view.locator('[data-panel="wire"] table.wire tbody tr').count()) > 3, 'the Wire tab lists the SSE events');
  });

  it('lists the finding in the Problems panel against the raw stream', async () => {
    await runCommand(page, 'Problems: Focus on Problems View');
    const problems = page.locator('.markers-panel');
    await problems.waitFor();
    await problems.locator('.monaco-list-row', { hasText: /tool_calls_section_end/ }).first().waitFor({ timeout: 30_000 });
    assert.match(await problems.innerText(), /moonshotai_kimi-k2-0905\.txt/);
    await screenshot(page, '08-problems');
  });

  it('filters the Captures tree with the flags of `captures`, shows the filter, and clears it', async () => {
    await runCommand(page, 'Tokenscope: Filter Captures…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill('--provider fireworks --since 1h');
    await input.press('Enter');
    const sidebar = page.locator('.part.sidebar');
    await sidebar.locator('.pane-header', { hasText: 'filter: provider fireworks · since 1h' }).waitFor({ timeout: 30_000 });
    await sidebar.getByText('No captures match the filter').waitFor();
    await screenshot(page, '08b-captures-filtered');
    await runCommand(page, 'Tokenscope: Clear Capture Filter');
    await captureRow('Chutes').waitFor({ timeout: 30_000 });
  });

  it('renders HTML in model output as text and runs none of it', async () => {
    const body = await chat({ provider: { only: ['novita'] } });
    assert.match(body, /onerror=alert/);
    const row = captureRow('Novita');
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    const view = webviewFrame(page);
    // Wait for this exchange's panel, not the one opened before it.
    await view.locator('h1', { hasText: 'Novita' }).waitFor({ timeout: 60_000 });
    await view.locator('vscode-tab-header', { hasText: 'Response' }).click();
    const content = view.locator('[data-panel="response"] pre.content');
    await content.waitFor({ timeout: 60_000 });
    const text = await content.innerText();
    assert.ok(text.includes('<img src=x onerror=alert(1)>'), 'the <img> markup is visible as text');
    assert.ok(text.includes('<script>alert(document.cookie)</script>'), 'the <script> markup is visible as text');
    assert.equal(await view.locator('img').count(), 0, 'no <img> element was created');
    // VS Code injects its own host script into the webview document; none may come from model text.
    assert.equal(await view.locator('#app script').count(), 0, 'no <script> element was created from model text');
    assert.equal(await view.locator('script', { hasText: 'alert' }).count(), 0, 'no script carries the injected code');
    await view.locator('vscode-tab-header', { hasText: 'Tokens' }).click();
    // In the token view too: the chips of the row spell the markup out as text.
    await view.locator('.row', { hasText: '<img src=x onerror=alert(1)>' }).first().waitFor();
    await screenshot(page, '09-html-as-text');
    await page.waitForTimeout(500);
    assert.deepEqual(dialogs, [], 'no dialog was opened by model output');
  });
});
