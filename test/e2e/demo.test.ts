/**
 * The walkthrough's first step in a real VS Code (code-server + Chromium): "See a broken tool call now" replays the
 * demo through the extension and opens the broken exchange in the token view; the captures are marked as demo ones
 * in the tree and the status bar, and "Clear Demo Captures" removes them. No emulator provider is used: the demo
 * brings its own local upstream.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sharedDir } from '../helpers/shared';
import { missingPrerequisite, runCommand, screenshot, startWorkbenchRig, webviewFrame, type Page, type WorkbenchRig } from './harness';

const skip = missingPrerequisite();

describe('the demo step of the walkthrough', { skip, timeout: 10 * 60_000 }, () => {
  let rig: WorkbenchRig;
  let page: Page;

  before(async () => {
    const tokenizer = sharedDir() && join(sharedDir()!, 'tokenizers', 'kimi-k2');
    rig = await startWorkbenchRig([], tokenizer ? { 'tokenscope.tokenizer.folder': tokenizer } : {});
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
    const button = page.locator('.gettingStartedContainer .getting-started-step.expanded .monaco-button', { hasText: 'See a Broken Tool Call' });
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
    const captures = page.locator('.part.sidebar .pane', { has: page.locator('.pane-header', { hasText: /captures/i }) });
    const rows = captures.locator('.monaco-list-row', { hasText: 'Demo (local)' });
    await rows.nth(3).waitFor({ timeout: 30_000 });
    assert.equal(await rows.count(), 4, 'four demo exchanges');
    for (const text of await rows.allInnerTexts()) assert.match(text, /demo ·/, text);
    await page.locator('.statusbar-item', { hasText: /4 captured \(4 demo\) · 3 broken/ }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'demo-03-tree');
  });

  it('"Clear Demo Captures" removes them', async () => {
    await runCommand(page, 'Tokenscope: Clear Demo Captures');
    await page.locator('.part.sidebar .welcome-view-content', { hasText: 'No exchanges captured yet' }).waitFor({ timeout: 30_000 });
    await page.locator('.statusbar-item', { hasText: /Tokenscope :\d+ · 0 captured/ }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'demo-04-cleared');
  });
});
