/**
 * From one stretch of leaked tool-call markup to the calls a correct server would have delivered.
 *
 * The family's own parser (families/) reads the markup; this module decides, call by call, whether it is
 * **complete** (its arguments are whole) or **truncated** (cut before its arguments ended). A complete call may be
 * delivered as a structured call even when its section end or call end is missing; a truncated one never is
 * (Kiro #11533, anton PR #342: a partial-JSON fix-up "cannot invent the value that never arrived").
 *
 * What "whole" means depends on how the family writes arguments:
 * - JSON families (the family's `repair.arguments` is `json`): the arguments parse as a JSON object. A JSON object only
 *   parses once its closing brace arrived, so a cut inside it is always caught, even without the call's end marker.
 * - Tagged families (`tagged`: XML parameters, pythonic keywords): the parser turns the pairs into JSON, so a cut
 *   inside a value would still give valid JSON. Such a call counts only when the parser saw it closed.
 */
import { createHash } from 'node:crypto';
import { validatorFor } from '../checks/schema-validators';
import type { FamilyId, FormatProblem, RepairRecord, ToolDef } from '../model';
import type { ModelFormat } from '../families/shared/format';
import { schemaArguments } from '../families/shared/schema-types';
import { getFamily } from '../families/index';

export interface RepairedCall {
  /** Position among the calls delivered in this turn (the structured `index`). */
  index: number;
  /** Canonical id for the family: Kimi `functions.NAME:IDX`, else `call_` + a digest of the turn and call. */
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text). */
  arguments: string;
  /** Where the markup was. */
  from: 'content' | 'reasoning';
  /** complete: arguments whole. truncated: cut before they ended (never delivered as a call). */
  state: 'complete' | 'truncated';
  /** Why a call is truncated, or why its arguments fail the request's schema (the call is still delivered: the agent answers that). */
  note?: string;
}

export interface CallContext {
  /** Tools the request offered (their schemas check the arguments). */
  tools: ToolDef[];
  /** Structured tool calls already in the request's history (Kimi numbers calls across the conversation). */
  historyCalls: number;
  /** A digest of the request's history: ids are stable when the same turn is delivered again. */
  seed: string;
  /** The protocol the calls are delivered in (absent: Chat Completions); Anthropic's ids allow fewer characters. */
  protocol?: RepairProtocol;
}

export type RepairProtocol = NonNullable<RepairRecord['protocol']>;

/**
 * Reads the calls of one markup stretch, and the plain text the stretch holds besides them (gpt-oss writes its
 * content inside channel markup). `firstIndex` is the next structured index of the turn.
 */
export function readCalls(
  format: ModelFormat,
  markup: string,
  from: 'content' | 'reasoning',
  firstIndex: number,
  ctx: CallContext,
): { calls: RepairedCall[]; text: string } {
  const parsed = format.parse(markup);
  const jsonFamily = getFamily(format.id).repair.arguments === 'json';
  const text = (from === 'reasoning' ? (parsed.message.reasoning ?? parsed.message.content) : parsed.message.content) ?? '';
  const calls = parsed.message.toolCalls.map((parsedCall, i): RepairedCall => {
    const index = firstIndex + i;
    // XML parameters typed by the request's schema, as vLLM and SGLang deliver them.
    const call = { ...parsedCall, arguments: schemaArguments(parsedCall, ctx.tools) };
    const problems = parsed.problems.filter((p) => p.callIndex === call.index);
    const cut = truncation(call.name, call.arguments, problems, jsonFamily);
    const id = canonicalId(format.id, call.name, call.id, index, ctx);
    if (cut) return { index, id, name: call.name, arguments: call.arguments, from, state: 'truncated', note: cut };
    const schema = schemaNote(call.name, call.arguments, ctx.tools);
    return { index, id, name: call.name, arguments: call.arguments, from, state: 'complete', ...(schema && { note: schema }) };
  });
  return { calls, text };
}

function truncation(name: string, args: string, problems: FormatProblem[], jsonFamily: boolean): string | undefined {
  if (!name) return 'the call has no function name';
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    return 'its arguments are not whole JSON (cut short)';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'its arguments are not a JSON object';
  if (!jsonFamily) {
    const open = problems.find((p) => p.code === 'call-unclosed' || p.code === 'marker-truncated' || p.code === 'malformed-call');
    if (open) return `the call was cut before its end (${open.message})`;
  }
  return undefined;
}

/**
 * The family's call-id rule (`repair.callIds`): Kimi numbering, the id as written, or a stable digest; spelled as
 * the protocol allows (anthropicId).
 */
function canonicalId(family: FamilyId, name: string, written: string | undefined, index: number, ctx: CallContext): string {
  const ids = getFamily(family).repair.callIds;
  let id: string;
  if (ids === 'kimi') {
    const m = written && /^functions\.(.+):(\d+)$/.exec(written);
    id = m && m[1] === name ? written! : `functions.${name}:${ctx.historyCalls + index}`;
  } else if (ids === 'written' && written) {
    id = written;
  } else {
    id = `call_${createHash('sha256').update(`${ctx.seed}\0${index}\0${name}`).digest('hex').slice(0, 24)}`;
  }
  return ctx.protocol === 'anthropic-messages' ? anthropicId(id) : id;
}

/**
 * An id as Anthropic's API accepts it (`^[a-zA-Z0-9_-]+$`: the agent sends it back in the next turn's `tool_use` and
 * `tool_result`, and Anthropic answers 400 "tool_use.id: String should match pattern" otherwise). Every other
 * character becomes `_`, as Anthropic-compatible gateways rewrite such ids: Kimi's `functions.Write:0` is delivered as
 * `functions_Write_0`, which keeps the name and the conversation-wide number (`_0`, always the last `_` part).
 */
export function anthropicId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'toolu_';
}

function schemaNote(name: string, args: string, tools: ToolDef[]): string | undefined {
  if (tools.length === 0) return undefined;
  const tool = tools.find((t) => t.name === name);
  if (!tool) return `the request offers no tool named ${name}`;
  const schema = tool.parameters;
  if (!schema || typeof schema !== 'object') return undefined;
  const compiled = validatorFor(schema);
  const validate = compiled instanceof Error ? undefined : compiled;
  if (!validate || validate(JSON.parse(args))) return undefined;
  const err = validate.errors?.[0];
  return `its arguments fail the tool's schema (${err ? `${err.instancePath || '/'} ${err.message}` : 'invalid'})`;
}
