/**
 * Runs a real VS Code (code-server) with the packaged extension installed, and drives it through Debian's Chromium.
 * scripts/e2e.mjs installs both and passes their paths in TOKENSCOPE_CODE_SERVER and TOKENSCOPE_VSIX.
 * Patterns from coder/code-server test/e2e (see ../shared/reference/vscode-e2e.md).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { startOpenRouterEmulator, type OpenRouterEmulator, type ProviderSpec } from '../fixtures/openrouter-emulator';

export const CHROMIUM = '/usr/bin/chromium';
export const screenshotsDir = join(__dirname, '..', '..', 'test-results', 'e2e');

/** Why the e2e suite cannot run here, or undefined when it can. */
export function missingPrerequisite(): string | undefined {
  const bin = process.env.TOKENSCOPE_CODE_SERVER;
  const vsix = process.env.TOKENSCOPE_VSIX;
  if (!bin || !existsSync(bin)) return 'code-server is not installed (run `npm run test:e2e`, which installs it)';
  if (!vsix || !existsSync(vsix)) return 'the .vsix is not built (run `npm run test:e2e`, which packages it)';
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install chromium)`;
  return undefined;
}

export interface CodeServer {
  url: string;
  dir: string;
  workspace: string;
  /** Everything code-server printed, for failure messages. */
  output(): string;
  close(): Promise<void>;
}

/**
 * Installs the .vsix into a fresh profile and starts code-server on a free port. `env` adds to its environment (the
 * Hugging Face Hub is a closed loopback port unless `env` sets HF_ENDPOINT).
 */
export async function startCodeServer(settings: Record<string, unknown>, env: Record<string, string> = {}): Promise<CodeServer> {
  const bin = process.env.TOKENSCOPE_CODE_SERVER!;
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-e2e-'));
  const userDir = join(dir, 'user');
  const extDir = join(dir, 'ext');
  const workspace = join(dir, 'workspace');
  mkdirSync(join(userDir, 'User'), { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(
    join(userDir, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'security.workspace.trust.enabled': false,
        'workbench.tips.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.ignoreRecommendations': true,
        ...settings,
      },
      null,
      2,
    ),
  );
  // --config always: without it code-server writes ~/.config/code-server/config.yaml.
  const common = ['--config', join(dir, 'config.yaml'), '--user-data-dir', userDir, '--extensions-dir', extDir];
  const install = spawnSync(bin, [...common, '--install-extension', process.env.TOKENSCOPE_VSIX!], { encoding: 'utf8' });
  if (install.status !== 0) throw new Error(`installing the .vsix failed: ${install.stderr || install.stdout}`);

  const proc = spawn(
    bin,
    [
      ...common,
      '--auth',
      'none',
      '--bind-addr',
      '127.0.0.1:0',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      workspace,
    ],
    // The Hugging Face Hub is out of reach (a closed loopback port) unless a test brings its emulator: no test may
    // download a tokenizer from the Internet.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, HF_ENDPOINT: 'http://127.0.0.1:9', ...env } },
  );
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /HTTPS? server listening on (https?:\/\/[.:\d]+)\/?/.exec(out);
      if (m) {
        clearTimeout(timer);
        // Cookies do not stick to IP hosts; code-server's own e2e swaps in localhost.
        resolve(m[1].replace('127.0.0.1', 'localhost'));
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${out}`)));
  });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return {
    url,
    dir,
    workspace,
    output: () => out,
    close: async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        // The server spawns an extension host and a pty host: end its whole process group.
        try {
          process.kill(-proc.pid!, 'SIGTERM');
        } catch {
          /* already gone */
        }
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (proc.exitCode === null) {
          try {
            process.kill(-proc.pid!, 'SIGKILL');
          } catch {
            /* already gone */
          }
        }
      }
      // TOKENSCOPE_E2E_KEEP=1 keeps code-server's folders (logs of the extension host) for a look after a failure.
      if (process.env.TOKENSCOPE_E2E_KEEP === '1') console.log(`e2e: code-server's folders kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  // Chromium's crash reporter writes under $XDG_CONFIG_HOME/chromium: keep it out of the user's home.
  const home = mkdtempSync(join(tmpdir(), 'tokenscope-e2e-chromium-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    env: { ...process.env, XDG_CONFIG_HOME: home },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      '--disable-crash-reporter',
    ],
  });
  browser.once('disconnected', () => rmSync(home, { recursive: true, force: true }));
  return browser;
}

/** A free loopback port, for a server the test must know the address of before it starts (the extension's proxy). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Opens the workbench and waits until it is drawn (reloading once, as code-server's own e2e does). */
export async function openWorkbench(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  try {
    await page.locator('.monaco-workbench').waitFor({ timeout: 30_000 });
  } catch {
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: 30_000 });
  }
  return page;
}

/** Runs a command by its palette title. */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor();
  await page.waitForTimeout(200);
  await input.press('Enter');
}

/** Right-clicks `target` and chooses `item` from the context menu VS Code draws. */
export async function contextMenu(page: Page, target: Locator, item: string): Promise<void> {
  await target.click({ button: 'right' });
  const entry = page.locator('.context-view .monaco-menu .action-item', { hasText: item }).first();
  await entry.waitFor();
  // VS Code's menu ignores a mouse-up that comes right after it opened (a guard against accidental picks).
  await page.waitForTimeout(300);
  await entry.click();
}

/** The document inside the visible webview (two iframes deep; hidden panels keep theirs, invisible). */
export function webviewFrame(page: Page): FrameLocator {
  return page.locator('iframe.webview.ready').filter({ visible: true }).contentFrame().frameLocator('#active-frame');
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotsDir, { recursive: true });
  const path = join(screenshotsDir, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

export type { Browser, Page };

/** What an e2e suite drives: the OpenRouter emulator, code-server with the extension, and Chromium on the workbench. */
export interface WorkbenchRig {
  emulator: OpenRouterEmulator;
  server: CodeServer;
  browser: Browser;
  page: Page;
  /** The port the extension's proxy listens on. */
  proxyPort: number;
  /** The extension's capture folder. */
  captures: string;
  /** The exchange row in the Captures tree whose description names the provider. */
  captureRow(provider: string): Locator;
  /** Saves a last screenshot, then stops everything and removes the capture folder. */
  close(lastScreenshot: string): Promise<void>;
}

/**
 * Starts the emulator with `providers`, then code-server with the extension's proxy on a free port, OpenRouter routed
 * to the emulator (its API lives under /api/v1, as openrouter.ai's does) and captures in a fresh folder, then opens
 * the workbench in Chromium.
 */
export async function startWorkbenchRig(
  providers: ProviderSpec[],
  settings: Record<string, unknown> = {},
  /** `env`: added to code-server's environment; `models`: the emulator's models (default: its Kimi K2 ones). */
  opts: { env?: Record<string, string>; models?: string[] } = {},
): Promise<WorkbenchRig> {
  const emulator = await startOpenRouterEmulator({ providers, ...(opts.models && { models: opts.models }) });
  const proxyPort = await freePort();
  const captures = mkdtempSync(join(tmpdir(), 'tokenscope-e2e-captures-'));
  const server = await startCodeServer(
    {
      'tokenscope.proxy.port': proxyPort,
      'tokenscope.upstreams': { openrouter: `${emulator.url}/api` },
      'tokenscope.capture.folder': captures,
      ...settings,
    },
    opts.env,
  );
  const browser = await launchBrowser();
  const page = await openWorkbench(browser, server.url);
  return {
    emulator,
    server,
    browser,
    page,
    proxyPort,
    captures,
    captureRow: (provider) => page.locator('.part.sidebar .monaco-list-row', { hasText: provider }).first(),
    async close(lastScreenshot) {
      await screenshot(page, lastScreenshot).catch(() => undefined);
      await browser.close();
      await server.close();
      await emulator.close();
      rmSync(captures, { recursive: true, force: true });
    },
  };
}
