/**
 * The comparison matrix as the webview shows it, computed from the core's results. Pure (no `vscode` import), so
 * the wording, the figures and the reference switch are unit-tested in Node.
 *
 * The core scores trigger agreement against the reference chosen when the run started; the user may pick another
 * reference at any time, so trigger similarity is recomputed here from the samples, paired the way the core pairs
 * them (a provider's sample k against the reference's sample k, once both have finished).
 */
import type { Severity } from '../../core/model';
import type { CompareProgress, ProviderResult, SampleResult } from '../../core/upstream/compare';
import { pct, providerRepairLine, triggerText } from '../../core/upstream/describe';
import { previewLine } from '../../core/repair/preview';
import { formatCost } from '../../core/cost';
import { triggerSimilarity, type TriggerMetrics } from '../../core/upstream/metrics';
import type { ProviderEndpoint } from '../../core/upstream/openrouter';
import type { CompareView, RowView, RunState, SampleCellView } from '../../../webview/compare/protocol';

export interface CompareState {
  model: string;
  sourceExchangeId?: string;
  reference: string;
  samples: number;
  concurrency: number;
  state: RunState;
  error?: string;
  progress: CompareProgress;
  wallMs?: number;
  /** The compared providers, in the order the user picked them. */
  providers: { slug: string; endpoint?: ProviderEndpoint }[];
  /** The latest row the core reported per provider (absent until its first sample finishes). */
  results: Map<string, ProviderResult>;
}

const SEVERITY_RANK: Record<Severity, number> = { info: 1, warning: 2, error: 3 };

function worse(a: Severity | undefined, b: Severity): Severity {
  return a && SEVERITY_RANK[a] >= SEVERITY_RANK[b] ? a : b;
}

export function formatMs(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '—';
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`;
}

/** USD per request (three significant digits keep sub-cent costs readable): core/cost.ts. */
export { formatCost };

/** USD per token → `$0.60` per million tokens. */
export function perMillion(usdPerToken: number | undefined): string {
  return usdPerToken === undefined ? '?' : `$${(usdPerToken * 1e6).toFixed(2)}`;
}

export function endpointFacts(e: ProviderEndpoint | undefined): RowView['endpoint'] {
  if (!e) return { down: false };
  const p = e.pricing;
  return {
    quantization: e.quantization,
    price:
      p && (p.prompt !== undefined || p.completion !== undefined)
        ? `${perMillion(p.prompt)} / ${perMillion(p.completion)} per M tokens`
        : undefined,
    uptime: e.uptimeLast30m !== undefined ? `uptime ${e.uptimeLast30m.toFixed(1)}%` : undefined,
    context: e.contextLength ? `${Math.round(e.contextLength / 1000)}k context` : undefined,
    down: e.status !== undefined && e.status < 0,
  };
}

/** A provider in the "Compare Providers…" quick pick: quantization, price and uptime at a glance. */
export function providerPickItem(e: ProviderEndpoint): { label: string; description: string; detail: string } {
  const f = endpointFacts(e);
  return {
    label: e.name,
    description: [e.slug, f.quantization].filter(Boolean).join(' · '),
    detail:
      [f.down ? `degraded (status ${e.status})` : undefined, f.price, f.uptime, f.context].filter(Boolean).join(' · ') ||
      'no details listed',
  };
}

/**
 * The reference for trigger agreement when the run starts: the provider that served the original capture, when it
 * is among the compared ones (users ask "was the answer I got normal?"), else the first compared provider.
 */
export function defaultReference(providers: readonly { slug: string; endpoint?: ProviderEndpoint }[], servedName?: string): string {
  const served = servedName?.toLowerCase();
  const hit = served ? providers.find((p) => p.slug.toLowerCase() === served || p.endpoint?.name.toLowerCase() === served) : undefined;
  return (hit ?? providers[0]).slug;
}

/** "3" → 3; anything but a whole number in [1, max] → a one-line reason. */
export function parseCount(text: string, what: string, max: number): number | string {
  const t = text.trim();
  const n = Number(t);
  if (!/^\d+$/.test(t) || !Number.isInteger(n) || n < 1 || n > max) return `${what} must be a whole number from 1 to ${max}`;
  return n;
}

/** Trigger similarity of `samples` against the reference's samples, paired by sample number. */
export function triggerAgainst(samples: readonly SampleResult[], reference: readonly SampleResult[]): TriggerMetrics & { pairs: number } {
  const pairs = samples.flatMap((x) => {
    const r = reference.find((y) => y.sample === x.sample);
    return r ? [{ reference: r.finishReason, candidate: x.finishReason }] : [];
  });
  return { ...triggerSimilarity(pairs), pairs: pairs.length };
}

/** A sample that answered is `ok` only when nothing in it breaks an agent: an error finding or an invalid call is `broken`. */
export function sampleState(s: SampleResult): SampleCellView['state'] {
  if (s.outcome.cancelled) return 'cancelled';
  if (!s.outcome.ok) return 'failed';
  return s.findings.some((f) => f.severity === 'error') || s.toolCallsValid === false ? 'broken' : 'ok';
}

export function sampleCell(s: SampleResult, slug: string): SampleCellView {
  const o = s.outcome;
  let worst: Severity | undefined;
  for (const f of s.findings) worst = worse(worst, f.severity);
  return {
    sample: s.sample,
    state: sampleState(s),
    exchangeId: o.exchangeId,
    // As reported by the upstream (a failed stream may still name one); the metric's view is in the row's figures.
    finishReason: o.response?.finishReason ?? s.finishReason ?? undefined,
    status: o.status,
    error: o.error,
    errorBody: o.errorBody,
    servedBy: s.servedBy,
    verified: s.verified,
    toolCallsValid: s.toolCallsValid,
    findings: s.findings.length,
    worst,
    ttft: o.ttftMs !== undefined ? formatMs(o.ttftMs) : undefined,
    ...(o.repair && { repair: previewLine(o.repair) }),
    label: `${slug} #${s.sample + 1}`,
  };
}

function rowView(
  p: { slug: string; endpoint?: ProviderEndpoint },
  result: ProviderResult | undefined,
  state: CompareState,
  refSamples: readonly SampleResult[],
): RowView {
  const samples = result?.samples ?? [];
  const isReference = p.slug === state.reference;
  const cells: SampleCellView[] = [];
  for (let k = 0; k < state.samples; k++) {
    const s = samples.find((x) => x.sample === k);
    // A sample with no result after the run ended was never sent (cancelled while queued, or the run failed).
    const missing = state.state === 'running' ? 'pending' : 'cancelled';
    cells.push(s ? sampleCell(s, p.slug) : { sample: k, state: missing, findings: 0, label: `${p.slug} #${k + 1}` });
  }

  let trigger: RowView['trigger'];
  if (isReference) trigger = { text: 'reference', detail: 'The other providers’ tool-call triggers are compared with this one.', f1: null };
  else {
    const t = triggerAgainst(samples, refSamples);
    trigger = t.pairs
      ? {
          text: pct(t.f1),
          detail: `vs ${state.reference} over ${t.pairs} paired sample${t.pairs === 1 ? '' : 's'}: ${triggerText(t)}`,
          f1: t.f1,
        }
      : { text: '—', detail: `No sample is paired with one of ${state.reference} yet.`, f1: null };
  }

  const schema = result?.schema;
  const severities = new Map<string, Severity>();
  for (const s of samples) for (const f of s.findings) severities.set(f.rule, worse(severities.get(f.rule), f.severity));
  const findings = Object.entries(result?.findingsByRule ?? {})
    .map(([rule, count]) => ({ rule, count, severity: severities.get(rule) ?? 'info' }))
    .sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.count - a.count || a.rule.localeCompare(b.rule));

  return {
    slug: p.slug,
    name: result?.name ?? p.endpoint?.name ?? p.slug,
    isReference,
    endpoint: endpointFacts(p.endpoint ?? result?.endpoint),
    served: { names: result?.servedBy ?? [], verified: result?.verified, mismatch: result?.verified === false },
    finishReasons: Object.entries(result?.finishReasons ?? {})
      .map(([reason, count]) => ({ reason, count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
    trigger,
    schema:
      schema && schema.finishToolCalls
        ? {
            text: pct(schema.accuracy),
            detail: `${schema.successful} of ${schema.finishToolCalls} tool_calls finishes have valid calls`,
            accuracy: schema.accuracy,
          }
        : { text: '—', detail: 'No sample finished with tool_calls.', accuracy: null },
    findings,
    ttft: formatMs(result?.ttftMs),
    tokensPerSecond: result?.tokensPerSecond !== undefined ? `${result.tokensPerSecond.toFixed(1)} tok/s` : '—',
    cost: formatCost(result?.costUsd),
    done: samples.length,
    total: state.samples,
    failed: samples.filter((s) => !s.outcome.ok).length,
    samples: cells,
    ...(result && providerRepairLine(result) && { repair: providerRepairLine(result) }),
  };
}

export function compareView(state: CompareState): CompareView {
  const refSamples = state.results.get(state.reference)?.samples ?? [];
  return {
    model: state.model,
    sourceExchangeId: state.sourceExchangeId,
    reference: state.reference,
    state: state.state,
    error: state.error,
    progress: { ...state.progress },
    samples: state.samples,
    concurrency: state.concurrency,
    wall: state.wallMs !== undefined ? formatMs(state.wallMs) : undefined,
    rows: state.providers.map((p) => rowView(p, state.results.get(p.slug), state, refSamples)),
  };
}

/** The sample with this exchange id, for diff titles (`fireworks #2`). */
export function sampleLabel(state: CompareState, exchangeId: string): string | undefined {
  for (const [slug, row] of state.results) {
    const s = row.samples.find((x) => x.outcome.exchangeId === exchangeId);
    if (s) return `${slug} #${s.sample + 1}`;
  }
  return undefined;
}
