/** One outcome as the K2 Vendor Verifier metrics and Tokenscope's findings see it (shared by compare and verify). */
import type { Severity } from '../model';
import { toolCallsValid, type FinishReason } from './metrics';
import type { RunOutcome } from './run';

export interface Evaluation {
  /** Finish reason as K2VV sees it: undefined for a failed request (no answer, HTTP error, error event, cancelled). */
  finishReason: FinishReason;
  /** K2VV `tool_calls_valid`, judged only for a `tool_calls` finish (undefined otherwise or without calls). */
  toolCallsValid?: boolean;
  findings: { rule: string; severity: Severity }[];
}

/**
 * K2VV reads a stream's last finish reason and defaults to "stop"; the OpenAI SDK it uses raises on an error event,
 * which makes the request a failure.
 */
export function metricFinishReason(o: RunOutcome): FinishReason {
  const r = o.response;
  if (o.cancelled || !r || o.status === undefined || o.status < 200 || o.status >= 300 || r.error) return undefined;
  return r.finishReason ?? (r.streamed ? 'stop' : undefined);
}

/** `tools` is the request's `tools` array as sent. */
export function evaluate(o: RunOutcome, tools: unknown): Evaluation {
  const finishReason = metricFinishReason(o);
  return {
    finishReason,
    toolCallsValid: finishReason === 'tool_calls' ? toolCallsValid(o.response?.message.toolCalls ?? [], tools) : undefined,
    findings: (o.analysis?.findings ?? []).map((f) => ({ rule: f.rule, severity: f.severity })),
  };
}

/** Rule id → how many of the evaluations have at least one finding of it. */
export function findingsByRule(evaluations: readonly Pick<Evaluation, 'findings'>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of evaluations) for (const rule of new Set(e.findings.map((f) => f.rule))) out[rule] = (out[rule] ?? 0) + 1;
  return out;
}
