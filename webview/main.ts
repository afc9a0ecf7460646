/**
 * The exchange webview: header, then tabs Tokens · Findings · Parsed · Request · Response · Wire. Data comes only from the
 * host (protocol.ts); the webview keeps just its own UI state (tab, scroll, whitespace toggle) with setState, and
 * asks for a fresh snapshot with `ready` each time it starts.
 */
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import './style.css';
import { append, h, icon, json, type Child } from './dom';
import type {
  ExchangeView,
  FindingView,
  HostMessage,
  TokenizerNeededView,
  TokenizerProgressView,
  TokenStreamView,
  WebviewMessage,
} from './protocol';
import { showPanelError } from './panel/error';
import { parsedPanel } from './parsed';
import { TokenGrid } from './tokenGrid';
import { WireTab } from './wire';

interface UiState {
  tab: number;
  scrollTop: number;
  showWhitespace: boolean;
  /** The Wire tab's page: the index of its first event. */
  wireFrom?: number;
}

interface VsCodeApi {
  postMessage(m: WebviewMessage): void;
  getState(): UiState | undefined;
  setState(s: UiState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const TABS = ['Tokens', 'Findings', 'Parsed', 'Request', 'Response', 'Wire'] as const;
const SEVERITY_ICON = { error: 'error', warning: 'warning', info: 'info' } as const;
const SOURCE_TEXT = {
  server: 'ids from the server',
  reconstructed: 're-encoded from the structured response',
  text: 're-encoded from the raw output',
} as const;

const vscode = acquireVsCodeApi();
const state: UiState = { tab: 0, scrollTop: 0, showWhitespace: false, ...vscode.getState() };
let exchange: ExchangeView | undefined;
let tokens: { stream?: TokenStreamView; reason?: string; needed?: TokenizerNeededView } | undefined;
/** A tokenizer download asked for from the Tokens tab: started (null until its first progress), or not running. */
let download: TokenizerProgressView | null | undefined;
let grid: TokenGrid | undefined;
let tabs: HTMLElement | undefined;
const app = document.getElementById('app')!;
const wire = new WireTab(
  (m) => vscode.postMessage(m),
  (from) => {
    state.wireFrom = from;
    saveState();
  },
);

function saveState(): void {
  if (grid) state.scrollTop = grid.scrollTop;
  vscode.setState(state);
}

window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const m = e.data;
  if (m.type === 'exchange') {
    exchange = m.exchange;
    render();
  } else if (m.type === 'live') {
    if (exchange?.live) exchange = { ...exchange, live: m.live };
    const banner = app.querySelector('.live-banner .live-text');
    if (banner) banner.textContent = m.live.text;
  } else if (m.type === 'tokenizerProgress') {
    download = m.progress;
    const line = app.querySelector('.tokenizer-progress-text');
    if (line) line.textContent = progressText(m.progress);
    else renderTokens();
  } else if (m.type === 'tokens') {
    tokens = m;
    download = undefined;
    // The stream's findings are the same analysis placed on its tokens (plus token accounting): show one list.
    if (m.stream && exchange) {
      const findings = m.stream.findings;
      exchange = {
        ...exchange,
        findings,
        worst: (['error', 'warning', 'info'] as const).find((s) => findings.some((f) => f.severity === s)),
      };
      app.querySelector('header')?.replaceWith(header(exchange));
      panel('findings')?.replaceChildren(findingsList(exchange));
    }
    renderTokens();
  } else if (m.type === 'wirePage') {
    wire.page(m.seq, m.page);
  } else if (m.type === 'error') {
    showPanelError(m.message);
  }
});

function render(): void {
  const x = exchange!;
  grid = undefined;
  tabs = h(
    'vscode-tabs',
    { 'selected-index': state.tab, panel: true },
    // data-* rather than ids: the tab components assign their own ids.
    TABS.map((name) => h('vscode-tab-header', { slot: 'header', 'data-tab': name.toLowerCase() }, name, countBadge(name, x))),
    TABS.map((name) => h('vscode-tab-panel', { 'data-panel': name.toLowerCase() })),
  );
  tabs.addEventListener('vsc-tabs-select', (e) => {
    state.tab = (e as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
    saveState();
  });
  app.replaceChildren(header(x), tabs);
  panel('findings')!.append(findingsList(x));
  panel('parsed')!.append(parsedPanel(x));
  panel('request')!.append(requestPanel(x));
  panel('response')!.append(responsePanel(x));
  panel('wire')!.append(wire.show(x, state.wireFrom));
  renderTokens();
}

function panel(name: string): HTMLElement | undefined {
  return tabs?.querySelector<HTMLElement>(`[data-panel="${name}"]`) ?? undefined;
}

/** The one token count the view gives: the tab's badge, the toolbar and the accounting's Counted row agree. */
function tokenCount(s: TokenStreamView | undefined): number | undefined {
  return s && (s.count ?? s.ids.length);
}

/** Refreshes the count badges of the tab headers (tokens and findings arrive after the tabs are built). */
function updateBadges(x: ExchangeView): void {
  for (const name of TABS) {
    const header = tabs?.querySelector(`[data-tab="${name.toLowerCase()}"]`);
    header?.replaceChildren(name, countBadge(name, x) ?? '');
  }
}

function countBadge(tab: string, x: ExchangeView): HTMLElement | null {
  const n =
    tab === 'Findings'
      ? x.findings.length
      : tab === 'Wire'
        ? x.wire.eventCount
        : tab === 'Tokens'
          ? tokenCount(tokens?.stream)
          : tab === 'Parsed'
            ? x.parsed?.calls.length
            : undefined;
  if (!n) return null;
  const alarm = (tab === 'Findings' && x.worst === 'error') || (tab === 'Parsed' && (x.parsed?.mismatches.length ?? 0) > 0);
  return h('vscode-badge', { variant: 'counter', class: alarm ? 'badge-error' : undefined }, n);
}

function header(x: ExchangeView): HTMLElement {
  const action = (label: string, iconName: string, m: WebviewMessage) => {
    const b = h('vscode-button', { secondary: true, icon: iconName }, label);
    b.addEventListener('click', () => vscode.postMessage(m));
    return b;
  };
  return h(
    'header',
    { class: 'header' },
    h(
      'div',
      { class: 'title-row' },
      icon(x.worst ? SEVERITY_ICON[x.worst] : 'pass', `sev-${x.worst ?? 'ok'} title-icon`),
      h('h1', { title: x.title }, x.title),
      x.repaired ? h('vscode-badge', { class: 'badge-repaired', title: x.repaired }, 'repaired') : null,
      h(
        'div',
        { class: 'actions' },
        x.repaired ? action('Raw ⇄ Delivered', 'diff', { type: 'command', command: 'diffDelivered' }) : null,
        action('Raw stream', 'go-to-file', { type: 'openRaw' }),
        action('Re-run…', 'debug-rerun', { type: 'command', command: 'rerun' }),
        action('Compare…', 'split-horizontal', { type: 'command', command: 'compare' }),
        action('Export…', 'export', { type: 'command', command: 'export' }),
      ),
    ),
    h(
      'dl',
      { class: 'meta' },
      x.meta.map((m) => h('div', null, h('dt', null, m.label), h('dd', null, m.value))),
    ),
    x.unavailable ? h('p', { class: 'notice' }, icon('info'), x.unavailable) : null,
    x.live
      ? h(
          'p',
          { class: 'notice live-banner' },
          h('vscode-progress-ring'),
          'Streaming: ',
          h('span', { class: 'live-text' }, x.live.text),
          h('span', { class: 'muted' }, ' — the stream so far; findings may change when it ends.'),
        )
      : null,
  );
}

function renderTokens(): void {
  const el = panel('tokens');
  if (!exchange || !el) return;
  updateBadges(exchange);
  if (!tokens) {
    el.replaceChildren(h('p', { class: 'notice' }, h('vscode-progress-ring'), 'Tokenizing…'));
    return;
  }
  if (!tokens.stream) {
    const offer = tokens.needed
      ? tokenizerOffer(tokens.needed)
      : h('p', { class: 'notice' }, icon('info'), tokens.reason ?? 'No token stream for this exchange.');
    el.replaceChildren(offer, nativeFallback(exchange));
    return;
  }
  const s = tokens.stream;
  const findings = s.findings;
  grid = new TokenGrid(s, state.showWhitespace, (i) => revealFinding(i));
  const ws = h('vscode-checkbox', { checked: state.showWhitespace, label: 'Show whitespace' });
  ws.addEventListener('change', () => {
    state.showWhitespace = (ws as unknown as { checked: boolean }).checked;
    grid?.setShowWhitespace(state.showWhitespace);
    saveState();
  });
  let scrollSave = 0;
  grid.element.addEventListener('scroll', () => {
    clearTimeout(scrollSave);
    scrollSave = window.setTimeout(saveState, 200);
  });
  el.replaceChildren();
  append(el, [
    h(
      'div',
      { class: 'token-toolbar' },
      h(
        'span',
        { class: 'source' },
        icon('symbol-key'),
        `${tokenCount(s)!.toLocaleString()} ${s.countMeaning ?? 'tokens'} · ${s.tokenizer} · ${SOURCE_TEXT[s.source]}`,
      ),
      legend(),
      ws,
    ),
    findings.length
      ? h(
          'div',
          { class: 'finding-strip' },
          findings.map((f, i) => findingChip(f, i)),
        )
      : null,
    s.ids.length
      ? grid.element
      : h(
          'p',
          { class: 'notice empty-tokens' },
          exchange.live ? h('vscode-progress-ring') : icon('info'),
          exchange.live ? 'No tokens yet: the model has sent no output text so far.' : 'No tokens: the response has no output text.',
        ),
    s.accounting.length
      ? h(
          'dl',
          { class: 'accounting' },
          s.accounting.map((a) => h('div', null, h('dt', null, a.label), h('dd', null, a.value))),
        )
      : null,
  ]);
  if (s.ids.length) grid.start(state.scrollTop);
}

/** The Tokens tab without a tokenizer: what is missing, and the two ways to get it (or the download under way). */
function tokenizerOffer(n: TokenizerNeededView): HTMLElement {
  const button = (label: string, iconName: string, how: 'download' | 'folder', secondary: boolean) => {
    const b = h('vscode-button', { icon: iconName, secondary, disabled: download !== undefined, 'data-get-tokenizer': how }, label);
    b.addEventListener('click', () => {
      if (download !== undefined) return;
      if (how === 'download') {
        download = null;
        renderTokens();
      }
      vscode.postMessage({ type: 'getTokenizer', how });
    });
    return b;
  };
  return h(
    'div',
    { class: 'tokenizer-offer' },
    h(
      'p',
      { class: 'notice' },
      icon('info'),
      'No tokenizer for ',
      h('code', null, n.repo),
      ' on this machine yet. The token view shows the response in the model’s own tokenizer.',
    ),
    h(
      'p',
      { class: 'muted' },
      'Download its tokenizer files from the Hugging Face Hub (3–30 MB, kept in ',
      h('code', null, n.dir),
      '), or choose a folder that holds them (',
      h('code', null, 'tokenizer.json'),
      ', or ',
      h('code', null, 'tiktoken.model'),
      ' with ',
      h('code', null, 'tokenizer_config.json'),
      ').',
    ),
    h(
      'div',
      { class: 'tokenizer-actions' },
      button('Download from Hugging Face', 'cloud-download', 'download', false),
      button('Choose Folder…', 'folder-opened', 'folder', true),
    ),
    download !== undefined
      ? h(
          'p',
          { class: 'notice tokenizer-progress' },
          h('vscode-progress-ring'),
          h('span', { class: 'tokenizer-progress-text' }, download ? progressText(download) : 'Starting the download…'),
        )
      : null,
    n.error && download === undefined ? h('p', { class: 'notice tokenizer-error' }, icon('error', 'sev-error'), n.error) : null,
  );
}

function progressText(p: TokenizerProgressView): string {
  const mb = (n: number) => (n / 1e6).toFixed(1);
  return `Downloading ${p.file}: ${mb(p.received)}${p.total ? ` of ${mb(p.total)}` : ''} MB`;
}

function legend(): HTMLElement {
  const items: [string, string][] = [
    ['s-reasoning', 'reasoning'],
    ['s-content', 'content'],
    ['s-section', 'tool section'],
    ['s-call-name', 'call name'],
    ['s-arguments', 'arguments'],
    ['k-special', 'special id'],
    ['k-marker-as-text', 'marker as text'],
  ];
  return h(
    'span',
    { class: 'legend' },
    items.map(([cls, label]) => h('span', { class: `tok ${cls}` }, label)),
  );
}

function findingChip(f: FindingView, i: number): HTMLElement {
  const b = h(
    'button',
    { class: `finding-chip sev-${f.severity}`, title: f.why ?? f.message },
    icon(SEVERITY_ICON[f.severity]),
    f.title ?? f.rule,
  );
  b.addEventListener('click', () => revealFinding(i));
  return b;
}

/** Switches to the Tokens tab and scrolls to the finding (or says where it is when it has no place in the text). */
function revealFinding(i: number): void {
  if (!tabs) return;
  state.tab = 0;
  tabs.setAttribute('selected-index', '0');
  (tabs as unknown as { selectedIndex: number }).selectedIndex = 0;
  saveState();
  requestAnimationFrame(() => grid?.revealFinding(i));
}

function nativeFallback(x: ExchangeView): HTMLElement | string {
  return x.native ? h('pre', { class: 'native' }, x.native.text) : '';
}

function findingsList(x: ExchangeView): HTMLElement {
  if (x.unavailable && x.findings.length === 0) return h('p', { class: 'notice' }, x.unavailable);
  if (x.findings.length === 0)
    return h('p', { class: 'notice' }, icon('pass', 'sev-ok'), 'No findings: nothing in this exchange is known to break agents.');
  return h(
    'ol',
    { class: 'findings' },
    x.findings.map((f, i) => {
      const li = h(
        'li',
        { class: `finding sev-${f.severity}` },
        h(
          'div',
          { class: 'finding-head' },
          icon(SEVERITY_ICON[f.severity]),
          h('strong', null, f.title ?? f.rule),
          h('code', null, f.rule),
          h('span', { class: 'loc' }, f.location),
        ),
        h('div', { class: 'finding-message' }, f.message),
        f.why ? h('div', { class: 'finding-why' }, 'Why this breaks agents: ', f.why) : null,
        f.expectedMarker ? h('div', { class: 'finding-why' }, `Expected ${f.expectedMarker} at offset ${f.expectedAt}`) : null,
      );
      li.tabIndex = 0;
      li.addEventListener('click', () => revealFinding(i));
      li.addEventListener('keydown', (e) => e.key === 'Enter' && revealFinding(i));
      return li;
    }),
  );
}

function section(title: string, ...children: (Child | Child[])[]): HTMLElement {
  return h('section', null, h('h2', null, title), ...children);
}

function kv(entries: [string, unknown][]): HTMLElement {
  return h(
    'dl',
    { class: 'kv' },
    entries
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, typeof v === 'string' ? v : json(v)))),
  );
}

function requestPanel(x: ExchangeView): HTMLElement {
  const r = x.request;
  if (!r) return h('p', { class: 'notice' }, x.unavailable ?? 'The request body could not be read.');
  return h(
    'div',
    { class: 'doc' },
    section('Parameters', kv([['model', r.model], ['stream', r.stream], ...Object.entries(r.params)])),
    r.provider !== undefined ? section('Provider routing (pin)', h('pre', null, json(r.provider))) : null,
    section(
      `Messages (${r.messages.length})`,
      r.messages.map((m) =>
        h(
          'div',
          { class: `message role-${m.role}` },
          h('div', { class: 'role' }, m.role, m.toolCallId ? ` → ${m.toolCallId}` : ''),
          m.reasoning ? h('pre', { class: 'reasoning' }, m.reasoning) : null,
          m.content ? h('pre', null, m.content) : null,
          (m.toolCalls ?? []).map((c) => h('pre', { class: 'call' }, `${c.name}(${c.id ?? ''})\n${json(c.arguments)}`)),
        ),
      ),
    ),
    section(
      `Tools (${r.tools.length})`,
      r.tools.map((t) =>
        h(
          'details',
          null,
          h('summary', null, h('code', null, t.name), t.description ? ` — ${t.description}` : ''),
          h('pre', null, json(t.parameters ?? {})),
        ),
      ),
    ),
  );
}

function responsePanel(x: ExchangeView): HTMLElement {
  const r = x.response;
  if (!r) return h('p', { class: 'notice' }, x.unavailable ?? 'No response.');
  const m = r.message;
  return h(
    'div',
    { class: 'doc' },
    section(
      'Outcome',
      kv([
        ['finish reason', r.finishReason],
        ['native finish reason', r.nativeFinishReason],
        ['terminated', r.terminated ? 'yes' : 'NO: the stream ended without its terminal event'],
        ['usage', r.usageText ?? r.usage],
        ['error', r.error],
      ]),
    ),
    r.wireIssues.length
      ? section(
          'Wire issues',
          h(
            'ul',
            null,
            r.wireIssues.map((w) => h('li', null, h('code', null, w.code), ' ', w.message)),
          ),
        )
      : null,
    m.reasoning ? section('Reasoning', h('pre', { class: 'reasoning' }, m.reasoning)) : null,
    section('Content', m.content ? h('pre', { class: 'content' }, m.content) : h('p', { class: 'muted' }, '(empty)')),
    section(
      `Tool calls (${m.toolCalls.length})`,
      m.toolCalls.map((c) =>
        h(
          'div',
          { class: 'message' },
          h('div', { class: 'role' }, `#${c.index} ${c.name || '(no name)'}`, c.id ? ` · ${c.id}` : ''),
          h('pre', null, json(c.arguments)),
        ),
      ),
    ),
  );
}

window.addEventListener('beforeunload', saveState);
vscode.postMessage({ type: 'ready' });
