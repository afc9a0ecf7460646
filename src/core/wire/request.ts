/**
 * Request bodies of every protocol → one `NormalizedRequest`: the tools offered and the conversation history in
 * one shape, so checks can compare a response with what was asked (schemas, tool-call ids in history…).
 */
import type { HistoryMessage, NormalizedRequest, Protocol, ToolCall, ToolDef } from '../model';
import { append, argumentsText, arr, contentText, isObj, obj, protocolFromPath, str, text, type Json } from './common';
import { chatToolCall, reasoningOf } from './openai-chat';

const utf8 = new TextDecoder();

/** Anthropic-only content block types: their presence in `messages` tells Messages from Chat Completions. */
const ANTHROPIC_BLOCKS = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

/**
 * @param body the parsed JSON body, or its text / bytes
 * @param hint the request path, when known (it decides the protocol)
 */
export function normalizeRequest(body: unknown, hint: { path?: string } = {}): NormalizedRequest {
  const raw = typeof body === 'string' || body instanceof Uint8Array ? parseJson(body) : body;
  const b = obj(raw);
  const protocol = protocolFromPath(hint.path) ?? (b ? protocolOfBody(b) : 'unknown');
  const req: NormalizedRequest = { protocol, tools: [], messages: [], raw };
  if (!b) return req;
  const model = text(b.model);
  if (model !== undefined) req.model = model;
  if (typeof b.stream === 'boolean') req.stream = b.stream;
  switch (protocol) {
    case 'openai-chat':
      readChat(req, b);
      break;
    case 'anthropic-messages':
      readAnthropic(req, b);
      break;
    case 'openai-responses':
      readResponses(req, b);
      break;
    case 'sglang-generate': {
      // A raw prompt (already templated) or token ids; a batch is read by its first prompt.
      const prompt = Array.isArray(b.text) ? str(b.text[0]) : str(b.text);
      req.messages.push(prompt !== undefined ? { role: 'prompt', content: prompt } : { role: 'prompt' });
      break;
    }
  }
  return req;
}

function parseJson(body: string | Uint8Array): unknown {
  const source = typeof body === 'string' ? body : utf8.decode(body);
  try {
    return JSON.parse(source);
  } catch {
    return source;
  }
}

function protocolOfBody(b: Json): Protocol {
  if (b.input_ids !== undefined || b.sampling_params !== undefined || (b.text !== undefined && b.messages === undefined)) {
    return 'sglang-generate';
  }
  if (b.input !== undefined || b.instructions !== undefined) return 'openai-responses';
  if (!Array.isArray(b.messages)) return 'unknown';
  const anthropic =
    b.system !== undefined ||
    arr(b.tools).some((t) => isObj(t) && t.input_schema !== undefined) ||
    b.messages.some((m) => arr(obj(m)?.content).some((c) => ANTHROPIC_BLOCKS.has(str(obj(c)?.type) ?? '')));
  return anthropic ? 'anthropic-messages' : 'openai-chat';
}

/** A history message without absent fields. */
function message(role: string, fields: Omit<HistoryMessage, 'role'>): HistoryMessage {
  const m: HistoryMessage = { role };
  if (fields.content !== undefined) m.content = fields.content;
  if (fields.reasoning !== undefined) m.reasoning = fields.reasoning;
  if (fields.toolCalls !== undefined && fields.toolCalls.length > 0) m.toolCalls = fields.toolCalls;
  if (fields.toolCallId !== undefined) m.toolCallId = fields.toolCallId;
  return m;
}

function tool(name: unknown, description: unknown, parameters: unknown): ToolDef {
  const t: ToolDef = { name: str(name) ?? '' };
  const d = text(description);
  if (d !== undefined) t.description = d;
  if (parameters !== undefined) t.parameters = parameters;
  return t;
}

function readChat(req: NormalizedRequest, b: Json): void {
  for (const raw of arr(b.messages)) {
    const m = obj(raw);
    if (!m) continue;
    req.messages.push(
      message(str(m.role) ?? 'user', {
        content: contentText(m.content),
        reasoning: reasoningOf(m),
        toolCalls: arr(m.tool_calls).map(chatToolCall),
        toolCallId: text(m.tool_call_id),
      }),
    );
  }
  for (const raw of arr(b.tools)) {
    const fn = obj(obj(raw)?.function);
    if (fn) req.tools.push(tool(fn.name, fn.description, fn.parameters));
  }
  // Legacy `functions` (pre-tools) requests.
  for (const raw of arr(b.functions)) {
    const fn = obj(raw);
    if (fn) req.tools.push(tool(fn.name, fn.description, fn.parameters));
  }
  const provider = obj(b.provider);
  if (provider) {
    const { only, order, allow_fallbacks, ...rest } = provider;
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : undefined);
    req.provider = { ...rest };
    if (strings(only)) req.provider.only = strings(only);
    if (strings(order)) req.provider.order = strings(order);
    if (typeof allow_fallbacks === 'boolean') req.provider.allowFallbacks = allow_fallbacks;
  }
}

function readAnthropic(req: NormalizedRequest, b: Json): void {
  const system = contentText(b.system);
  if (system !== undefined) req.messages.push({ role: 'system', content: system });
  for (const raw of arr(b.messages)) {
    const m = obj(raw);
    if (!m) continue;
    const role = str(m.role) ?? 'user';
    if (!Array.isArray(m.content)) {
      req.messages.push(message(role, { content: contentText(m.content) }));
      continue;
    }
    let content: string | undefined;
    let reasoning: string | undefined;
    const toolCalls: ToolCall[] = [];
    for (const rawBlock of m.content) {
      const block = obj(rawBlock);
      switch (block?.type) {
        case 'text':
          content = append(content, block.text);
          break;
        case 'thinking':
          reasoning = append(reasoning, block.thinking);
          break;
        case 'tool_use': {
          const call: ToolCall = { index: toolCalls.length, name: str(block.name) ?? '', arguments: argumentsText(block.input) };
          const id = text(block.id);
          if (id !== undefined) call.id = id;
          toolCalls.push(call);
          break;
        }
        case 'tool_result':
          // Results travel inside a user turn; as history they are tool messages answering a call id.
          req.messages.push(message('tool', { content: contentText(block.content), toolCallId: text(block.tool_use_id) }));
          break;
      }
    }
    if (content !== undefined || reasoning !== undefined || toolCalls.length > 0) {
      req.messages.push(message(role, { content, reasoning, toolCalls }));
    }
  }
  for (const raw of arr(b.tools)) {
    const t = obj(raw);
    // Server tools (`web_search_…`) have a type and a name but no input_schema.
    if (t) req.tools.push(tool(t.name ?? t.type, t.description, t.input_schema));
  }
}

function readResponses(req: NormalizedRequest, b: Json): void {
  const instructions = text(b.instructions);
  if (instructions !== undefined) req.messages.push({ role: 'system', content: instructions });
  if (typeof b.input === 'string') req.messages.push({ role: 'user', content: b.input });
  /** The assistant turn being rebuilt: reasoning, message and function_call items of one turn are separate items. */
  const lastAssistant = (): HistoryMessage => {
    const last = req.messages[req.messages.length - 1];
    if (last?.role === 'assistant') return last;
    const m: HistoryMessage = { role: 'assistant' };
    req.messages.push(m);
    return m;
  };
  for (const raw of arr(b.input)) {
    const item = obj(raw);
    if (!item) continue;
    const type = str(item.type) ?? 'message';
    if (type === 'message') {
      const role = str(item.role) ?? 'user';
      const content = contentText(item.content);
      const last = req.messages[req.messages.length - 1];
      if (role === 'assistant' && last?.role === 'assistant' && last.content === undefined && !last.toolCalls) {
        if (content !== undefined) last.content = content;
      } else {
        req.messages.push(message(role, { content }));
      }
    } else if (type === 'function_call') {
      const m = lastAssistant();
      const calls = (m.toolCalls ??= []);
      const call: ToolCall = { index: calls.length, name: str(item.name) ?? '', arguments: argumentsText(item.arguments) };
      const id = text(item.call_id);
      if (id !== undefined) call.id = id;
      calls.push(call);
    } else if (type === 'function_call_output') {
      req.messages.push(message('tool', { content: contentText(item.output), toolCallId: text(item.call_id) }));
    } else if (type === 'reasoning') {
      let reasoning: string | undefined;
      for (const part of [...arr(item.summary), ...arr(item.content)]) {
        reasoning = append(reasoning, obj(part)?.text);
      }
      if (reasoning !== undefined) req.messages.push({ role: 'assistant', reasoning });
    }
  }
  for (const raw of arr(b.tools)) {
    const t = obj(raw);
    // Built-in tools (`web_search`, `local_shell`…) have no name: they go by their type.
    if (t) req.tools.push(tool(t.name ?? t.type, t.description, t.parameters));
  }
}
