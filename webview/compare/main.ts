/**
 * The provider-comparison webview: one row per provider, one cell per sample, figures per provider, and a token
 * diff of any two samples. All data comes from the host as snapshots (protocol.ts); this page keeps only its own UI
 * state (which samples are selected, which error bodies are expanded) with setState, and asks for a fresh snapshot
 * with `ready` each time it starts. Every model- or provider-supplied string goes through `h` as text.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import './style.css';
import { h, icon } from '../dom';
import { displayText } from '../layout';
import { showPanelError } from '../panel/error';
import { SEGMENT_KINDS, TOKEN_KINDS } from '../protocol';
import type {
  CompareHostMessage,
  CompareView,
  CompareWebviewMessage,
  DiffHunk,
  DiffKind,
  DiffToken,
  RowView,
  SampleCellView,
  TokenDiffView,
} from './protocol';

interface UiState {
  /** Exchange ids of the selected samples (at most two; selecting a third drops the oldest). */
  selected: string[];
  /** Exchange ids whose error body is expanded. */
  openErrors: string[];
}

interface VsCodeApi {
  postMessage(m: CompareWebviewMessage): void;
  getState(): UiState | undefined;
  setState(s: UiState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const ui: UiState = { selected: [], openErrors: [], ...vscode.getState() };
const app = document.getElementById('app')!;
let view: CompareView | undefined;
let tokenDiff: Extract<CompareHostMessage, { type: 'tokenDiff' }> | undefined;

const STATE_ICON: Record<SampleCellView['state'], string> = {
  pending: 'loading~spin',
  ok: 'pass',
  broken: 'error',
  failed: 'error',
  cancelled: 'circle-slash',
};
const SEVERITY_ICON = { error: 'error', warning: 'warning', info: 'info' } as const;

function save(): void {
  vscode.setState(ui);
}

let tokenDiffVersion = 0;

window.addEventListener('message', (e: MessageEvent<CompareHostMessage>) => {
  const m = e.data;
  if (m.type === 'error') return showPanelError(m.message);
  if (m.type === 'snapshot') view = m.view;
  else {
    tokenDiff = m;
    tokenDiffVersion++;
  }
  render();
});

/**
 * Snapshots stream in up to ten times a second while samples finish. Each part of the page is rebuilt only when
 * the data it shows changed, and unchanged elements stay in place, so an open dropdown, focus or a text selection
 * survives the updates.
 */
const built = new Map<string, { key: string; el: HTMLElement }>();

function keep(slot: string, data: unknown, build: () => HTMLElement): HTMLElement {
  const key = JSON.stringify(data);
  const b = built.get(slot);
  if (b && b.key === key) return b.el;
  const el = build();
  built.set(slot, { key, el });
  return el;
}

function setChildren(parent: Element, children: Node[]): void {
  children.forEach((c, i) => {
    if (parent.childNodes[i] !== c) parent.insertBefore(c, parent.childNodes[i] ?? null);
  });
  while (parent.childNodes.length > children.length) parent.lastChild!.remove();
}

function render(): void {
  const v = view;
  if (!v) return;
  const known = new Set(v.rows.flatMap((r) => r.samples.map((s) => s.exchangeId).filter(Boolean)));
  ui.selected = ui.selected.filter((id) => known.has(id));
  const title = keep('title', [v.model, v.rows.length, v.samples, v.concurrency, v.sourceExchangeId], () => titleBlock(v));
  const status = keep('status', [v.state, v.progress, v.wall, v.error], () => statusLine(v));
  const reference = keep('reference', [v.reference, v.rows.map((r) => [r.slug, r.name])], () => referenceSelect(v));
  const selection = keep('selection', [ui.selected, v.rows.map((r) => r.samples.map((c) => c.label))], () => selectionBar(v));
  const table = keep('matrix', v.rows.length, () => matrix());
  setChildren(
    table.querySelector('tbody')!,
    v.rows.map((r) => {
      const ids = r.samples.map((c) => c.exchangeId);
      return keep(`row:${r.slug}`, [r, ui.selected.filter((id) => ids.includes(id)), ui.openErrors.filter((id) => ids.includes(id))], () =>
        row(r),
      );
    }),
  );
  const diff = tokenDiff ? [keep('tokenDiff', tokenDiffVersion, () => tokenDiffSection(tokenDiff!))] : [];
  setChildren(app, [title, status, reference, selection, table, ...diff]);
}

function titleBlock(v: CompareView): HTMLElement {
  const source = v.sourceExchangeId;
  const sourceLink = source
    ? h('button', { class: 'link', title: 'Open the captured exchange this request came from' }, 'original exchange')
    : null;
  sourceLink?.addEventListener('click', () => vscode.postMessage({ type: 'openExchange', id: source! }));
  return h(
    'header',
    { class: 'header' },
    h('h1', null, v.model),
    h(
      'p',
      { class: 'muted' },
      `${v.rows.length} providers × ${v.samples} sample${v.samples === 1 ? '' : 's'}, each pinned without fallbacks, at most ${v.concurrency} at once`,
      sourceLink ? ' · request from the ' : '',
      sourceLink,
    ),
  );
}

function statusLine(v: CompareView): HTMLElement {
  const p = v.progress;
  if (v.state === 'running') {
    const cancel = h('vscode-button', { secondary: true, icon: 'debug-stop' }, 'Cancel');
    cancel.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
    return h(
      'div',
      { class: 'status' },
      h('vscode-progress-bar', { value: p.done, max: Math.max(1, p.total), 'aria-label': 'Comparison progress' }),
      h('span', null, `${p.done}/${p.total} samples done · ${p.running} running${p.failed ? ` · ${p.failed} failed` : ''}`),
      cancel,
    );
  }
  if (v.state === 'failed')
    return h(
      'div',
      { class: 'status' },
      icon('error', 'sev-error'),
      h('span', { class: 'sev-error' }, `The comparison failed: ${v.error ?? 'unknown error'}`),
    );
  const what = v.state === 'cancelled' ? `Cancelled after ${p.done} of ${p.total} samples` : `Finished ${p.total} samples`;
  return h(
    'div',
    { class: 'status' },
    icon(v.state === 'cancelled' ? 'circle-slash' : 'pass', v.state === 'cancelled' ? 'sev-warning' : 'sev-ok'),
    h('span', null, `${what}${v.wall ? ` in ${v.wall}` : ''}${p.failed ? ` · ${p.failed} failed (kept as results)` : ''}`),
  );
}

function referenceSelect(v: CompareView): HTMLElement {
  const ref = h('select', { id: 'reference', title: 'Trigger agreement is measured against this provider (K2 Vendor Verifier)' });
  for (const r of v.rows) {
    const o = h('option', { value: r.slug }, `${r.name} (${r.slug})`);
    o.selected = r.slug === v.reference;
    ref.append(o);
  }
  ref.addEventListener('change', () => vscode.postMessage({ type: 'setReference', slug: ref.value }));
  return h('label', { class: 'reference', for: 'reference' }, icon('target'), 'Reference for trigger agreement ', ref);
}

function selectionBar(v: CompareView): HTMLElement {
  const labels = ui.selected.map((id) => v.rows.flatMap((r) => r.samples).find((s) => s.exchangeId === id)?.label ?? id);
  const two = ui.selected.length === 2;
  const action = (label: string, iconName: string, kind: DiffKind, title: string) => {
    const b = h('vscode-button', { secondary: true, icon: iconName, disabled: !two, title }, label);
    b.addEventListener('click', () => {
      if (ui.selected.length === 2) vscode.postMessage({ type: 'diff', kind, left: ui.selected[0], right: ui.selected[1] });
    });
    return b;
  };
  const clear = h('button', { class: 'link' }, 'clear');
  clear.addEventListener('click', () => {
    ui.selected = [];
    save();
    render();
  });
  return h(
    'div',
    { class: 'selection' },
    icon('split-horizontal'),
    ui.selected.length
      ? h('span', null, `Side by side: ${labels.join(' ↔ ')}`, two ? '' : ' (select one more sample)', ' · ', clear)
      : h('span', { class: 'muted' }, 'Tick two samples to see them side by side.'),
    action('Raw stream diff', 'diff', 'raw', 'The two native texts in the diff editor'),
    action('Wire diff', 'diff-multiple', 'wire', 'The two response bodies as received (SSE) in the diff editor'),
    action('Token diff', 'symbol-key', 'tokens', 'The two token streams aligned below'),
  );
}

const COLUMNS: [string, string][] = [
  ['Provider (requested)', 'The provider pinned for these samples, as OpenRouter lists it'],
  ['Served by', 'Who really served each sample (generation stats, else the stream’s provider field)'],
  ['Samples', 'One cell per sample: click to open its exchange, tick two to compare them'],
  ['Finish reasons', 'As reported; failed = no response, cancelled = stopped by you'],
  ['Trigger F1', 'K2 Vendor Verifier ToolCall-Trigger Similarity against the reference provider'],
  ['Schema', 'K2 Vendor Verifier ToolCall-Schema Accuracy: tool_calls finishes whose calls are all valid'],
  ['Findings', 'Tokenscope rules: number of samples with at least one finding of each'],
  ['TTFT · speed · cost', 'Medians over the samples: time to first token, completion tokens per second after it, USD per request'],
];

/** The table frame; its rows are kept up to date by render(). */
function matrix(): HTMLElement {
  return h(
    'div',
    { class: 'matrix-wrap' },
    h(
      'table',
      { class: 'matrix' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          COLUMNS.map(([name, title]) => h('th', { title, scope: 'col' }, name)),
        ),
      ),
      h('tbody'),
    ),
  );
}

function row(r: RowView): HTMLElement {
  const e = r.endpoint;
  const provider = h(
    'td',
    { class: 'provider' },
    h(
      'div',
      { class: 'name' },
      h('strong', null, r.name),
      r.isReference ? h('span', { class: 'tag' }, 'reference') : null,
      e.down ? h('span', { class: 'tag sev-warning' }, 'degraded') : null,
    ),
    h('div', { class: 'muted' }, [r.slug, e.quantization].filter(Boolean).join(' · ')),
    e.price || e.uptime || e.context
      ? h('div', { class: 'muted small' }, [e.price, e.uptime, e.context].filter(Boolean).join(' · '))
      : null,
  );
  let served: HTMLElement;
  if (r.served.mismatch) {
    served = h(
      'td',
      { class: 'served mismatch', title: `Pinned ${r.name}, but OpenRouter says another provider answered` },
      icon('warning'),
      ` served by ${r.served.names.join(', ')}`,
      h('div', { class: 'small' }, `requested ${r.name}`),
    );
  } else if (r.served.verified)
    served = h(
      'td',
      { class: 'served', title: 'Every named sample was served by the pinned provider' },
      icon('verified', 'sev-ok'),
      ` ${r.served.names.join(', ')}`,
    );
  else served = h('td', { class: 'served muted', title: 'No sample has named its provider yet' }, '—');
  return h(
    'tr',
    { class: r.served.mismatch ? 'row-mismatch' : undefined },
    provider,
    served,
    h('td', { class: 'samples' }, r.samples.map(cell)),
    h(
      'td',
      null,
      r.finishReasons.length
        ? r.finishReasons.map((f) => h('div', { class: `finish finish-${f.reason.replace(/[^\w-]/g, '')}` }, `${f.reason} ×${f.count}`))
        : h('span', { class: 'muted' }, '—'),
    ),
    h('td', { class: 'num', title: r.trigger.detail }, r.trigger.text),
    h(
      'td',
      { class: `num${r.schema.accuracy !== null && r.schema.accuracy < 1 ? ' sev-error' : ''}`, title: r.schema.detail },
      r.schema.text,
    ),
    h(
      'td',
      null,
      r.findings.length
        ? r.findings.map((f) => h('div', { class: `rule sev-${f.severity}` }, icon(SEVERITY_ICON[f.severity]), ` ${f.rule} ×${f.count}`))
        : r.done
          ? h('span', { class: 'sev-ok' }, 'none')
          : h('span', { class: 'muted' }, '—'),
      r.repair
        ? h(
            'div',
            {
              class: 'repair-preview',
              title: 'What repair mode (tokenscope.repair.enabled, serve --repair) would have delivered to the agent',
            },
            icon('wrench'),
            ` repair would deliver: ${r.repair}`,
          )
        : null,
    ),
    h(
      'td',
      { class: 'num perf' },
      h('div', { title: 'Median time to first token' }, r.ttft),
      h('div', { title: 'Median tokens per second' }, r.tokensPerSecond),
      h('div', { title: 'Median USD per request' }, r.cost),
    ),
  );
}

function cell(s: SampleCellView): HTMLElement {
  const id = s.exchangeId;
  const check = h('input', {
    type: 'checkbox',
    title: 'Select for a side-by-side comparison',
    'aria-label': `Select ${s.label}`,
    disabled: !id,
    'data-id': id,
  });
  (check as HTMLInputElement).checked = !!id && ui.selected.includes(id);
  check.addEventListener('change', () => {
    if (!id) return;
    ui.selected = (check as HTMLInputElement).checked
      ? [...ui.selected.filter((x) => x !== id), id].slice(-2)
      : ui.selected.filter((x) => x !== id);
    save();
    render();
    // The row was rebuilt: keep keyboard focus on the same checkbox.
    app.querySelector<HTMLInputElement>(`input[data-id="${CSS.escape(id)}"]`)?.focus();
  });
  const summary =
    s.state === 'pending'
      ? 'running…'
      : s.state === 'cancelled'
        ? 'cancelled'
        : (s.finishReason ?? (s.status !== undefined ? `HTTP ${s.status}` : 'no response'));
  const open = h(
    'button',
    {
      class: 'open',
      disabled: !id,
      title: id
        ? [
            `Open ${s.label}`,
            s.state === 'broken' && 'broken: it has an error finding or an invalid tool call',
            s.servedBy && `served by ${s.servedBy}`,
            s.ttft && `first token after ${s.ttft}`,
            s.repair && `repair would deliver: ${s.repair}`,
          ]
            .filter(Boolean)
            .join(' · ')
        : 'Nothing was recorded for this sample',
    },
    icon(STATE_ICON[s.state], `state-${s.state}`),
    h('span', { class: 'k' }, `#${s.sample + 1}`),
    h('span', null, summary),
    s.toolCallsValid === false ? h('span', { class: 'sev-error', title: 'A tool call failed schema validation' }, 'invalid call') : null,
    s.findings
      ? h(
          'span',
          { class: `count sev-${s.worst ?? 'info'}`, title: `${s.findings} finding${s.findings === 1 ? '' : 's'}` },
          icon(SEVERITY_ICON[s.worst ?? 'info']),
          String(s.findings),
        )
      : null,
    s.verified === false
      ? h('span', { class: 'sev-warning', title: 'Served by another provider than the pinned one' }, icon('warning'), s.servedBy ?? '')
      : null,
  );
  if (id) open.addEventListener('click', () => vscode.postMessage({ type: 'openExchange', id }));
  const failure =
    s.state === 'failed'
      ? h(
          'div',
          { class: 'failure' },
          h('div', { class: 'sev-error' }, s.error ?? (s.status !== undefined ? `HTTP ${s.status}` : 'failed')),
          s.errorBody ? errorBody(s, s.errorBody) : null,
        )
      : null;
  return h(
    'div',
    { class: `cell state-${s.state}${id && ui.selected.includes(id) ? ' selected' : ''}` },
    h('div', { class: 'cell-head' }, check, open),
    failure,
  );
}

function errorBody(s: SampleCellView, body: string): HTMLElement {
  const key = s.exchangeId ?? s.label;
  const d = h('details', { open: ui.openErrors.includes(key) }, h('summary', null, 'error body'), h('pre', null, body));
  d.addEventListener('toggle', () => {
    const open = (d as HTMLDetailsElement).open;
    ui.openErrors = open ? [...new Set([...ui.openErrors, key])] : ui.openErrors.filter((k) => k !== key);
    save();
  });
  return d;
}

function tokenDiffSection(t: Extract<CompareHostMessage, { type: 'tokenDiff' }>): HTMLElement {
  if (t.pending)
    return h('section', { class: 'token-diff' }, h('p', { class: 'muted' }, icon('loading~spin'), ' Tokenizing both samples…'));
  if (!t.diff) return h('section', { class: 'token-diff' }, h('p', { class: 'muted' }, icon('info'), ` ${t.reason ?? 'No token diff.'}`));
  return diffView(t.diff);
}

function chip(t: DiffToken): HTMLElement {
  const kind = TOKEN_KINDS[t.kind] ?? 'ordinary';
  const segment = SEGMENT_KINDS[t.segment] ?? 'none';
  return h('span', { class: `tok k-${kind} s-${segment}`, title: `id ${t.id} · ${kind} · ${segment}` }, displayText(t.text, true) || '∅');
}

/** `1 token`, `2 tokens`. */
function tokensText(n: number): string {
  return `${n.toLocaleString()} token${n === 1 ? '' : 's'}`;
}

function diffView(d: TokenDiffView): HTMLElement {
  const side = (s: TokenDiffView['left']) => {
    const b = h('button', { class: 'link', title: 'Open this exchange' }, s.label);
    b.addEventListener('click', () => vscode.postMessage({ type: 'openExchange', id: s.exchangeId }));
    return h(
      'th',
      { scope: 'col' },
      b,
      h('span', { class: 'muted' }, ` · ${tokensText(s.tokens)}${s.tokenizer ? ` · ${s.tokenizer}` : ''}`),
      s.reason ? h('div', { class: 'sev-warning' }, s.reason) : null,
    );
  };
  const stats =
    d.firstDifference === undefined
      ? 'The two token streams are identical.'
      : `${tokensText(d.same)} in common · ${d.onlyLeft.toLocaleString()} only left · ${d.onlyRight.toLocaleString()} only right · first difference at token ${d.firstDifference.toLocaleString()}`;
  const close = h('button', { class: 'link' }, 'close');
  close.addEventListener('click', () => {
    tokenDiff = undefined;
    render();
  });
  return h(
    'section',
    { class: 'token-diff' },
    h('h2', null, 'Token diff ', close),
    h('p', { class: 'muted' }, stats),
    d.coarse
      ? h(
          'p',
          { class: 'sev-warning' },
          icon('info'),
          ' The streams differ too much for a token-by-token alignment: only their common start and end are aligned.',
        )
      : null,
    h('table', { class: 'diff' }, h('thead', null, h('tr', null, side(d.left), side(d.right))), h('tbody', null, d.hunks.map(hunkRow))),
  );
}

function hunkRow(x: DiffHunk): HTMLElement {
  if (x.kind === 'skip')
    return h(
      'tr',
      { class: 'skip' },
      h('td', { colspan: 2 }, `⋯ ${x.count.toLocaleString()} identical token${x.count === 1 ? '' : 's'} ⋯`),
    );
  if (x.kind === 'equal') return h('tr', { class: 'eq' }, h('td', null, x.tokens.map(chip)), h('td', null, x.tokens.map(chip)));
  const more = (n: number | undefined) => (n ? h('span', { class: 'muted' }, ` … ${n.toLocaleString()} more`) : null);
  return h(
    'tr',
    { class: 'change' },
    h('td', { class: 'del' }, x.left.map(chip), more(x.omitted?.[0])),
    h('td', { class: 'ins' }, x.right.map(chip), more(x.omitted?.[1])),
  );
}

vscode.postMessage({ type: 'ready' });
