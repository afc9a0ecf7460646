/**
 * A webview bundle from media/ alone in Chromium, without VS Code: served from a stand-in webview origin inside the
 * shell and CSP the extension itself writes (src/extension/webviewHtml.ts), with a stand-in for acquireVsCodeApi
 * that records what the page posts to the host.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { webviewShell } from '../../src/extension/webviewHtml';
import { CHROMIUM, type Browser, type Page } from './harness';
import type { Locator } from 'playwright-core';

const media = join(__dirname, '..', '..', 'media');
const ORIGIN = 'https://webview.tokenscope.test';

/**
 * The colours and fonts a webview gets from VS Code's Dark Modern theme (the ones Tokenscope's views use), so a page
 * here looks as it does in VS Code's default dark theme, not as unthemed HTML. The e2e suite in code-server covers
 * the light theme and the real dark one.
 */
const DARK_THEME: Record<string, string> = {
  'font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
  'font-size': '13px',
  'editor-font-family': '"Droid Sans Mono", "monospace", monospace',
  'editor-font-size': '14px',
  foreground: '#cccccc',
  descriptionForeground: '#9d9d9d',
  errorForeground: '#f85149',
  focusBorder: '#0078d4',
  'editor-background': '#1f1f1f',
  'editor-foreground': '#cccccc',
  'editorWidget-background': '#202020',
  'panel-border': '#2b2b2b',
  'textCodeBlock-background': '#2b2b2b',
  'badge-background': '#616161',
  'badge-foreground': '#f8f8f8',
  'button-background': '#0078d4',
  'button-foreground': '#ffffff',
  'button-hoverBackground': '#026ec1',
  'button-secondaryBackground': '#313131',
  'button-secondaryForeground': '#cccccc',
  'button-secondaryHoverBackground': '#3c3c3c',
  'button-border': '#ffffff12',
  'input-background': '#313131',
  'input-foreground': '#cccccc',
  'input-border': '#3c3c3c',
  'dropdown-background': '#313131',
  'dropdown-foreground': '#cccccc',
  'dropdown-border': '#3c3c3c',
  'checkbox-background': '#313131',
  'checkbox-border': '#3c3c3c',
  'checkbox-foreground': '#cccccc',
  'panelTitle-activeForeground': '#cccccc',
  'panelTitle-inactiveForeground': '#9d9d9d',
  'panelTitle-activeBorder': '#0078d4',
  'editorError-foreground': '#f14c4c',
  'editorWarning-foreground': '#cca700',
  'editorInfo-foreground': '#3794ff',
  'testing-iconPassed': '#73c991',
  'charts-foreground': '#cccccc',
  'charts-red': '#f14c4c',
  'charts-blue': '#3794ff',
  'charts-yellow': '#cca700',
  'charts-orange': '#d18616',
  'charts-green': '#89d185',
  'charts-purple': '#b180d7',
  'inputValidation-errorBackground': '#5a1d1d',
  'inputValidation-errorBorder': '#be1100',
  'inputValidation-warningBackground': '#352a05',
  'inputValidation-warningBorder': '#b89500',
  'inputValidation-infoBackground': '#063b49',
  'inputValidation-infoBorder': '#007acc',
  'statusBarItem-errorBackground': '#c72e0f',
  'statusBarItem-errorForeground': '#ffffff',
  'diffEditor-insertedTextBackground': '#9ccc2c33',
  'diffEditor-removedTextBackground': '#ff000033',
  'textLink-foreground': '#4daafc',
  'list-hoverBackground': '#2a2d2e',
};

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
    // VS Code sets its theme's colours as --vscode-* variables on <html> and the theme kind as a class of <body>.
    document.addEventListener('DOMContentLoaded', () => {
      for (const [k, v] of Object.entries(${JSON.stringify(DARK_THEME)})) document.documentElement.style.setProperty('--vscode-' + k, v);
      document.body.classList.add('vscode-dark');
    });
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

/** Token rows, the view that scrolls them and the finding chips above it, in the page's coordinates. */
export interface RowGeometry {
  view: { top: number; bottom: number };
  chips: { top: number; bottom: number }[];
  rows: { top: number; bottom: number }[];
}

/**
 * The token view's geometry once it has drawn for its scroll position (two frames after the call): `scroller` is its
 * `.scroller` element, in a page or a webview frame.
 */
export function rowGeometry(scroller: Locator): Promise<RowGeometry> {
  // Only inline arrow functions inside: a named one would carry a helper of the test's compiler the page lacks.
  return scroller.evaluate(
    (sc: Element) =>
      new Promise<RowGeometry>((resolve) =>
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            const outer = sc.getBoundingClientRect();
            resolve({
              view: { top: outer.top + sc.clientTop, bottom: outer.top + sc.clientTop + sc.clientHeight },
              chips: Array.from(sc.ownerDocument.querySelectorAll('.finding-chip'), (c) => ({
                top: c.getBoundingClientRect().top,
                bottom: c.getBoundingClientRect().bottom,
              })),
              rows: Array.from(sc.querySelectorAll('.row'), (r) => ({
                top: r.getBoundingClientRect().top,
                bottom: r.getBoundingClientRect().bottom,
              })),
            });
          }),
        ),
      ),
  );
}

/** Every token row lies whole inside the view, the first at its top edge, and none overlaps a finding chip. */
export function assertRowsWhole(g: RowGeometry, where: string, minRows = 1): void {
  const eps = 0.5;
  if (g.rows.length < minRows) throw new Error(`${where}: ${g.rows.length} token rows drawn, expected at least ${minRows}`);
  g.rows.forEach((r, i) => {
    if (r.top < g.view.top - eps || r.bottom > g.view.bottom + eps)
      throw new Error(`${where}: row ${i} [${r.top}, ${r.bottom}] is cut by the view [${g.view.top}, ${g.view.bottom}]`);
    for (const c of g.chips) {
      if (r.top < c.bottom - eps && r.bottom > c.top + eps)
        throw new Error(`${where}: row ${i} [${r.top}, ${r.bottom}] is under a finding chip [${c.top}, ${c.bottom}]`);
    }
  });
  if (Math.abs(g.rows[0].top - g.view.top) > eps)
    throw new Error(`${where}: the first row starts at ${g.rows[0].top}, not at the view's top edge ${g.view.top}`);
}
