/**
 * The request's history as the request-side rules read it: from the body exactly as the agent sent it (`raw`), not
 * the normalized messages, because what providers validate is structure the normalization folds away (which block of
 * an Anthropic user turn a `tool_result` is, a reasoning item that carries only `encrypted_content`, a Responses
 * `function_call` item's own id). One shape for Chat Completions, Anthropic Messages and Responses.
 */
import type { NormalizedRequest } from '../model';
import { arr, obj, str, type Json } from '../wire/common';

/** A tool call in an assistant turn. */
export interface HistoryCall {
  id?: string;
  /** Where it is, for findings: `request.messages[3].tool_calls[0]`. */
  at: string;
  /** Responses: the item's own id (`fc_…`), which ties it to the reasoning item it came with. */
  itemId?: string;
}

/** A tool result: a Chat tool message, an Anthropic `tool_result` block, a Responses `function_call_output` item. */
export interface HistoryResult {
  id?: string;
  at: string;
  /** Anthropic: whether a block that is no `tool_result` comes before it in its user message. */
  afterOther?: boolean;
}

/** One turn: a message (Chat, Anthropic) or a run of items of one speaker (Responses). */
export interface HistoryTurn {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'other';
  /** Index of the turn's (first) entry in the body's list: `messages` or `input`. */
  index: number;
  at: string;
  calls: HistoryCall[];
  results: HistoryResult[];
  /** The turn carries its reasoning (any non-empty form: text, signature, encrypted content, redacted thinking). */
  reasoning: boolean;
  /** Anthropic: the type of the first content block (`thinking`, `text`, `tool_use`…). */
  firstBlock?: string;
}

export interface RequestHistory {
  protocol: 'openai-chat' | 'anthropic-messages' | 'openai-responses';
  /** `messages` or `input`: how locations name the list. */
  list: string;
  turns: HistoryTurn[];
  /**
   * Items earlier than the body holds may exist server-side (Responses `previous_response_id`, `conversation`,
   * `item_reference`): a result whose call is not in the body is then no defect.
   */
  partial: boolean;
}

/** Read once per request: several rules read the same history. */
const cache = new WeakMap<NormalizedRequest, RequestHistory | null>();

/** The history of a Chat, Anthropic or Responses request; undefined for other requests or a body of no such shape. */
export function requestHistory(request: NormalizedRequest | undefined): RequestHistory | undefined {
  if (!request) return undefined;
  let h = cache.get(request);
  if (h === undefined) {
    h = readHistory(request) ?? null;
    cache.set(request, h);
  }
  return h ?? undefined;
}

function readHistory(request: NormalizedRequest): RequestHistory | undefined {
  const body = obj(request.raw);
  if (!body) return undefined;
  switch (request.protocol) {
    case 'openai-chat':
      return Array.isArray(body.messages)
        ? { protocol: 'openai-chat', list: 'messages', turns: chatTurns(body.messages), partial: false }
        : undefined;
    case 'anthropic-messages':
      return Array.isArray(body.messages)
        ? { protocol: 'anthropic-messages', list: 'messages', turns: anthropicTurns(body.messages), partial: false }
        : undefined;
    case 'openai-responses': {
      if (!Array.isArray(body.input)) return undefined;
      const partial =
        body.previous_response_id != null || body.conversation != null || body.input.some((i) => obj(i)?.type === 'item_reference');
      return { protocol: 'openai-responses', list: 'input', turns: responsesTurns(body.input), partial };
    }
    default:
      return undefined;
  }
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function roleOf(v: unknown): HistoryTurn['role'] {
  const r = str(v);
  if (r === 'developer') return 'system';
  return r && ROLES.has(r) ? (r as HistoryTurn['role']) : 'other';
}

/** A reasoning text or signature sent back: a string (even empty: the field is there), or detail objects. */
function chatReasoning(m: Json): boolean {
  return typeof m.reasoning_content === 'string' || typeof m.reasoning === 'string' || arr(m.reasoning_details).length > 0;
}

function chatTurns(messages: unknown[]): HistoryTurn[] {
  return messages.map((raw, i) => {
    const m = obj(raw) ?? {};
    const at = `request.messages[${i}]`;
    const role = roleOf(m.role);
    const turn: HistoryTurn = { role, index: i, at, calls: [], results: [], reasoning: chatReasoning(m) };
    if (role === 'assistant') {
      arr(m.tool_calls).forEach((c, j) => {
        const id = str(obj(c)?.id);
        turn.calls.push(id ? { id, at: `${at}.tool_calls[${j}]` } : { at: `${at}.tool_calls[${j}]` });
      });
    } else if (role === 'tool') {
      const id = str(m.tool_call_id);
      turn.results.push(id ? { id, at } : { at });
    }
    return turn;
  });
}

function anthropicTurns(messages: unknown[]): HistoryTurn[] {
  return messages.map((raw, i) => {
    const m = obj(raw) ?? {};
    const at = `request.messages[${i}]`;
    const role = roleOf(m.role);
    const turn: HistoryTurn = { role, index: i, at, calls: [], results: [], reasoning: false };
    const blocks = Array.isArray(m.content) ? m.content : [];
    let other = false;
    blocks.forEach((rawBlock, k) => {
      const block = obj(rawBlock);
      const type = str(block?.type) ?? '';
      if (k === 0) turn.firstBlock = type;
      const where = `${at}.content[${k}]`;
      if (type === 'thinking' || type === 'redacted_thinking') turn.reasoning = true;
      else if (type === 'tool_use' && role === 'assistant') {
        const id = str(block?.id);
        turn.calls.push(id ? { id, at: where } : { at: where });
      } else if (type === 'tool_result') {
        const id = str(block?.tool_use_id);
        turn.results.push({ ...(id ? { id } : {}), at: where, afterOther: other });
      }
      if (type !== 'tool_result') other = true;
    });
    if (typeof m.content === 'string' && m.content !== '') turn.firstBlock = 'text';
    return turn;
  });
}

/** Responses items that are part of an assistant turn, and those that carry a tool result. */
const CALL_ITEMS = new Set(['function_call', 'custom_tool_call']);
const OUTPUT_ITEMS = new Set(['function_call_output', 'custom_tool_call_output']);

function responsesTurns(input: unknown[]): HistoryTurn[] {
  const turns: HistoryTurn[] = [];
  let open: HistoryTurn | undefined; // the assistant turn being gathered
  input.forEach((raw, i) => {
    const item = obj(raw);
    if (!item) return;
    const at = `request.input[${i}]`;
    const type = str(item.type) ?? (item.role !== undefined ? 'message' : '');
    // Built-in tools' calls (`local_shell_call`, `web_search_call`…) are part of the model's turn too.
    const assistantPart = type === 'reasoning' || type.endsWith('_call') || (type === 'message' && item.role === 'assistant');
    if (assistantPart) {
      if (!open) {
        open = { role: 'assistant', index: i, at, calls: [], results: [], reasoning: false };
        turns.push(open);
      }
      if (type === 'reasoning') open.reasoning = true;
      else if (CALL_ITEMS.has(type)) {
        const call: HistoryCall = { at };
        const id = str(item.call_id);
        if (id) call.id = id;
        const itemId = str(item.id);
        if (itemId) call.itemId = itemId;
        open.calls.push(call);
      }
      return;
    }
    open = undefined;
    if (OUTPUT_ITEMS.has(type)) {
      const id = str(item.call_id);
      turns.push({ role: 'tool', index: i, at, calls: [], results: [id ? { id, at } : { at }], reasoning: false });
    } else if (type === 'message') {
      turns.push({ role: roleOf(item.role), index: i, at, calls: [], results: [], reasoning: false });
    } else {
      // Built-in tools' outputs, references, compaction items: neither a speaker change nor a function call to pair.
      turns.push({ role: 'other', index: i, at, calls: [], results: [], reasoning: false });
    }
  });
  return turns;
}

/** Whether a value is set to something that says "on". */
function isOn(v: unknown): boolean {
  return v === true || (typeof v === 'string' && v !== '' && v !== 'none' && v !== 'disabled' && v !== 'off');
}

/**
 * Whether the request says thinking is on or off, and how: `thinking: {type}` (Anthropic, Moonshot, DeepSeek),
 * `reasoning: {effort | enabled | max_tokens}` (OpenRouter, Responses), `reasoning_effort`, the chat-template switches
 * `chat_template_kwargs.{thinking, enable_thinking}` (vLLM, SGLang). Undefined when it says nothing.
 */
export function thinkingParam(request: NormalizedRequest): { on: boolean; how: string } | undefined {
  const b = obj(request.raw);
  if (!b) return undefined;
  const thinking = obj(b.thinking);
  if (thinking && typeof thinking.type === 'string')
    return { on: isOn(thinking.type), how: `"thinking": {"type": ${JSON.stringify(thinking.type)}}` };
  const reasoning = obj(b.reasoning);
  if (reasoning) {
    if (typeof reasoning.enabled === 'boolean') return { on: reasoning.enabled, how: `"reasoning": {"enabled": ${reasoning.enabled}}` };
    if (typeof reasoning.effort === 'string')
      return { on: isOn(reasoning.effort), how: `"reasoning": {"effort": ${JSON.stringify(reasoning.effort)}}` };
    if (typeof reasoning.max_tokens === 'number')
      return { on: reasoning.max_tokens > 0, how: `"reasoning": {"max_tokens": ${reasoning.max_tokens}}` };
  }
  if (typeof b.reasoning_effort === 'string')
    return { on: isOn(b.reasoning_effort), how: `"reasoning_effort": ${JSON.stringify(b.reasoning_effort)}` };
  const kwargs = obj(b.chat_template_kwargs);
  for (const key of ['thinking', 'enable_thinking']) {
    if (kwargs && typeof kwargs[key] === 'boolean')
      return { on: kwargs[key] as boolean, how: `"chat_template_kwargs": {"${key}": ${kwargs[key]}}` };
  }
  return undefined;
}

/** `"a", "b", "c", …`: the first few ids of a list, quoted. */
export function idList(ids: readonly string[], max = 3): string {
  return (
    ids
      .slice(0, max)
      .map((id) => JSON.stringify(id))
      .join(', ') + (ids.length > max ? ', …' : '')
  );
}
