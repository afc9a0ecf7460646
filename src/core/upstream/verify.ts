/**
 * Batch mode in the manner of the K2 Vendor Verifier: a JSONL of Chat Completions requests, each sent to one
 * OpenRouter provider (pinned, no fallbacks) and optionally to a reference provider, scored with K2VV's two metrics
 * and Tokenscope's findings per rule.
 */
import { getMaxListeners, setMaxListeners } from 'node:events';
import { UserError } from '../model';
import { evaluate, findingsByRule, type Evaluation } from './evaluate';
import { k2vvSummary, schemaAccuracy, triggerSimilarity, type K2vvSummary, type SchemaMetrics, type TriggerMetrics } from './metrics';
import { requireServed, type OpenRouterClient } from './openrouter';
import { runPool } from './pool';
import { runRequest, type RunOutcome } from './run';

/** K2VV's default. */
export const DEFAULT_VERIFY_CONCURRENCY = 5;

export interface K2vvRequests {
  requests: Record<string, unknown>[];
  /** Lines that are not a JSON object, with why (1-based line numbers). */
  skipped: { line: number; reason: string }[];
}

/** Reads a K2VV-style JSONL: one request body per line; the `_input` role becomes `system` as K2VV does. */
export function readK2vvJsonl(text: string): K2vvRequests {
  const out: K2vvRequests = { requests: [], skipped: [] };
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      out.skipped.push({ line: i + 1, reason: `not JSON (${(e as Error).message.split('\n')[0]})` });
      return;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Array.isArray((v as { messages?: unknown }).messages)) {
      out.skipped.push({ line: i + 1, reason: 'not a Chat Completions request (no messages array)' });
      return;
    }
    const req = v as Record<string, unknown> & { messages: { role?: unknown }[] };
    req.messages = req.messages.map((m) => (m && typeof m === 'object' && m.role === '_input' ? { ...m, role: 'system' } : m));
    out.requests.push(req);
  });
  return out;
}

export interface VerifyOptions {
  requests: Record<string, unknown>[];
  client: OpenRouterClient;
  provider: string;
  /** A provider to measure trigger similarity against (K2VV uses Moonshot's own API). */
  reference?: string;
  /** Overrides each request's `model`. */
  model?: string;
  concurrency?: number;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number; failed: number }) => void;
}

export interface VerifyItem extends Evaluation {
  /** 0-based position among the requests. */
  index: number;
  outcome: RunOutcome;
  reference?: Evaluation & { outcome: RunOutcome };
}

export interface VerifyReport {
  provider: string;
  reference?: string;
  total: number;
  cancelled: boolean;
  summary: K2vvSummary;
  schema: SchemaMetrics;
  /** Present with a reference. */
  trigger?: TriggerMetrics;
  findingsByRule: Record<string, number>;
  items: VerifyItem[];
}

export async function verifyProvider(opts: VerifyOptions): Promise<VerifyReport> {
  const jobs = opts.requests.map((body, index) => ({ index, body: opts.model ? { ...body, model: opts.model } : body }));
  if (jobs.some((j) => typeof j.body.model !== 'string')) throw new UserError('some requests name no model: pass --model');
  const slugs = opts.reference ? [opts.provider, opts.reference] : [opts.provider];
  for (const model of new Set(jobs.map((j) => j.body.model as string))) {
    // Without the live list (OpenRouter unreachable, model unknown) the requests themselves will say why.
    const endpoints = await opts.client.endpoints(model, opts.signal).catch(() => []);
    requireServed(endpoints, slugs, model);
  }
  const items: VerifyItem[] = [];
  // Every request in flight listens on the caller's signal: more than Node's default warning threshold of 10.
  if (opts.signal)
    setMaxListeners(Math.max(getMaxListeners(opts.signal), 4 * (opts.concurrency ?? DEFAULT_VERIFY_CONCURRENCY) + 10), opts.signal);
  const progress = { done: 0, total: jobs.length, failed: 0 };
  opts.onProgress?.({ ...progress });
  const send = (provider: string, body: Record<string, unknown>) =>
    runRequest({ kind: 'openrouter', provider }, body, { openrouter: opts.client, signal: opts.signal });

  await runPool(
    jobs,
    opts.concurrency ?? DEFAULT_VERIFY_CONCURRENCY,
    async ({ index, body }) => {
      const [outcome, ref] = await Promise.all([send(opts.provider, body), opts.reference ? send(opts.reference, body) : undefined]);
      items.push({
        index,
        outcome,
        ...evaluate(outcome, body.tools),
        ...(ref && { reference: { outcome: ref, ...evaluate(ref, body.tools) } }),
      });
      progress.done++;
      if (!outcome.ok) progress.failed++;
      opts.onProgress?.({ ...progress });
    },
    opts.signal,
  );
  items.sort((a, b) => a.index - b.index);
  return {
    provider: opts.provider,
    reference: opts.reference,
    total: jobs.length,
    cancelled: !!opts.signal?.aborted,
    summary: k2vvSummary(items.map((i) => ({ ok: i.outcome.ok, finishReason: i.finishReason, toolCallsValid: i.toolCallsValid }))),
    schema: schemaAccuracy(items),
    trigger: opts.reference
      ? triggerSimilarity(items.map((i) => ({ reference: i.reference?.finishReason, candidate: i.finishReason })))
      : undefined,
    findingsByRule: findingsByRule(items),
    items,
  };
}

/** Pass marks for `verify`: shares from 0 to 1. */
export interface VerifyThresholds {
  /** Lowest acceptable ToolCall-Trigger F1 against the reference. */
  minF1?: number;
  /** Lowest acceptable ToolCall-Schema accuracy. */
  minSchema?: number;
}

/** A threshold as the user writes it: a share (`0.95`) or a percentage (`95%`); anything else is a UserError. */
export function parseThreshold(text: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)\s*$/.exec(text);
  const v = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!(v >= 0 && v <= 1)) throw new UserError(`${flag} takes a share from 0 to 1 (0.95) or a percentage (95%); got "${text}"`);
  return v;
}

const pct = (v: number) => `${Math.round(v * 1000) / 10}%`;

/**
 * Why the verified provider falls short of the thresholds, in one line (undefined: it meets them). A metric that
 * cannot be computed fails its threshold: a provider whose every call failed has no `tool_calls` finish to score,
 * and that must not pass as "no schema error".
 */
export function thresholdFailure(r: VerifyReport, t: VerifyThresholds): string | undefined {
  const failed = r.summary.failureCount;
  const requests = `${failed} of ${r.total} request${r.total === 1 ? '' : 's'} failed`;
  const reasons: string[] = [];
  if (t.minSchema !== undefined) {
    const a = r.schema.accuracy;
    if (a === null)
      reasons.push(`schema accuracy n/a, below --min-schema ${pct(t.minSchema)}: no response finished with tool_calls (${requests})`);
    else if (a < t.minSchema)
      reasons.push(
        `schema accuracy ${pct(a)} (${r.schema.successful}/${r.schema.finishToolCalls} tool_calls finishes valid) below --min-schema ${pct(t.minSchema)}`,
      );
  }
  if (t.minF1 !== undefined && r.trigger) {
    const f1 = r.trigger.f1;
    if (f1 === null)
      reasons.push(
        `trigger F1 n/a, below --min-f1 ${pct(t.minF1)}: neither ${r.provider} nor ${r.reference} finished with tool_calls (${requests})`,
      );
    else if (f1 < t.minF1)
      reasons.push(
        `trigger F1 ${pct(f1)} vs ${r.reference} below --min-f1 ${pct(t.minF1)} (tp ${r.trigger.tp}, fp ${r.trigger.fp}, fn ${r.trigger.fn})`,
      );
  }
  return reasons.length ? `${r.provider}: ${reasons.join('; ')}` : undefined;
}
