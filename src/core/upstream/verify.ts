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
  if (opts.signal) setMaxListeners(Math.max(getMaxListeners(opts.signal), 4 * (opts.concurrency ?? DEFAULT_VERIFY_CONCURRENCY) + 10), opts.signal);
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
    trigger: opts.reference ? triggerSimilarity(items.map((i) => ({ reference: i.reference?.finishReason, candidate: i.finishReason }))) : undefined,
    findingsByRule: findingsByRule(items),
    items,
  };
}
