/**
 * `tokens --merge-summaries`: the JSON summaries of the shards of one input (`tokens --batch … --shard K/N
 * --summary-out FILE`) folded into the summary a single run over the whole input gives: the same counts, accounting,
 * findings by rule, per-dataset rows, first bad lines, and rows in the same order. Every shard of the run must be
 * there, once: a missing or repeated shard (a task that ran twice) would give figures no single run gives, so it is
 * an error, never a silent sum.
 */
import { UserError } from '../../model';
import { BAD_LINES_KEPT, BatchSummary, BUCKETS, type ShardInfo, type SummaryCounts } from './summary';

export interface SummaryPart {
  /** The file it came from, for messages. */
  name: string;
  /** Its parsed JSON. */
  value: unknown;
}

export interface MergedSummary {
  summary: BatchSummary;
  /** Some shard was stopped before the end of its input (Ctrl-C): the figures cover what it finished. */
  interrupted: boolean;
}

type Obj = Record<string, unknown>;
type ToolCounts = SummaryCounts['tools'];
type Accounting = SummaryCounts['completion'];

const TOOL_FIELDS = ['withTools', 'promptMarkup', 'contentMarkup', 'structuredCalls'] as const;

/** One shard's summary JSON read back into counts, checked field by field (a file may hold anything). */
export function readSummary(part: SummaryPart): { counts: SummaryCounts; shard: ShardInfo; interrupted: boolean } {
  const bad = (what: string) => new UserError(`${part.name} is not a tokens --batch summary: ${what}`);
  const obj = (v: unknown, what: string): Obj => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`${what} is missing or not an object`);
    return v as Obj;
  };
  const count = (v: unknown, what: string): number => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw bad(`${what} is missing or not a count`);
    return v;
  };
  const counts = (v: unknown, what: string): Map<string, number> =>
    new Map(Object.entries(obj(v, what)).map(([k, n]) => [k, count(n, `${what}.${k}`)]));

  const j = obj(part.value, 'the file');
  if (j.shard === undefined || j.firstSeen === undefined) {
    throw bad('it has no "shard" and "firstSeen" (written by an earlier Tokenscope, or not by tokens --batch --summary-out / --json)');
  }
  const lines = obj(j.lines, 'lines');
  const processed = count(lines.processed, 'lines.processed');
  const nBad = count(lines.bad, 'lines.bad');
  const blank = count(lines.blank, 'lines.blank');
  if (count(lines.read, 'lines.read') !== processed + nBad + blank) throw bad('lines.read is not processed + bad + blank');
  if (!Array.isArray(j.badLines) || j.badLines.length > BAD_LINES_KEPT) throw bad('badLines is not a list of at most ten lines');
  const badLines = j.badLines.map((b, i) => {
    const o = obj(b, `badLines[${i}]`);
    if (typeof o.error !== 'string') throw bad(`badLines[${i}].error is not a text`);
    return { line: count(o.line, `badLines[${i}].line`), error: o.error };
  });

  const samples = obj(j.samples, 'samples');
  const toolCalls = obj(j.toolCalls, 'toolCalls');
  const tools: ToolCounts = {
    samples: count(samples.total, 'samples.total'),
    withTools: 0,
    promptMarkup: 0,
    contentMarkup: 0,
    structuredCalls: 0,
  };
  for (const f of TOOL_FIELDS) tools[f] = count(toolCalls[f], `toolCalls.${f}`);
  const byDataset = new Map<string, ToolCounts>();
  for (const [name, v] of Object.entries(obj(toolCalls.byDataset, 'toolCalls.byDataset'))) {
    const d = obj(v, `toolCalls.byDataset.${name}`);
    byDataset.set(name, {
      samples: count(d.samples, `toolCalls.byDataset.${name}.samples`),
      ...(Object.fromEntries(TOOL_FIELDS.map((f) => [f, count(d[f], `toolCalls.byDataset.${name}.${f}`)])) as Omit<ToolCounts, 'samples'>),
    });
  }
  // Samples without a dataset field: every sample is counted once in all and once in its dataset's row or here.
  const noDataset = { ...tools };
  for (const d of byDataset.values()) for (const f of ['samples', ...TOOL_FIELDS] as const) noDataset[f] -= d[f];
  if (Object.values(noDataset).some((n) => n < 0) || noDataset.samples !== count(samples.withoutDataset, 'samples.withoutDataset')) {
    throw bad('the per-dataset rows do not add up to the totals');
  }

  const accounting = obj(j.accounting, 'accounting');
  const readAccounting = (what: 'completion' | 'prompt'): Accounting => {
    const a = obj(accounting[what], `accounting.${what}`);
    const d = obj(a.differences, `accounting.${what}.differences`);
    return {
      compared: count(a.compared, `accounting.${what}.compared`),
      exact: count(a.exact, `accounting.${what}.exact`),
      differences: Object.fromEntries(BUCKETS.map((b) => [b, count(d[b], `accounting.${what}.differences["${b}"]`)])),
      counted: count(a.counted, `accounting.${what}.counted`),
      billed: count(a.billed, `accounting.${what}.billed`),
    };
  };
  const completion = readAccounting('completion');
  const prompt = readAccounting('prompt');
  const promptSkipped = counts(obj(accounting.prompt, 'accounting.prompt').skipped, 'accounting.prompt.skipped');
  const findingsByRule = counts(j.findingsByRule, 'findingsByRule');
  const families = counts(j.families, 'families');

  const first = obj(j.firstSeen, 'firstSeen');
  const firstSeen = {
    datasets: counts(first.datasets, 'firstSeen.datasets'),
    families: counts(first.families, 'firstSeen.families'),
    rules: counts(first.rules, 'firstSeen.rules'),
    promptSkipped: counts(first.promptSkipped, 'firstSeen.promptSkipped'),
  };
  for (const [kind, m] of [
    ['datasets', byDataset],
    ['families', families],
    ['rules', findingsByRule],
    ['promptSkipped', promptSkipped],
  ] as const) {
    for (const k of m.keys()) if (!firstSeen[kind].has(k)) throw bad(`firstSeen.${kind} lacks "${k}"`);
  }

  const s = obj(j.shard, 'shard');
  const shard: ShardInfo = {
    index: count(s.index, 'shard.index'),
    count: count(s.count, 'shard.count'),
    inputLines: count(s.inputLines, 'shard.inputLines'),
  };
  if (shard.count < 1 || shard.index >= shard.count) throw bad(`shard ${shard.index}/${shard.count} is not a shard`);
  if (j.interrupted !== undefined && typeof j.interrupted !== 'boolean') throw bad('interrupted is not true or false');
  return {
    counts: {
      lines: processed + nBad,
      blank,
      bad: nBad,
      badLines,
      tools,
      byDataset,
      noDataset,
      withPromptIds: count(lines.withPromptIds, 'lines.withPromptIds'),
      completion,
      prompt,
      promptSkipped,
      findingsByRule,
      families,
      firstSeen,
    },
    shard,
    interrupted: j.interrupted === true,
  };
}

/**
 * The shards' summaries folded into one: that of a single run over the whole input. Every shard K/N of one N must be
 * there exactly once, and (unless one was interrupted) all must have read the same number of input lines.
 */
export function mergeShardSummaries(parts: readonly SummaryPart[]): MergedSummary {
  if (!parts.length) throw new UserError('--merge-summaries needs the summary files of the shards (A.json B.json …)');
  const read = parts.map((p) => ({ name: p.name, ...readSummary(p) }));
  const n = read[0].shard.count;
  const byIndex = new Map<number, string>();
  for (const r of read) {
    if (r.shard.count !== n) {
      throw new UserError(
        `${read[0].name} is shard ${read[0].shard.index}/${n} but ${r.name} is shard ${r.shard.index}/${r.shard.count}: merge the shards of one split`,
      );
    }
    const twice = byIndex.get(r.shard.index);
    if (twice !== undefined) throw new UserError(`${twice} and ${r.name} are both shard ${r.shard.index}/${n}: give each shard once`);
    byIndex.set(r.shard.index, r.name);
  }
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length) {
    const shown = missing
      .slice(0, 5)
      .map((i) => `${i}/${n}`)
      .join(', ');
    throw new UserError(
      `shard${missing.length > 1 ? 's' : ''} ${shown}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''} missing: merge every shard of the split`,
    );
  }
  const interrupted = read.some((r) => r.interrupted);
  if (!interrupted) {
    const other = read.find((r) => r.shard.inputLines !== read[0].shard.inputLines);
    if (other) {
      throw new UserError(
        `${read[0].name} read ${read[0].shard.inputLines} input lines but ${other.name} read ${other.shard.inputLines}: the shards were not run over the same input`,
      );
    }
  }
  const summary = new BatchSummary();
  for (const r of read) summary.merge(r.counts);
  summary.shard = { index: 0, count: 1, inputLines: Math.max(...read.map((r) => r.shard.inputLines)) };
  return { summary, interrupted };
}
