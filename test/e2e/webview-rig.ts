/**
 * A webview bundle from media/ alone in Chromium, without VS Code: served from a stand-in webview origin inside the
 * shell and CSP the extension itself writes (src/extension/webviewHtml.ts), with a stand-in for acquireVsCodeApi
 * that records what the page posts to the host.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { webviewShell } from '../../src/extension/webviewHtml';
import { CHROMIUM, type Browser, type Page } from './harness';

const media = join(__dirname, '..', '..', 'media');
const ORIGIN = 'https://webview.tokenscope.test';

/** A message the page posted to the host. */
export type Posted = { type: string; [k: string]: unknown };

/** Why the `bundle` webview (media/BUNDLE.js) cannot be tested here, or undefined when it can. */
export function webviewSkip(bundle: string): string | undefined {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install chromium)`;
  if (!existsSync(join(media, `${bundle}.js`))) return `media/${bundle}.js is not built (npm run build)`;
  return undefined;
}

export interface WebviewPage<M> {
  page: Page;
  /** Resolves once the bundle has posted `ready` since the page last loaded (a reload starts over). */
  ready(): Promise<void>;
  /** Delivers `m` as the host would (a `message` event on the window). */
  post(m: M): Promise<void>;
  /** Everything the page posted to the host since it last loaded, in order. */
  posted(): Promise<Posted[]>;
}

/**
 * Opens media/BUNDLE.js (with BUNDLE.css and the codicons) in a new page of `browser` and waits for its `ready`.
 * `M` is the type of the host's messages to that bundle.
 */
export async function openWebviewPage<M>(
  browser: Browser,
  bundle: string,
  viewport: { width: number; height: number },
): Promise<WebviewPage<M>> {
  const page = await browser.newPage({ viewport });
  const html = webviewShell({
    cspSource: ORIGIN,
    script: `${ORIGIN}/${bundle}.js`,
    styles: [`${ORIGIN}/${bundle}.css`],
    codiconStyle: `${ORIGIN}/codicon.css`,
    title: bundle,
  });
  // The stand-in host API goes in before the bundle; it is the only addition to the page VS Code would serve.
  // Its state outlives a reload, as VS Code keeps a webview's state while the panel is hidden.
  // A string, not a function: tsx's helpers would not exist inside the page.
  await page.addInitScript(`
    window.__posted = [];
    window.acquireVsCodeApi = () => ({
      postMessage: (m) => window.__posted.push(m),
      getState: () => JSON.parse(sessionStorage.getItem('state') ?? 'null') ?? undefined,
      setState: (s) => sessionStorage.setItem('state', JSON.stringify(s)),
    });
  `);
  await page.route(`${ORIGIN}/**`, (route) => {
    const file = new URL(route.request().url()).pathname.slice(1);
    if (file === 'index.html') return route.fulfill({ contentType: 'text/html', body: html });
    const path = join(media, file);
    if (!existsSync(path)) return route.fulfill({ status: 404, body: '' });
    const type = file.endsWith('.js') ? 'text/javascript' : file.endsWith('.css') ? 'text/css' : 'font/ttf';
    return route.fulfill({ contentType: type, body: readFileSync(path) });
  });
  const web: WebviewPage<M> = {
    page,
    ready: async () => {
      await page.waitForFunction(() => (window as unknown as { __posted: Posted[] }).__posted.some((m) => m.type === 'ready'));
    },
    post: (m) => page.evaluate((msg) => window.postMessage(msg, '*'), m),
    posted: () => page.evaluate(() => (window as unknown as { __posted: Posted[] }).__posted),
  };
  await page.goto(`${ORIGIN}/index.html`);
  await web.ready();
  return web;
}
