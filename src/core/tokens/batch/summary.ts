/**
 * The summary of a `tokens --batch` run (constant memory: counters only, and the first few bad lines): samples per
 * dataset, tool-call markup in prompts, in completion content and as structured calls, completion and prompt
 * accounting against billed usage, findings by rule. Each worker counts the lines of a chunk into a summary of its
 * own and sends its `counts()` with the chunk's output; the runner merges them, so the whole run's summary is the one
 * a single pass over the lines in order would build, whatever the number of workers, and it covers exactly the lines
 * written.
 *
 * Merging never depends on the order the parts come in: every named row (dataset, family, rule, reason for no prompt
 * ids) keeps the number of the first input line it was seen on, and rows are listed in that order; bad lines are kept
 * by line number. So the summaries of the shards of one input (`--shard K/N`, written as JSON) fold into exactly the
 * summary a single run over the whole input gives (`mergeShardSummaries`): the JSON carries all that takes.
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

export const BUCKETS = ['< -10', '-10..-4', '-3', '-2', '-1', '0', '+1', '+2', '+3', '+4..+10', '> +10'];

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

/** The kinds of named rows, each with the first input line its names were seen on. */
type Named = 'datasets' | 'families' | 'rules' | 'promptSkipped';

/** Which lines of its input a run covered: `--shard index/count`, and how many input lines it went through in all. */
export interface ShardInfo {
  index: number;
  count: number;
  /** Lines of the whole input the run read (those of other shards too; blank ones too). */
  inputLines: number;
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
  /** Per kind of named row, the first input line each name was seen on (rows are listed in that order). */
  readonly firstSeen: Record<Named, Map<string, number>> = {
    datasets: new Map(),
    families: new Map(),
    rules: new Map(),
    promptSkipped: new Map(),
  };
  /** The lines of the input the run covered (set by the runner; a whole input is shard 0 of 1). */
  shard: ShardInfo = { index: 0, count: 1, inputLines: 0 };

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
      if (!d) {
        this.byDataset.set(s.dataset, (d = emptyTools()));
        seen(this.firstSeen.datasets, s.dataset, r.line);
      }
      countTools(d, s);
    } else countTools(this.noDataset, s);
    this.inc('families', this.families, s.family ?? 'unknown', r.line);
    account(this.completion, s.completion.counted, s.completion.billed, s.completion.counted - (s.completion.billed ?? 0));
    if (s.prompt) this.withPromptIds++;
    if (s.prompt) account(this.prompt, s.prompt.counted, s.prompt.billed, (s.prompt.billed ?? 0) - s.prompt.counted);
    if (s.promptSkipped) this.inc('promptSkipped', this.promptSkipped, s.promptSkipped, r.line);
    for (const rule of s.rules) this.inc('rules', this.findingsByRule, rule, r.line);
  }

  private inc(kind: Named, m: Map<string, number>, k: string, line: number): void {
    const n = m.get(k);
    if (n === undefined) seen(this.firstSeen[kind], k, line);
    m.set(k, (n ?? 0) + 1);
  }

  /** The counts as plain data (structured-cloneable: a worker posts them). */
  counts(): SummaryCounts {
    const {
      lines,
      blank,
      bad,
      badLines,
      tools,
      byDataset,
      noDataset,
      withPromptIds,
      completion,
      prompt,
      promptSkipped,
      findingsByRule,
      families,
      firstSeen,
    } = this;
    return {
      lines,
      blank,
      bad,
      badLines,
      tools,
      byDataset,
      noDataset,
      withPromptIds,
      completion,
      prompt,
      promptSkipped,
      findingsByRule,
      families,
      firstSeen,
    };
  }

  /** Adds the counts of other lines (a chunk's, or another shard's), in any order: the result is the same. */
  merge(c: SummaryCounts): void {
    this.lines += c.lines;
    this.blank += c.blank;
    this.bad += c.bad;
    if (c.badLines.length) {
      const all = [...this.badLines, ...c.badLines].sort((a, b) => a.line - b.line).slice(0, BAD_LINES_KEPT);
      this.badLines.splice(0, this.badLines.length, ...all);
    }
    addTools(this.tools, c.tools);
    for (const [k, v] of c.byDataset) {
      let d = this.byDataset.get(k);
      if (!d) this.byDataset.set(k, (d = emptyTools()));
      addTools(d, v);
    }
    addTools(this.noDataset, c.noDataset);
    this.withPromptIds += c.withPromptIds;
    addAccounting(this.completion, c.completion);
    addAccounting(this.prompt, c.prompt);
    for (const [m, from] of [
      [this.promptSkipped, c.promptSkipped],
      [this.findingsByRule, c.findingsByRule],
      [this.families, c.families],
    ] as const) {
      for (const [k, n] of from) m.set(k, (m.get(k) ?? 0) + n);
    }
    for (const kind of NAMED) for (const [k, line] of c.firstSeen[kind]) seen(this.firstSeen[kind], k, line);
  }

  /** `m`'s entries in the order of the input line each was first seen on. */
  private ordered<V>(kind: Named, m: ReadonlyMap<string, V>): [string, V][] {
    const first = this.firstSeen[kind];
    return [...m].sort((a, b) => (first.get(a[0]) ?? Infinity) - (first.get(b[0]) ?? Infinity));
  }

  toJSON() {
    const datasets = this.ordered('datasets', this.byDataset);
    return {
      lines: {
        read: this.lines + this.blank,
        processed: this.lines - this.bad,
        bad: this.bad,
        blank: this.blank,
        withPromptIds: this.withPromptIds,
      },
      badLines: this.badLines,
      samples: {
        total: this.tools.samples,
        byDataset: Object.fromEntries(datasets.map(([k, v]) => [k, v.samples])),
        withoutDataset: this.noDataset.samples,
      },
      families: Object.fromEntries(this.ordered('families', this.families)),
      toolCalls: {
        withTools: this.tools.withTools,
        promptMarkup: this.tools.promptMarkup,
        contentMarkup: this.tools.contentMarkup,
        structuredCalls: this.tools.structuredCalls,
        byDataset: Object.fromEntries(datasets.map(([k, v]) => [k, { ...v }])),
      },
      accounting: {
        completion: accountingJson(this.completion, 'counted − billed'),
        prompt: {
          ...accountingJson(this.prompt, 'billed − rendered'),
          skipped: Object.fromEntries(this.ordered('promptSkipped', this.promptSkipped)),
        },
      },
      // By samples, most first; rules with as many samples in the order they were first seen.
      findingsByRule: Object.fromEntries(this.ordered('rules', this.findingsByRule).sort((a, b) => b[1] - a[1])),
      // What merging the summaries of shards takes beyond the figures above.
      shard: { ...this.shard },
      firstSeen: Object.fromEntries(NAMED.map((kind) => [kind, Object.fromEntries(this.ordered(kind, this.firstSeen[kind]))])) as Record<
        Named,
        Record<string, number>
      >,
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
        out.push(
          `  ${name.slice(0, 26).padEnd(26)} ${pad(d.samples, 8)} ${pad(d.withTools, 6)} ${pad(d.promptMarkup, 14)} ${pad(d.contentMarkup, 15)} ${pad(d.structuredCalls, 17)}`,
        );
      }
    }
    const t = j.toolCalls;
    out.push(
      '',
      `tool calls: ${t.withTools} offer tools, ${t.promptMarkup} with tool-call markup in the prompt, ${t.contentMarkup} in the completion's content, ${t.structuredCalls} as structured calls`,
    );
    out.push(...accountingText('completion', j.accounting.completion), ...accountingText('prompt', j.accounting.prompt));
    for (const [why, n] of Object.entries(j.accounting.prompt.skipped)) out.push(`  no prompt ids for ${n}: ${why}`);
    const rules = Object.entries(j.findingsByRule);
    if (rules.length) out.push('', 'findings (samples per rule):', ...rules.map(([rule, n]) => `  ${pad(n, 7)}  ${rule}`));
    return out.join('\n');
  }
}

const NAMED: readonly Named[] = ['datasets', 'families', 'rules', 'promptSkipped'];

/** Keeps the earliest line a name was seen on. */
function seen(m: Map<string, number>, k: string, line: number): void {
  const was = m.get(k);
  if (was === undefined || line < was) m.set(k, line);
}

/** What `BatchSummary.counts()` gives and `merge` takes. */
export interface SummaryCounts {
  lines: number;
  blank: number;
  bad: number;
  badLines: readonly { line: number; error: string }[];
  tools: ToolCounts;
  byDataset: ReadonlyMap<string, ToolCounts>;
  noDataset: ToolCounts;
  withPromptIds: number;
  completion: Accounting;
  prompt: Accounting;
  promptSkipped: ReadonlyMap<string, number>;
  findingsByRule: ReadonlyMap<string, number>;
  families: ReadonlyMap<string, number>;
  firstSeen: Readonly<Record<Named, ReadonlyMap<string, number>>>;
}

function addTools(t: ToolCounts, from: ToolCounts): void {
  t.samples += from.samples;
  t.withTools += from.withTools;
  t.promptMarkup += from.promptMarkup;
  t.contentMarkup += from.contentMarkup;
  t.structuredCalls += from.structuredCalls;
}

function addAccounting(a: Accounting, from: Accounting): void {
  a.compared += from.compared;
  a.exact += from.exact;
  for (const b of BUCKETS) a.differences[b] += from.differences[b];
  a.counted += from.counted;
  a.billed += from.billed;
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
  if (!a.compared)
    return ['', `${what} accounting: no sample with both a ${what === 'prompt' ? 'rendered prompt' : 'count'} and billed usage`];
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

function pad(n: number, w: number): string {
  return String(n).padStart(w);
}
