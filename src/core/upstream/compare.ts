/**
 * "Is it the model or the provider?": one request sent N times to every OpenRouter provider of a model (each pinned,
 * no fallbacks), with bounded concurrency, cancellable, results reported as each sample finishes.
 *
 * Per provider: the provider that really served (from the chunks' `provider` field and generation stats, checked
 * against the endpoint list, never assumed from the pin), finish reasons, the K2 Vendor Verifier's trigger
 * similarity against a reference provider and schema accuracy (./metrics.ts), Tokenscope's findings by rule, time to
 * first token, tokens/s and cost. Failed requests are results too. With a store, each sample is a capture and each
 * provider's verdict is kept as the model × provider's last comparison (./compare-verdicts.ts).
 */
import { getMaxListeners, setMaxListeners } from 'node:events';
import type { CaptureStore } from '../capture/store';
import { promptTokenFinding } from '../checks/prompt-token-mismatch';
import { UserError } from '../model';
import { pinHonoured } from '../proxy/openrouter';
import { isAbort, sleep } from './http';
import { evaluate, findingsByRule, type Evaluation } from './evaluate';
import { schemaAccuracy, triggerSimilarity, type SchemaMetrics, type TriggerMetrics } from './metrics';
import { entriesFromEndpoints, requireServed, type GenerationStats, type OpenRouterClient, type ProviderEndpoint } from './openrouter';
import { runPool } from './pool';
import { comparisonVerdicts } from './compare-verdicts';
import { runRequest, type RunOutcome } from './run';

export const DEFAULT_SAMPLES = 3;
/**
 * Requests in flight at once. High enough that 10 providers × 3 samples run in one wave (the wall time is the
 * slowest request, not a sum), low enough not to flood OpenRouter.
 */
export const DEFAULT_CONCURRENCY = 32;

export interface CompareOptions {
  /** The Chat Completions body to send (a capture's request body, or a file's). */
  request: Record<string, unknown>;
  client: OpenRouterClient;
  /** Overrides the body's `model`. */
  model?: string;
  /** Provider slugs; default: every provider serving the model right now. */
  providers?: string[];
  samples?: number;
  concurrency?: number;
  /** Slug whose answers the trigger similarity is measured against; default: the first provider. */
  reference?: string;
  /** Records every sample as an exchange (linked to `parentId` when given). */
  store?: CaptureStore;
  parentId?: string;
  /** Aborting stops queued samples and aborts those in flight (they come back as cancelled results). */
  signal?: AbortSignal;
  onProgress?: (p: CompareProgress) => void;
  /** Each sample as it finishes, with its provider's updated row. */
  onSample?: (sample: SampleResult, provider: ProviderResult) => void;
  /** Ask `/generation` who served each sample (default true). */
  generationStats?: boolean;
  /** The request's prompt length as the model's own chat template renders it: each sample's bill is checked against it. */
  promptTokens?: number;
}

export interface CompareProgress {
  done: number;
  total: number;
  running: number;
  failed: number;
}

export interface SampleResult extends Evaluation {
  provider: string;
  /** 0-based sample number; sample k is paired with the reference's sample k. */
  sample: number;
  outcome: RunOutcome;
  /** Who served it: generation stats `provider_name`, else the chunks' `provider`. */
  servedBy?: string;
  generation?: GenerationStats;
  /** The served provider is the pinned one (undefined when nobody is named: failed before any chunk). */
  verified?: boolean;
}

export interface ProviderResult {
  slug: string;
  /** Display name from the endpoint list (the slug when unknown). */
  name: string;
  endpoint?: ProviderEndpoint;
  total: number;
  done: number;
  failed: number;
  samples: SampleResult[];
  /** Distinct served-provider names seen. */
  servedBy: string[];
  /** Every named sample was served by this provider; false when any was served by another; undefined when none named. */
  verified?: boolean;
  /** Finish reasons as reported (`error`, `failed` when no response at all, `cancelled`). */
  finishReasons: Record<string, number>;
  trigger: TriggerMetrics;
  schema: SchemaMetrics;
  /** Rule id → number of samples with at least one finding of it. */
  findingsByRule: Record<string, number>;
  /** Medians over samples that have them; cost is USD per request. */
  ttftMs?: number;
  tokensPerSecond?: number;
  costUsd?: number;
}

export interface CompareReport {
  model: string;
  reference: string;
  samples: number;
  concurrency: number;
  cancelled: boolean;
  wallMs: number;
  providers: ProviderResult[];
}

export async function compareProviders(opts: CompareOptions): Promise<CompareReport> {
  const model = opts.model ?? (typeof opts.request.model === 'string' ? opts.request.model : undefined);
  if (!model) throw new UserError('the request names no model: pass --model');
  const samples = Math.max(1, Math.floor(opts.samples ?? DEFAULT_SAMPLES));
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? DEFAULT_CONCURRENCY));
  const t0 = performance.now();
  // Every request in flight listens on the caller's signal: more than Node's default warning threshold of 10.
  if (opts.signal) setMaxListeners(Math.max(getMaxListeners(opts.signal), 4 * concurrency + 10), opts.signal);

  let endpoints: ProviderEndpoint[] = [];
  try {
    endpoints = await opts.client.endpoints(model, opts.signal);
  } catch (e) {
    if (isAbort(e, opts.signal)) throw new UserError('cancelled before any request was sent', 130);
    // With an explicit provider list the comparison still runs; display names are then unknown.
    if (!opts.providers?.length) throw e;
  }
  opts.store?.learnProviderSlugs(entriesFromEndpoints(endpoints));
  const slugs = opts.providers?.length ? [...new Set(opts.providers)] : endpoints.map((e) => e.slug);
  if (slugs.length === 0) throw new UserError(`no provider serves ${model} on OpenRouter right now`);
  requireServed(endpoints, slugs, model);
  const reference = opts.reference ?? slugs[0];
  if (!slugs.includes(reference)) throw new UserError(`the reference provider "${reference}" is not among the compared providers`);

  const body = { ...opts.request, model };
  const tools = opts.request.tools;
  const rows = new Map<string, ProviderResult>();
  for (const slug of slugs) {
    const endpoint = endpoints.find((e) => e.slug === slug);
    rows.set(slug, emptyRow(slug, endpoint, samples));
  }

  const queue: { slug: string; sample: number }[] = [];
  // Sample-major order: every provider gets its first sample before anyone gets a second.
  for (let k = 0; k < samples; k++) for (const slug of slugs) queue.push({ slug, sample: k });
  const progress: CompareProgress = { done: 0, total: queue.length, running: 0, failed: 0 };
  opts.onProgress?.({ ...progress });

  const finishing: Promise<void>[] = [];
  const finish = async (slug: string, sample: number, outcome: RunOutcome) => {
    const row = rows.get(slug)!;
    const stats =
      opts.generationStats !== false && outcome.generationId
        ? await generationStats(opts.client, outcome.generationId, opts.signal)
        : undefined;
    const promptFinding = opts.promptTokens === undefined ? undefined : promptTokenFinding(opts.promptTokens, outcome.response?.usage);
    if (promptFinding) outcome.analysis?.findings.push(promptFinding);
    const s = sampleResult(slug, sample, outcome, row, stats, tools);
    row.samples.push(s);
    progress.done++;
    if (!outcome.ok) progress.failed++;
    recompute(rows, reference);
    opts.onSample?.(s, row);
    opts.onProgress?.({ ...progress });
  };

  await runPool(
    queue,
    concurrency,
    async (job) => {
      progress.running++;
      let outcome: RunOutcome;
      try {
        outcome = await runRequest({ kind: 'openrouter', provider: job.slug }, body, {
          openrouter: opts.client,
          store: opts.store,
          parentId: opts.parentId,
          signal: opts.signal,
        });
      } finally {
        progress.running--;
      }
      // Stats lookups happen outside the concurrency slot: they wait on OpenRouter, not on the provider.
      finishing.push(finish(job.slug, job.sample, outcome));
    },
    opts.signal,
  );
  await Promise.all(finishing);

  const report: CompareReport = {
    model,
    reference,
    samples,
    concurrency,
    cancelled: !!opts.signal?.aborted,
    wallMs: performance.now() - t0,
    providers: [...rows.values()],
  };
  // The scorecard's "last comparison": this run's verdict per provider (a cancelled run's judged samples count).
  opts.store?.putComparisons(comparisonVerdicts(report, Date.now(), opts.parentId));
  return report;
}

function emptyRow(slug: string, endpoint: ProviderEndpoint | undefined, total: number): ProviderResult {
  return {
    slug,
    name: endpoint?.name ?? slug,
    endpoint,
    total,
    done: 0,
    failed: 0,
    samples: [],
    servedBy: [],
    finishReasons: {},
    trigger: triggerSimilarity([]),
    schema: schemaAccuracy([]),
    findingsByRule: {},
  };
}

/** Generation stats appear "a few seconds after the request finishes" (§1.7): a few spaced tries. */
async function generationStats(client: OpenRouterClient, id: string, signal?: AbortSignal): Promise<GenerationStats | undefined> {
  for (let attempt = 0; attempt < 3 && !signal?.aborted; attempt++) {
    if (attempt > 0) await sleep(1000 * attempt, signal);
    try {
      const s = await client.generation(id, signal);
      if (s) return s;
    } catch {
      return undefined; // unreachable stats are not a failure of the sample
    }
  }
  return undefined;
}

function sampleResult(
  slug: string,
  sample: number,
  o: RunOutcome,
  row: ProviderResult,
  stats: GenerationStats | undefined,
  tools: unknown,
): SampleResult {
  const servedBy = stats?.providerName ?? o.servedProvider;
  const named = [o.servedProvider, stats?.providerName].filter((n): n is string => !!n);
  const matches = (n: string) => (row.endpoint ? n.toLowerCase() === row.endpoint.name.toLowerCase() : false) || pinHonoured([slug], n);
  return {
    provider: slug,
    sample,
    outcome: o,
    ...evaluate(o, tools),
    servedBy,
    generation: stats,
    verified: named.length ? named.every(matches) : undefined,
  };
}

/** Recomputes every row's aggregates (the reference's samples change the others' trigger similarity). */
function recompute(rows: Map<string, ProviderResult>, reference: string): void {
  const ref = rows.get(reference)!;
  for (const row of rows.values()) {
    const s = row.samples;
    row.done = s.length;
    row.failed = s.filter((x) => !x.outcome.ok).length;
    row.servedBy = [...new Set(s.map((x) => x.servedBy).filter((n): n is string => !!n))];
    const named = s.filter((x) => x.verified !== undefined);
    row.verified = named.length ? named.every((x) => x.verified) : undefined;
    row.finishReasons = {};
    for (const x of s) {
      const key = x.outcome.cancelled ? 'cancelled' : (x.outcome.response?.finishReason ?? (x.outcome.ok ? 'stop' : 'failed'));
      row.finishReasons[key] = (row.finishReasons[key] ?? 0) + 1;
    }
    // Pairs: this provider's sample k against the reference's sample k, once both have finished.
    const pairs = s.flatMap((x) => {
      const r = ref.samples.find((y) => y.sample === x.sample);
      return r ? [{ reference: r.finishReason, candidate: x.finishReason }] : [];
    });
    row.trigger = triggerSimilarity(pairs);
    row.schema = schemaAccuracy(s);
    row.findingsByRule = findingsByRule(s);
    row.ttftMs = median(s.map((x) => x.outcome.ttftMs));
    row.tokensPerSecond = median(s.map((x) => x.outcome.tokensPerSecond));
    row.costUsd = median(s.map((x) => x.generation?.totalCost ?? x.outcome.costUsd));
  }
}

function median(values: (number | undefined)[]): number | undefined {
  const v = values.filter((x): x is number => x !== undefined && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
