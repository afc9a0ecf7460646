/**
 * The summary of a `tokens --batch` run, built line by line in input order (constant memory: counters only, and the
 * first few bad lines): samples per dataset, tool-call markup in prompts, in completion content and as structured
 * calls, completion and prompt accounting against billed usage, findings by rule.
 */
import { plural } from '../accounting';
import type { LineResult, LineStats } from './process';

/** Bad lines kept with their reason (all are counted). */
export const BAD_LINES_KEPT = 10;

interface Accounting {
  /** Lines with both a count and a billed figure. */
  compared: number;
  exact: number;
  /** Difference (counted − billed for completions, billed − rendered for prompts) bucket → lines. */
  differences: Record<string, number>;
  counted: number;
  billed: number;
}

interface ToolCounts {
  samples: number;
  withTools: number;
  promptMarkup: number;
  contentMarkup: number;
  structuredCalls: number;
}

const BUCKETS = ['< -10', '-10..-4', '-3', '-2', '-1', '0', '+1', '+2', '+3', '+4..+10', '> +10'];

function bucket(d: number): string {
  if (d < -10) return '< -10';
  if (d < -3) return '-10..-4';
  if (d > 10) return '> +10';
  if (d > 3) return '+4..+10';
  return d > 0 ? `+${d}` : String(d);
}

function emptyAccounting(): Accounting {
  return { compared: 0, exact: 0, differences: Object.fromEntries(BUCKETS.map((b) => [b, 0])), counted: 0, billed: 0 };
}

function emptyTools(): ToolCounts {
  return { samples: 0, withTools: 0, promptMarkup: 0, contentMarkup: 0, structuredCalls: 0 };
}

function account(a: Accounting, counted: number, billed: number | undefined, diff: number): void {
  if (billed === undefined) return;
  a.compared++;
  if (diff === 0) a.exact++;
  a.differences[bucket(diff)]++;
  a.counted += counted;
  a.billed += billed;
}

export class BatchSummary {
  lines = 0;
  blank = 0;
  bad = 0;
  readonly badLines: { line: number; error: string }[] = [];
  readonly tools = emptyTools();
  readonly byDataset = new Map<string, ToolCounts>();
  /** Samples without a dataset field (shown as their own row when other samples have one). */
  readonly noDataset = emptyTools();
  /** Samples with prompt ids (the ones the SpecForge file holds). */
  withPromptIds = 0;
  readonly completion = emptyAccounting();
  readonly prompt = emptyAccounting();
  readonly promptSkipped = new Map<string, number>();
  readonly findingsByRule = new Map<string, number>();
  readonly families = new Map<string, number>();

  add(r: LineResult): void {
    this.lines++;
    if (r.error !== undefined || !r.stats) {
      this.bad++;
      if (this.badLines.length < BAD_LINES_KEPT) this.badLines.push({ line: r.line, error: r.error ?? 'no result' });
      return;
    }
    const s = r.stats;
    countTools(this.tools, s);
    if (s.dataset !== undefined) {
      let d = this.byDataset.get(s.dataset);
      if (!d) this.byDataset.set(s.dataset, (d = emptyTools()));
      countTools(d, s);
    } else countTools(this.noDataset, s);
    inc(this.families, s.family ?? 'unknown');
    account(this.completion, s.completion.counted, s.completion.billed, s.completion.counted - (s.completion.billed ?? 0));
    if (s.prompt) this.withPromptIds++;
    if (s.prompt) account(this.prompt, s.prompt.counted, s.prompt.billed, (s.prompt.billed ?? 0) - s.prompt.counted);
    if (s.promptSkipped) inc(this.promptSkipped, s.promptSkipped);
    for (const rule of s.rules) inc(this.findingsByRule, rule);
  }

  toJSON() {
    return {
      lines: { read: this.lines + this.blank, processed: this.lines - this.bad, bad: this.bad, blank: this.blank, withPromptIds: this.withPromptIds },
      badLines: this.badLines,
      samples: {
        total: this.tools.samples,
        byDataset: Object.fromEntries([...this.byDataset].map(([k, v]) => [k, v.samples])),
        withoutDataset: this.noDataset.samples,
      },
      families: Object.fromEntries(this.families),
      toolCalls: {
        withTools: this.tools.withTools,
        promptMarkup: this.tools.promptMarkup,
        contentMarkup: this.tools.contentMarkup,
        structuredCalls: this.tools.structuredCalls,
        byDataset: Object.fromEntries([...this.byDataset].map(([k, v]) => [k, v])),
      },
      accounting: {
        completion: accountingJson(this.completion, 'counted − billed'),
        prompt: { ...accountingJson(this.prompt, 'billed − rendered'), skipped: Object.fromEntries(this.promptSkipped) },
      },
      findingsByRule: Object.fromEntries([...this.findingsByRule].sort((a, b) => b[1] - a[1])),
    };
  }

  /** The readable summary. */
  text(): string {
    const j = this.toJSON();
    const out = [
      `${plural(j.lines.processed, 'sample')} processed, ${plural(j.lines.bad, 'bad line')}${j.lines.blank ? `, ${j.lines.blank} blank` : ''}`,
    ];
    const datasets: [string, ToolCounts][] = Object.entries(j.toolCalls.byDataset);
    if (datasets.length && this.noDataset.samples) datasets.push(['(no dataset field)', this.noDataset]);
    if (datasets.length) {
      out.push('', 'dataset                      samples  tools  prompt markup  content markup  structured calls');
      for (const [name, d] of datasets) {
        out.push(`  ${name.slice(0, 26).padEnd(26)} ${pad(d.samples, 8)} ${pad(d.withTools, 6)} ${pad(d.promptMarkup, 14)} ${pad(d.contentMarkup, 15)} ${pad(d.structuredCalls, 17)}`);
      }
    }
    const t = j.toolCalls;
    out.push('', `tool calls: ${t.withTools} offer tools, ${t.promptMarkup} with tool-call markup in the prompt, ${t.contentMarkup} in the completion's content, ${t.structuredCalls} as structured calls`);
    out.push(...accountingText('completion', j.accounting.completion), ...accountingText('prompt', j.accounting.prompt));
    for (const [why, n] of Object.entries(j.accounting.prompt.skipped)) out.push(`  no prompt ids for ${n}: ${why}`);
    const rules = Object.entries(j.findingsByRule);
    if (rules.length) out.push('', 'findings (samples per rule):', ...rules.map(([rule, n]) => `  ${pad(n, 7)}  ${rule}`));
    return out.join('\n');
  }
}

function countTools(t: ToolCounts, s: LineStats): void {
  t.samples++;
  if (s.tools) t.withTools++;
  if (s.promptMarkup) t.promptMarkup++;
  if (s.contentMarkup) t.contentMarkup++;
  if (s.structuredCalls) t.structuredCalls++;
}

/** `percent`: for completions counted vs billed (in % of billed); for prompts billed vs rendered (in % of rendered). */
function accountingJson(a: Accounting, difference: 'counted − billed' | 'billed − rendered') {
  const [x, base] = difference === 'counted − billed' ? [a.counted, a.billed] : [a.billed, a.counted];
  return {
    compared: a.compared,
    exact: a.exact,
    difference,
    differences: a.differences,
    counted: a.counted,
    billed: a.billed,
    percent: base ? Math.round(((x - base) / base) * 1e5) / 1e3 : null,
  };
}

function accountingText(what: string, a: ReturnType<typeof accountingJson>): string[] {
  if (!a.compared) return ['', `${what} accounting: no sample with both a ${what === 'prompt' ? 'rendered prompt' : 'count'} and billed usage`];
  const sign = a.percent !== null && a.percent > 0 ? '+' : '';
  const dist = Object.entries(a.differences)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ');
  return [
    '',
    `${what} accounting: ${a.exact} of ${a.compared} exact; ${a.counted} ${what === 'prompt' ? 'rendered' : 'counted'} vs ${a.billed} billed (${sign}${a.percent}%)`,
    `  differences (${a.difference}): ${dist}`,
  ];
}

function inc(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

function pad(n: number, w: number): string {
  return String(n).padStart(w);
}
