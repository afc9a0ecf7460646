/**
 * Repair mode, the Providers view and a provider policy in a real VS Code (code-server + Chromium): with
 * `tokenscope.repair.enabled` a leaky provider's call reaches the agent structured; the exchange shows the
 * "repaired" badge and opens Raw ⇄ Delivered in the diff editor; the Providers view lists the provider, and
 * "Avoid This Provider for This Model" from it stores the policy in the capture folder, and the next request carries
 * it upstream; a policy stored from the command line meanwhile (`tokenscope policy set`) reaches the status bar.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { READ_TOOL } from '../fixtures/openrouter-emulator';
import { contextMenu, missingPrerequisite, screenshot, startWorkbenchRig, webviewFrame, type Page, type WorkbenchRig } from './harness';

const skip = missingPrerequisite();
const MODEL = 'moonshotai/kimi-k2-0905';

describe('Tokenscope repair mode and provider policy in VS Code', { skip, timeout: 10 * 60_000 }, () => {
  let rig: WorkbenchRig;
  let page: Page;

  const send = (provider: Record<string, unknown>) =>
    fetch(`http://127.0.0.1:${rig.proxyPort}/openrouter/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-v1-e2erepair', 'user-agent': 'opencode/1.0 e2e' },
      body: JSON.stringify({
        model: MODEL,
        stream: true,
        provider,
        messages: [{ role: 'user', content: 'Read README.md.' }],
        tools: [READ_TOOL],
      }),
    });

  before(async () => {
    // The extension reads provider slugs from the emulator's listings with this key (code-server inherits it).
    process.env.OPENROUTER_API_KEY ??= 'sk-or-v1-e2eslugs';
    rig = await startWorkbenchRig(
      [
        { slug: 'chutes', name: 'Chutes', personality: 'leak-content' },
        { slug: 'fireworks', name: 'Fireworks', personality: 'correct' },
      ],
      { 'tokenscope.repair.enabled': true },
    );
    page = rig.page;
    await page.locator('.activitybar .action-item a[aria-label^="Tokenscope"]').click({ timeout: 60_000 });
    await page.locator('.statusbar-item', { hasText: `Tokenscope :${rig.proxyPort}` }).waitFor({ timeout: 30_000 });
  });

  after(() => rig?.close('4x-last'));

  /** The Providers view's pane, expanded. */
  async function providersPane() {
    const header = page.locator('.part.sidebar .pane-header', { has: page.locator('h3.title', { hasText: /^providers$/i }) });
    await header.waitFor({ timeout: 30_000 });
    if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
    return page.locator('.part.sidebar .pane', { has: page.locator('.pane-header h3.title', { hasText: /^providers$/i }) });
  }

  it('delivers the leaked call structured and shows the repaired badge and Raw ⇄ Delivered diff', async () => {
    const res = await send({ only: ['chutes'] });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.doesNotMatch(text, /tool_calls_section_begin/, 'no markup reaches the agent');
    assert.match(text, /"tool_calls":\[\{"index":0,"id":"functions\.read:0","type":"function"/);
    assert.match(text, /"finish_reason":"tool_calls"/);

    const row = page.locator('.part.sidebar .monaco-list-row', { hasText: 'repaired' }).first();
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    const view = webviewFrame(page);
    await view.locator('vscode-badge', { hasText: 'repaired' }).waitFor({ timeout: 60_000 });
    await view.locator('.meta div', { hasText: /Repaired\s*1 call delivered as tool_calls/ }).waitFor();
    // The Providers view redraws at most every 2 s after a change: the screenshot waits for its row, not only the tree's.
    await (await providersPane()).locator('.monaco-list-row', { hasText: 'Chutes' }).first().waitFor({ timeout: 30_000 });
    await screenshot(page, '40-repaired-badge');
    await view.locator('vscode-button', { hasText: 'Raw ⇄ Delivered' }).click();
    await page.locator('.tab', { hasText: 'Raw ⇄ Delivered' }).waitFor({ timeout: 30_000 });
    // Event by event: the summary and the fields most events share first, the events repair passed through folded, and
    // what it changed on short lines of their own: the upstream's markup on the left, the structured call on the right.
    const original = page.locator('.monaco-diff-editor .original .view-lines');
    const modified = page.locator('.monaco-diff-editor .modified .view-lines');
    await original
      .getByText(/^Raw\s⇄\sDelivered,\sevent\sby\sevent:\s\d+\supstream\sevents,\s\d+\sdelivered\sevents;/)
      .first()
      .waitFor({ timeout: 30_000 });
    await original
      .getByText(/^Fields\smost\sevents\sshare,\sleft\sout\sof\severy\sevent\sbelow\sthat\shas\sthem:/)
      .first()
      .waitFor();
    await original
      .getByText(/^\s+id:\s"gen-/)
      .first()
      .waitFor();
    await original
      .getByText(/┄┄\s\d+\sidentical\sevents?\sfolded\s┄┄/)
      .first()
      .waitFor();
    await original.locator('.view-line', { hasText: 'tool_calls_section_begin' }).first().waitFor({ timeout: 30_000 });
    await modified.locator('.view-line', { hasText: '"id": "functions.read:0"' }).first().waitFor({ timeout: 30_000 });
    // No event line repeats the shared fields (the long `data: {"id":"gen-…` lines that hid the change off-screen).
    assert.equal(await original.locator('.view-line', { hasText: /^data:\s\{"id"/ }).count(), 0);
    // The diff editor marks the changed lines on both sides.
    assert.ok((await page.locator('.monaco-diff-editor .original .line-delete, .monaco-diff-editor .original .char-delete').count()) > 0);
    assert.ok((await page.locator('.monaco-diff-editor .modified .line-insert, .monaco-diff-editor .modified .char-insert').count()) > 0);
    await screenshot(page, '41-raw-delivered-diff');
  });

  it('lists the provider in the Providers view; Avoid… writes the policy and the next request carries it', async () => {
    const pane = await providersPane();
    const chutes = pane.locator('.monaco-list-row', { hasText: 'Chutes' }).first();
    await chutes.waitFor({ timeout: 30_000 });
    await pane.locator('.monaco-list-row', { hasText: /1 tool turn · 100% broken/ }).waitFor({ timeout: 30_000 });
    await screenshot(page, '42-providers-view');

    await contextMenu(page, chutes, 'Avoid This Provider for This Model');
    await page.locator('.notifications-toasts', { hasText: 'now avoids Chutes (slug chutes' }).waitFor({ timeout: 15_000 });
    assert.deepEqual(
      JSON.parse(readFileSync(join(rig.captures, 'policies.json'), 'utf8')),
      { [MODEL]: { ignore: ['chutes'] } },
      'stored where `tokenscope policy` keeps it',
    );
    await pane.locator('.monaco-list-row', { hasText: 'policy: avoided' }).waitFor({ timeout: 30_000 });
    await screenshot(page, '43-policy-applied');

    const before = rig.emulator.requests.length;
    const res = await send({ order: ['chutes'] });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /"provider":"Fireworks"/, 'the avoided provider no longer serves the model');
    const sent = rig.emulator.requests.slice(before).find((r) => r.path.endsWith('/chat/completions'));
    assert.deepEqual(sent?.body.provider, { order: ['chutes'], ignore: ['chutes'] });

    // The status bar names the policy for the latest exchange's model; the exchange's row says it was honoured.
    await page.locator('.statusbar-item', { hasText: 'kimi-k2-0905: avoid Chutes' }).waitFor({ timeout: 30_000 });
    await page
      .locator('.part.sidebar .monaco-list-row', { hasText: /^Fireworks · .*policy honoured/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await screenshot(page, '44-policy-status-bar');

    // Set from the command line while the editor runs: the extension's status bar (and proxy) follow it.
    const cli = spawnSync(
      process.execPath,
      [
        join(__dirname, '..', '..', 'bin', 'tokenscope.js'),
        'policy',
        'set',
        MODEL,
        '--ignore',
        'chutes',
        '--order',
        'fireworks',
        '--data-dir',
        rig.captures,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(cli.status, 0, cli.stderr);
    await page.locator('.statusbar-item', { hasText: 'kimi-k2-0905: avoid Chutes · prefer Fireworks' }).waitFor({ timeout: 30_000 });
  });
});
