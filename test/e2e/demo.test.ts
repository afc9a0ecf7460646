/**
 * The walkthrough's first step in a real VS Code (code-server + Chromium): "See a broken tool call now" replays the
 * demo through the extension and opens the broken exchange in the token view; the captures are marked as demo ones
 * in the tree and the status bar, and "Clear Demo Captures" removes them. No emulator provider is used: the demo
 * brings its own local upstream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { missingPrerequisite, runCommand, screenshot, startWorkbenchRig, webviewFrame, type Page, type WorkbenchRig } from './harness';

const skip = missingPrerequisite();

describe('the demo step of the walkthrough', { skip, timeout: 10 * 60_000 }, () => {
  let rig: WorkbenchRig;
  let page: Page;

  before(async () => {
    // No tokenizer folder, nothing downloaded, and the Hub unreachable (harness.ts): the demo's Kimi K2 token view
    // works with the tokenizer shipped in the extension.
    rig = await startWorkbenchRig([]);
    page = rig.page;
  });

  after(() => rig?.close('demo-99-last'));

  it('opens the walkthrough on its first step, "See a broken tool call now"', async () => {
    await page.locator('.statusbar-item', { hasText: `Tokenscope :${rig.proxyPort}` }).waitFor({ timeout: 60_000 });
    await runCommand(page, 'Welcome: Open Walkthrough...');
    const pick = page.locator('.quick-input-widget input');
    await pick.fill('Get started with Tokenscope');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Get started with Tokenscope' }).first().waitFor();
    await page.waitForTimeout(200);
    await pick.press('Enter');
    const step = page.locator('.gettingStartedContainer .getting-started-step', { hasText: 'See a broken tool call now' });
    await step.waitFor({ timeout: 30_000 });
    // The first step of the list.
    const titles = await page.locator('.gettingStartedContainer .getting-started-step .step-title').allInnerTexts();
    assert.equal(titles[0]?.trim(), 'See a broken tool call now', titles.join(' | '));
    await screenshot(page, 'demo-01-walkthrough');
  });

  it('runs the demo from the step and opens the broken exchange in the token view', async () => {
    await page.locator('.gettingStartedContainer .getting-started-step', { hasText: 'See a broken tool call now' }).click();
    const button = page.locator('.gettingStartedContainer .getting-started-step.expanded .monaco-button', {
      hasText: 'See a Broken Tool Call',
    });
    await button.waitFor({ timeout: 30_000 });
    await button.click();

    const view = webviewFrame(page);
    await view.locator('h1', { hasText: 'Demo (local)' }).waitFor({ timeout: 60_000 });
    await view.locator('.row .tok').first().waitFor({ timeout: 60_000 });
    // The section that never ends: its markers came as content text, and a ghost stands where the end belongs.
    await view.locator('.tok.k-marker-as-text', { hasText: 'section' }).first().waitFor();
    await view.locator('.ghost', { hasText: 'expected here: <|tool_calls_section_end|>' }).waitFor();
    assert.ok((await view.locator('.tok.f-error').count()) > 0, 'offending tokens carry an error squiggle');
    await screenshot(page, 'demo-02-token-view');
  });

  it('marks the demo captures in the tree and the status bar', async () => {
    // The Captures view's rows (the container also holds the Providers scorecard, which may list the demo provider).
    const captures = page.locator('.part.sidebar .pane', { has: page.locator('.pane-header h3.title', { hasText: /^captures$/i }) });
    const rows = captures.locator('.monaco-list-row', { hasText: 'Demo (local)' });
    await rows.nth(3).waitFor({ timeout: 30_000 });
    assert.equal(await rows.count(), 4, 'four demo exchanges');
    // Each row leads with what tells it apart (provider, finish, findings, time); the model they share follows.
    const labels = await rows.locator('.label-name').allInnerTexts();
    for (const label of labels) assert.match(label, /^Demo \(local\) · [\w-]+ · (\d+ findings? · )?\d\d:\d\d:\d\d$/, label);
    assert.ok(labels.some((l) => /· 3 findings ·/.test(l)) && labels.some((l) => !/findings?/.test(l)), labels.join(' | '));
    for (const d of await rows.locator('.label-description').allInnerTexts()) assert.match(d, /^moonshotai\/kimi-k2-0905 · demo/, d);
    await page.locator('.statusbar-item', { hasText: /4 captured \(4 demo\) · 3 broken/ }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'demo-03-tree');
  });

  /** The Providers view's pane, expanded. */
  async function providersPane() {
    const header = page.locator('.part.sidebar .pane-header', { has: page.locator('h3.title', { hasText: /^providers$/i }) });
    await header.waitFor({ timeout: 30_000 });
    if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
    return page.locator('.part.sidebar .pane', { has: page.locator('.pane-header h3.title', { hasText: /^providers$/i }) });
  }

  it('scores the demo provider in the Providers view', async () => {
    const pane = await providersPane();
    await pane.locator('.monaco-list-row', { hasText: 'Demo (local)' }).first().waitFor({ timeout: 30_000 });
    assert.equal(
      await pane.locator('.welcome-view-content', { hasText: 'No exchanges with a model' }).count(),
      0,
      'no "nothing yet" beside the captures',
    );
    await pane
      .locator('.monaco-list-row', { hasText: /\d+ tool turns? · \d+% broken/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await screenshot(page, 'demo-03b-providers');
  });

  it('"Clear Demo Captures" removes them', async () => {
    await runCommand(page, 'Tokenscope: Clear Demo Captures');
    await page.locator('.part.sidebar .welcome-view-content', { hasText: 'No exchanges captured yet' }).waitFor({ timeout: 30_000 });
    await page.locator('.statusbar-item', { hasText: /Tokenscope :\d+ · 0 captured/ }).waitFor({ timeout: 30_000 });
    // The Providers view follows: the demo provider goes with its captures.
    const pane = await providersPane();
    await pane.locator('.welcome-view-content', { hasText: 'No exchanges with a model' }).waitFor({ timeout: 30_000 });
    assert.equal(await pane.locator('.monaco-list-row', { hasText: 'Demo (local)' }).count(), 0, 'Demo (local) is gone');
    await screenshot(page, 'demo-04-cleared');
  });
});
