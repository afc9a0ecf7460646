/**
 * What the Captures tree and the status bar show, computed from the store's exchanges. Pure (no `vscode` import):
 * the VS Code layer only turns these records into TreeItems, so the wording and grouping are unit-tested in Node.
 */
import { exchangeModel, exchangeProvider } from '../core/capture/describe';
import { isDemoCapture } from '../core/demo/mark';
import { exchangePolicy } from '../core/policy/describe';
import type { ProviderDirectory } from '../core/policy/slugs';
import { sizeText } from '../core/live/inflight';
import type { CapturedExchange, Severity } from '../core/model';

/** What is known of a stream in flight (src/core/live/inflight.ts). */
export interface LiveInfo {
  bytes: number;
  ageMs: number;
  quietMs: number;
  started: boolean;
}

/** A silence shorter than this is not worth a word. */
export const QUIET_SHOWN_MS = 3000;

/** `3.2 kB · 12 s · no bytes for 42 s` */
export function liveText(l: LiveInfo): string {
  const s = (ms: number) => `${Math.floor(ms / 1000)} s`;
  const parts = [sizeText(l.bytes), s(l.ageMs)];
  if (l.quietMs >= QUIET_SHOWN_MS) parts.push(l.started ? `no bytes for ${s(l.quietMs)}` : `no response for ${s(l.quietMs)}`);
  return parts.join(' · ');
}

export interface SessionNode {
  kind: 'session';
  id: string;
  label: string;
  description: string;
  tooltip: string;
  exchanges: CapturedExchange[];
  broken: number;
}

export type StatusIcon = { id: string; color?: 'error' | 'warning' | 'ok' | 'muted'; spin?: boolean };

export interface ExchangeRow {
  label: string;
  description: string;
  tooltip: string;
  icon: StatusIcon;
  /** Tree `contextValue`: menus match `^exchange`. */
  contextValue: string;
}

/** Broken = it would hurt an agent: an error finding, or the exchange itself failed or was cut off. */
export function isBroken(x: CapturedExchange): boolean {
  return (
    (x.summary?.counts.error ?? 0) > 0 || x.state === 'error' || x.state === 'incomplete' || (x.status !== undefined && x.status >= 400)
  );
}

export function worstSeverity(x: CapturedExchange): Severity | undefined {
  const c = x.summary?.counts;
  if (!c) return undefined;
  return c.error ? 'error' : c.warning ? 'warning' : c.info ? 'info' : undefined;
}

function findingCount(x: CapturedExchange): number {
  const c = x.summary?.counts;
  return c ? c.error + c.warning + c.info : 0;
}

export function statusIcon(x: CapturedExchange): StatusIcon {
  if (x.state === 'streaming') return { id: 'loading', spin: true, color: 'muted' };
  if (x.state === 'error' || (x.status !== undefined && x.status >= 400)) return { id: 'error', color: 'error' };
  const worst = worstSeverity(x);
  if (worst === 'error') return { id: 'error', color: 'error' };
  if (x.state === 'incomplete') return { id: 'debug-disconnect', color: 'error' };
  if (worst === 'warning') return { id: 'warning', color: 'warning' };
  if (!x.summary) return { id: 'circle-outline', color: 'muted' };
  return { id: worst === 'info' ? 'info' : 'pass', color: 'ok' };
}

function time(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:${String(d.getSeconds()).padStart(2, '0')}`;
}

/**
 * One exchange's row. Rows of a session mostly share their model, so the label leads with what tells them apart:
 * who served it, how it ended, how many findings, when (the icon gives the worst severity). The model, and the
 * marks (demo, repaired, policy), follow in the description.
 */
export function exchangeRow(x: CapturedExchange, live?: LiveInfo, slugs?: ProviderDirectory): ExchangeRow {
  const count = findingCount(x);
  const model = exchangeModel(x);
  const provider = exchangeProvider(x);
  const finish = x.summary?.finishReason;
  const demo = isDemoCapture(x);
  const policy = exchangePolicy(x, slugs);
  const label = [
    provider ?? x.route,
    model ? undefined : `${x.method} ${x.path.split('?')[0]}`,
    outcomeWord(x, live),
    count ? `${count} finding${count === 1 ? '' : 's'}` : undefined,
    time(x.startedAt),
  ];
  const description = [model, demo && 'demo', x.repair && 'repaired', policy?.word];
  const lines = [
    model ?? `${x.method} ${x.path}`,
    `${x.method} ${x.path} → ${x.route}${x.status !== undefined ? ` (HTTP ${x.status})` : ''}`,
    provider ? `served by ${provider}` : undefined,
    finish ? `finish reason: ${finish}` : undefined,
    x.summary
      ? `findings: ${x.summary.counts.error} errors, ${x.summary.counts.warning} warnings, ${x.summary.counts.info} notes`
      : 'not analysed yet',
    x.summary?.rules.length ? `rules: ${[...new Set(x.summary.rules)].join(', ')}` : undefined,
    x.error ? `error: ${x.error}` : undefined,
    x.target ? `re-run on ${x.target}` : undefined,
    policy ? `provider policy: ${policy.summary}` : undefined,
    demo ? "demo capture from Tokenscope's built-in local upstream (Tokenscope: Clear Demo Captures removes it)" : undefined,
    `started ${new Date(x.startedAt).toLocaleString()}`,
  ];
  return {
    label: label.filter(Boolean).join(' · '),
    description: description.filter(Boolean).join(' · '),
    tooltip: lines.filter(Boolean).join('\n'),
    icon: statusIcon(x),
    contextValue: isBroken(x) ? 'exchange.broken' : 'exchange',
  };
}

/** How the exchange ended, in a word or two: its finish reason, an HTTP error, its state, or its stream so far. */
function outcomeWord(x: CapturedExchange, live: LiveInfo | undefined): string | undefined {
  if (x.summary?.finishReason) return x.summary.finishReason;
  if (x.state === 'streaming') return live ? `streaming · ${liveText(live)}` : 'streaming…';
  if (x.status !== undefined && x.status >= 400) return `HTTP ${x.status}`;
  if (x.state !== 'complete') return x.state;
  return x.status !== undefined ? `HTTP ${x.status}` : undefined;
}

/**
 * The one row an empty tree shows when exchanges exist but none is shown (a filter, or broken only): why, and what
 * brings them back. Undefined when rows are shown, or when there is nothing at all (the view's welcome text says so).
 * It is a row of the tree itself, so it can never outlive the rows it describes.
 */
export function emptyTreeMessage(o: { shown: number; filter?: string; brokenOnly: boolean; anyCaptured: boolean }): string | undefined {
  if (o.shown > 0) return undefined;
  if (o.filter) return `No captures match the filter (${o.filter}${o.brokenOnly ? ', broken only' : ''}).`;
  if (o.brokenOnly && o.anyCaptured) return 'No broken exchanges: every capture is healthy (Show All Exchanges lists them).';
  return undefined;
}

/** Sessions newest first, each with its exchanges newest first. `brokenOnly` drops healthy exchanges and empty sessions. */
export function groupSessions(exchanges: readonly CapturedExchange[], brokenOnly = false): SessionNode[] {
  const bySession = new Map<string, CapturedExchange[]>();
  for (const x of exchanges) {
    if (brokenOnly && !isBroken(x)) continue;
    let list = bySession.get(x.sessionId);
    if (!list) bySession.set(x.sessionId, (list = []));
    list.push(x);
  }
  const nodes: SessionNode[] = [];
  for (const [id, list] of bySession) {
    list.sort((a, b) => b.startedAt - a.startedAt);
    const first = list[list.length - 1];
    const broken = list.filter(isBroken).length;
    const agent = list.find((x) => x.agent)?.agent ?? 'unknown agent';
    const day =
      new Date(first.startedAt).toDateString() === new Date().toDateString() ? '' : `${new Date(first.startedAt).toLocaleDateString()} `;
    nodes.push({
      kind: 'session',
      id,
      label: `${agent} · ${day}${time(first.startedAt)}`,
      description: `${list.length} exchange${list.length === 1 ? '' : 's'}${broken ? ` · ${broken} broken` : ''}`,
      tooltip: `Session of ${agent} started ${new Date(first.startedAt).toLocaleString()}`,
      exchanges: list,
      broken,
    });
  }
  return nodes.sort((a, b) => b.exchanges[0].startedAt - a.exchanges[0].startedAt);
}

/** How many of the newest captures the change signature looks at (storeSignature). */
const SIGNATURE_NEWEST = 64;

/**
 * A short fingerprint of the capture list as views show it: the count, and the newest captures' ids, states and
 * analysis. It changes when another process (a CLI `serve`, `demo --clear`) adds, finishes, analyses or removes a
 * capture, which the store reports to nobody here; the views then redraw as for a change of their own.
 */
export function storeSignature(list: readonly CapturedExchange[]): string {
  const head = list.slice(0, SIGNATURE_NEWEST).map((x) => {
    const c = x.summary?.counts;
    return `${x.id}.${x.state}.${x.status ?? ''}.${c ? `${c.error}-${c.warning}-${c.info}` : ''}.${x.repair ? 'r' : ''}`;
  });
  return `${list.length}|${head.join(',')}`;
}

export interface ProxyStatus {
  state: 'starting' | 'running' | 'stopped' | 'failed' | 'unavailable';
  port?: number;
  /** One line when failed or unavailable. */
  reason?: string;
}

/** `Tokenscope :8719 · 12 captured · 2 broken` (codicon syntax for the status bar). */
export function statusBarText(proxy: ProxyStatus, exchanges: readonly CapturedExchange[]): string {
  const head =
    proxy.state === 'running'
      ? `$(radio-tower) Tokenscope :${proxy.port}`
      : proxy.state === 'starting'
        ? '$(loading~spin) Tokenscope'
        : proxy.state === 'failed'
          ? '$(error) Tokenscope'
          : '$(circle-slash) Tokenscope';
  const broken = exchanges.filter(isBroken).length;
  const demo = exchanges.filter(isDemoCapture).length;
  return `${head} · ${exchanges.length} captured${demo ? ` (${demo} demo)` : ''}${broken ? ` · ${broken} broken` : ''}`;
}

export function statusBarTooltip(proxy: ProxyStatus, baseUrl: string | undefined): string {
  switch (proxy.state) {
    case 'running':
      return `Capture proxy on ${baseUrl}. Click to open the captures.`;
    case 'starting':
      return 'Capture proxy starting…';
    case 'stopped':
      return 'Capture proxy stopped (Tokenscope: Start Capture Proxy). Click to open the captures.';
    default:
      return `Capture proxy not running: ${proxy.reason ?? 'unknown reason'}. Click to open the captures.`;
  }
}
