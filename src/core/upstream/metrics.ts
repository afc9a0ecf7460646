/**
 * The K2 Vendor Verifier's two metrics (MoonshotAI/K2-Vendor-Verifier `tool_calls_eval.py`; landscape.md §1.1),
 * computed the same way, as pure functions:
 *
 * - ToolCall-Trigger Similarity: per request, compare the candidate's `finish_reason` with the reference's.
 *   TP both `tool_calls`; FP only the candidate; FN only the reference; TN neither. precision = TP/(TP+FP),
 *   recall = TP/(TP+FN), F1 their harmonic mean. A failed request has no finish reason, so it is "not tool_calls".
 * - ToolCall-Schema Accuracy: among responses with `finish_reason == "tool_calls"`, the share whose tool calls are
 *   all valid: a non-empty list, each call's tool found by name with a non-empty schema, arguments that parse as
 *   JSON, and pass JSON Schema validation. A `tool_calls` finish with no calls counts as a failure.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';

/** `undefined` / `null`: the request failed (K2VV's `finish_reason: None`). */
export type FinishReason = string | null | undefined;

export interface TriggerMetrics {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  /** Null when undefined (no positive prediction / no positive reference). */
  precision: number | null;
  recall: number | null;
  /** 2·TP / (2·TP + FP + FN), the harmonic mean of precision and recall; null when every pair is TN. */
  f1: number | null;
}

/** Trigger similarity over pairs of (reference, candidate) finish reasons for the same request. */
export function triggerSimilarity(pairs: readonly { reference: FinishReason; candidate: FinishReason }[]): TriggerMetrics {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (const { reference, candidate } of pairs) {
    const r = reference === 'tool_calls';
    const c = candidate === 'tool_calls';
    if (r && c) tp++;
    else if (c) fp++;
    else if (r) fn++;
    else tn++;
  }
  return {
    tp,
    fp,
    fn,
    tn,
    precision: tp + fp > 0 ? tp / (tp + fp) : null,
    recall: tp + fn > 0 ? tp / (tp + fn) : null,
    f1: 2 * tp + fp + fn > 0 ? (2 * tp) / (2 * tp + fp + fn) : null,
  };
}

export interface SchemaMetrics {
  /** K2VV `count_finish_reason_tool_calls`. */
  finishToolCalls: number;
  /** K2VV `count_successful_tool_call`. */
  successful: number;
  /** K2VV `schema_validation_error_count`. */
  failed: number;
  /** successful / finishToolCalls; null when no response finished with `tool_calls`. */
  accuracy: number | null;
}

/** Schema accuracy over responses: their finish reason and whether their tool calls are all valid. */
export function schemaAccuracy(results: readonly { finishReason: FinishReason; toolCallsValid?: boolean }[]): SchemaMetrics {
  let finishToolCalls = 0;
  let successful = 0;
  for (const r of results) {
    if (r.finishReason !== 'tool_calls') continue;
    finishToolCalls++;
    if (r.toolCallsValid === true) successful++;
  }
  return {
    finishToolCalls,
    successful,
    failed: finishToolCalls - successful,
    accuracy: finishToolCalls ? successful / finishToolCalls : null,
  };
}

/** A tool call as the metrics read it (`function.name`, `function.arguments`). */
export interface CallForMetrics {
  name: string;
  /** JSON text as received (or an already-parsed object, which K2VV also accepts). */
  arguments: unknown;
}

/**
 * K2VV's `tool_calls_valid`: true when every call is valid, false when one is not; undefined when there are no
 * calls (K2VV leaves it `None`, which its summary counts as a schema failure for a `tool_calls` finish).
 * `tools` is the request's `tools` array as sent (`[{type, function: {name, parameters}}]`).
 */
export function toolCallsValid(calls: readonly CallForMetrics[], tools: unknown): boolean | undefined {
  if (calls.length === 0) return undefined;
  return calls.every((c) => toolCallValid(c, tools));
}

export function toolCallValid(call: CallForMetrics, tools: unknown): boolean {
  const schema = schemaFor(call.name, tools);
  // K2VV: `if not schema` — a missing, null or empty schema fails the call.
  if (!schema || (typeof schema === 'object' && Object.keys(schema).length === 0)) return false;
  let args = call.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return false;
    }
  }
  if (schema === true) return true;
  const validate = validatorFor(schema);
  return validate !== undefined && validate(args) === true;
}

/** K2VV looks tools up in order by `function.name`; a tool without `function` before the match is a format error. */
function schemaFor(name: string, tools: unknown): unknown {
  if (!Array.isArray(tools)) return undefined;
  for (const t of tools) {
    const fn = (t as { function?: { name?: unknown; parameters?: unknown } })?.function;
    if (!fn || typeof fn !== 'object' || !('name' in fn)) return undefined;
    if (fn.name === name) return fn.parameters;
  }
  return undefined;
}

// K2VV calls `jsonschema.validate`, which picks the validator from `$schema` and defaults to draft 2020-12; formats
// are not asserted. An invalid schema raises there, so it fails the call here too.
const ajv2020 = new Ajv2020({ strict: false, validateFormats: false, logger: false });
const ajv07 = new Ajv({ strict: false, validateFormats: false, logger: false });
const cache = new Map<string, ValidateFunction | undefined>();

function validatorFor(schema: unknown): ValidateFunction | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const key = JSON.stringify(schema);
  if (cache.has(key)) return cache.get(key);
  const { $schema, ...rest } = schema as Record<string, unknown>;
  const engine = typeof $schema === 'string' && /draft-0[467]/.test($schema) ? ajv07 : ajv2020;
  let v: ValidateFunction | undefined;
  try {
    v = engine.compile(rest);
  } catch {
    v = undefined;
  }
  if (cache.size > 512) cache.delete(cache.keys().next().value as string);
  cache.set(key, v);
  return v;
}

/** K2VV's per-file summary (`compute_summary`), for one provider's results. */
export interface K2vvSummary {
  successCount: number;
  failureCount: number;
  finishStop: number;
  finishToolCalls: number;
  finishOthers: number;
  finishOthersDetail: Record<string, number>;
  successfulToolCallCount: number;
  schemaValidationErrorCount: number;
}

export function k2vvSummary(results: readonly { ok: boolean; finishReason: FinishReason; toolCallsValid?: boolean }[]): K2vvSummary {
  const s: K2vvSummary = {
    successCount: 0,
    failureCount: 0,
    finishStop: 0,
    finishToolCalls: 0,
    finishOthers: 0,
    finishOthersDetail: {},
    successfulToolCallCount: 0,
    schemaValidationErrorCount: 0,
  };
  for (const r of results) {
    if (r.ok) s.successCount++;
    else s.failureCount++;
    if (r.finishReason === 'stop') s.finishStop++;
    else if (r.finishReason === 'tool_calls') {
      s.finishToolCalls++;
      if (r.toolCallsValid) s.successfulToolCallCount++;
      else s.schemaValidationErrorCount++;
    } else if (r.finishReason) {
      s.finishOthers++;
      s.finishOthersDetail[r.finishReason] = (s.finishOthersDetail[r.finishReason] ?? 0) + 1;
    }
  }
  return s;
}
