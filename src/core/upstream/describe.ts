/**
 * Re-run, comparison and verification results in words (CLI text) and as plain JSON (CLI `--json`, exports): the
 * parsed events and analyses stay out, the figures and one-line errors stay in.
 */
import type { CompareReport, ProviderResult, SampleResult } from './compare';
import type { SchemaMetrics, TriggerMetrics } from './metrics';
import type { RunOutcome } from './run';
import type { VerifyReport } from './verify';
import { previewLine, previewsLine } from '../repair/preview';
import { formatCost } from '../cost';

export function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`;
}

const ms = (x: number | undefined) => (x === undefined ? '-' : `${Math.round(x)} ms`);
/** `1 request`, `2 requests`. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** An outcome without its parsed events and analysis. */
export function outcomeJson(o: RunOutcome) {
  return {
    target: o.target,
    exchangeId: o.exchangeId,
    ok: o.ok,
    cancelled: o.cancelled,
    status: o.status,
    error: o.error,
    errorBody: o.errorBody,
    servedProvider: o.servedProvider,
    generationId: o.generationId,
    finishReason: o.response?.finishReason,
    nativeFinishReason: o.response?.nativeFinishReason,
    ttftMs: o.ttftMs,
    durationMs: o.durationMs,
    completionTokens: o.completionTokens,
    tokensPerSecond: o.tokensPerSecond,
    costUsd: o.costUsd,
    findings: o.analysis?.findings ?? [],
    ...(o.repair && {
      repairWouldDeliver: {
        summary: previewLine(o.repair),
        calls: o.repair.calls,
        finishReason: o.repair.finishReason ?? null,
        record: o.repair.record,
      },
    }),
  };
}

/** What repair mode would have delivered over a provider's judged samples (undefined: it would have changed none). */
export function providerRepairLine(p: ProviderResult): string | undefined {
  return previewsLine(p.samples.filter((s) => !s.outcome.cancelled).map((s) => s.outcome.repair));
}

/** One line for an outcome: `HTTP 200, served by Fireworks, finish tool_calls, 412 ms, 2 findings`. */
export function outcomeLine(o: RunOutcome): string {
  const parts = [o.status === undefined ? 'no response' : `HTTP ${o.status}`];
  if (o.servedProvider) parts.push(`served by ${o.servedProvider}`);
  if (o.response?.finishReason) parts.push(`finish ${o.response.finishReason}`);
  parts.push(ms(o.durationMs));
  parts.push(count(o.analysis?.findings.length ?? 0, 'finding'));
  if (o.error) parts.push(`error: ${o.error}`);
  return parts.join(', ');
}

export function triggerText(t: TriggerMetrics | undefined): string {
  if (!t) return 'n/a';
  return `F1 ${pct(t.f1)} (precision ${pct(t.precision)}, recall ${pct(t.recall)}; TP ${t.tp} FP ${t.fp} FN ${t.fn} TN ${t.tn})`;
}

export function schemaText(s: SchemaMetrics): string {
  return `${pct(s.accuracy)} (${s.successful}/${s.finishToolCalls} tool_calls finishes valid)`;
}

export function sampleJson(s: SampleResult) {
  return {
    provider: s.provider,
    sample: s.sample,
    finishReason: s.finishReason ?? null,
    toolCallsValid: s.toolCallsValid,
    servedBy: s.servedBy,
    verified: s.verified,
    outcome: outcomeJson(s.outcome),
  };
}

export function compareJson(r: CompareReport) {
  return {
    ...r,
    providers: r.providers.map((p) => {
      const repair = providerRepairLine(p);
      return { ...p, samples: p.samples.map(sampleJson), ...(repair && { repairWouldDeliver: repair }) };
    }),
  };
}

function servedText(p: ProviderResult): string {
  if (p.verified === undefined) return '-';
  return p.verified ? `${p.servedBy.join(', ')} (verified)` : `${p.servedBy.join(', ')} (NOT ${p.name})`;
}

/** The comparison as a text table, one provider per row, then each failure's reason. */
export function compareText(r: CompareReport): string {
  const head = ['provider', 'served by', 'ok', 'finish reasons', 'trigger F1', 'schema', 'findings (samples)', 'TTFT', 'tok/s', '$/req'];
  const rows = r.providers.map((p) => [
    p.slug === r.reference ? `${p.slug} (ref)` : p.slug,
    servedText(p),
    `${p.done - p.failed}/${p.total}`,
    Object.entries(p.finishReasons)
      .map(([k, v]) => `${k}×${v}`)
      .join(' ') || '-',
    p.slug === r.reference ? 'ref' : pct(p.trigger.f1),
    p.schema.finishToolCalls ? `${p.schema.successful}/${p.schema.finishToolCalls}` : '-',
    Object.entries(p.findingsByRule)
      .map(([k, v]) => `${k}×${v}`)
      .join(' ') || '-',
    ms(p.ttftMs),
    p.tokensPerSecond === undefined ? '-' : p.tokensPerSecond.toFixed(1),
    formatCost(p.costUsd, '-'),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const out = [
    `${r.model}: ${count(r.providers.length, 'provider')} × ${count(r.samples, 'sample')}, concurrency ${r.concurrency}, ${(r.wallMs / 1000).toFixed(1)} s${r.cancelled ? ' (CANCELLED)' : ''}`,
    line(head),
    ...rows.map(line),
  ];
  const failures = r.providers.flatMap((p) =>
    p.samples.filter((s) => !s.outcome.ok).map((s) => `  ${p.slug} #${s.sample + 1}: ${s.outcome.error}`),
  );
  if (failures.length) out.push('', 'failures:', ...failures);
  const repairs = r.providers.flatMap((p) => {
    const line = providerRepairLine(p);
    return line ? [`  ${p.slug}: ${line}`] : [];
  });
  if (repairs.length) out.push('', 'what repair mode (serve --repair) would have delivered:', ...repairs);
  return out.join('\n');
}

export function verifyJson(r: VerifyReport) {
  return {
    ...r,
    items: r.items.map((i) => ({
      index: i.index,
      finishReason: i.finishReason ?? null,
      toolCallsValid: i.toolCallsValid,
      outcome: outcomeJson(i.outcome),
      ...(i.reference && { reference: { finishReason: i.reference.finishReason ?? null, outcome: outcomeJson(i.reference.outcome) } }),
    })),
  };
}

export function verifyText(r: VerifyReport): string {
  const s = r.summary;
  const others = Object.entries(s.finishOthersDetail)
    .map(([k, v]) => `${k}×${v}`)
    .join(' ');
  const rules = Object.entries(r.findingsByRule).sort((a, b) => b[1] - a[1]);
  return [
    `${r.provider}: ${count(r.total, 'request')}${r.cancelled ? ' (CANCELLED)' : ''}`,
    `  requests        ${s.successCount} succeeded, ${s.failureCount} failed`,
    `  finish reasons  stop ${s.finishStop}, tool_calls ${s.finishToolCalls}, other ${s.finishOthers}${others ? ` (${others})` : ''}`,
    `  schema accuracy ${schemaText(r.schema)}`,
    `  trigger         ${r.reference ? `vs ${r.reference}: ${triggerText(r.trigger)}` : 'n/a (pass --reference SLUG to compare finish reasons with a reference provider)'}`,
    rules.length ? '  findings' : '  findings        none',
    ...rules.map(([rule, n]) => `    ${rule.padEnd(28)} ${n} of ${r.total} responses`),
  ].join('\n');
}
