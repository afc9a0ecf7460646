/**
 * OpenAI Responses API responses (Codex's wire format), streamed as typed `response.*` events — no `[DONE]`: the
 * stream ends with `response.completed`, `response.incomplete` or `response.failed` — or as one `response` object.
 */
import type { ParsedResponse, RawEvent, ToolCall } from '../model';
import {
  DONE,
  append,
  argumentsText,
  arr,
  checkTerminated,
  foldAll,
  streamFold,
  type StreamFold,
  newResponse,
  num,
  obj,
  readError,
  readUsage,
  setError,
  str,
  text,
  type Json,
} from './common';

/** An output item being streamed: its tool call (function_call items), and whether deltas already gave its text. */
interface Item {
  call?: ToolCall;
  streamed: boolean;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export function parseResponsesStream(events: RawEvent[]): ParsedResponse {
  return foldAll(responsesStreamFold(events), events);
}

/** The Responses stream parser, one event at a time (`events`: the list the response keeps, if any). */
export function responsesStreamFold(events: RawEvent[] = []): StreamFold {
  const res = newResponse('openai-responses', true, events);
  const msg = res.message;
  /** Keyed by item id and by `#output_index` (delta events carry both; some servers only one). */
  const items = new Map<string, Item>();
  const itemOf = (e: Json): Item => {
    const byId = text(e.item_id) ?? text(obj(e.item)?.id);
    const byIndex = num(e.output_index) !== undefined ? `#${e.output_index}` : undefined;
    let item = (byId && items.get(byId)) || (byIndex && items.get(byIndex)) || undefined;
    if (!item) item = { streamed: false };
    if (byId) items.set(byId, item);
    if (byIndex) items.set(byIndex, item);
    return item;
  };
  const callOf = (item: Item, fields?: Json): ToolCall => {
    if (!item.call) {
      item.call = { index: msg.toolCalls.length, name: '', arguments: '' };
      msg.toolCalls.push(item.call);
    }
    if (fields) {
      item.call.id ??= text(fields.call_id);
      if (item.call.name === '') item.call.name = str(fields.name) ?? '';
    }
    return item.call;
  };

  return streamFold(
    res,
    (value, i, ev) => {
      if (value === DONE) return; // not part of this protocol; some gateways append it anyway
      const e = obj(value);
      if (!e) return;
      const type = str(e.type) ?? ev.event ?? '';
      switch (type) {
        case 'response.output_item.added': {
          const item = obj(e.item);
          if (item?.type === 'function_call') callOf(itemOf(e), item);
          break;
        }
        case 'response.output_text.delta':
          itemOf(e).streamed = true;
          msg.content = append(msg.content, e.delta);
          break;
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          itemOf(e).streamed = true;
          msg.reasoning = append(msg.reasoning, e.delta);
          break;
        case 'response.function_call_arguments.delta': {
          const item = itemOf(e);
          item.streamed = true;
          callOf(item, e).arguments += str(e.delta) ?? '';
          break;
        }
        case 'response.function_call_arguments.done': {
          const item = itemOf(e);
          const call = callOf(item, e);
          if (!item.streamed) call.arguments = argumentsText(e.arguments);
          item.streamed = true;
          break;
        }
        case 'response.output_item.done': {
          // Items whose text or arguments never came as deltas are taken whole from here.
          const raw = obj(e.item);
          const item = itemOf(e);
          if (!raw) break;
          if (raw.type === 'function_call') {
            const call = callOf(item, raw);
            if (!item.streamed) call.arguments = argumentsText(raw.arguments);
          } else if (!item.streamed) {
            readOutputItem(res, raw);
          }
          item.streamed = true;
          break;
        }
        case 'error':
          setError(res, readError({ error: e }) ?? { message: 'error event without details' }, i, ev.offset);
          res.finishReason = 'error';
          break;
        default:
          if (type.startsWith('response.')) {
            const response = obj(e.response);
            if (response) readEnvelope(res, response);
            if (TERMINAL.has(type)) {
              res.terminated = true;
              if (response) readEnd(res, response, i, ev.offset);
            }
          }
      }
    },
    () => checkTerminated(res, 'response.completed / response.incomplete / response.failed'),
  );
}

export function parseResponsesJson(value: unknown, events: RawEvent[]): ParsedResponse {
  const res = newResponse('openai-responses', false, events);
  res.terminated = true;
  const response = obj(value);
  if (!response) return res;
  readEnvelope(res, response);
  if (response.object !== 'response') {
    const error = readError(response);
    if (error) setError(res, error, 0);
    return res;
  }
  for (const raw of arr(response.output)) {
    const item = obj(raw);
    if (item) readOutputItem(res, item);
  }
  readEnd(res, response, 0);
  return res;
}

/** One finished output item into the message. */
function readOutputItem(res: ParsedResponse, item: Json): void {
  const msg = res.message;
  switch (item.type) {
    case 'message':
      for (const part of arr(item.content)) {
        const p = obj(part);
        if (p?.type === 'output_text') msg.content = append(msg.content, p.text);
      }
      break;
    case 'reasoning':
      for (const part of [...arr(item.summary), ...arr(item.content)]) msg.reasoning = append(msg.reasoning, obj(part)?.text);
      break;
    case 'function_call': {
      const call: ToolCall = { index: msg.toolCalls.length, name: str(item.name) ?? '', arguments: argumentsText(item.arguments) };
      const id = text(item.call_id);
      if (id !== undefined) call.id = id;
      msg.toolCalls.push(call);
      break;
    }
  }
}

function readEnvelope(res: ParsedResponse, response: Json): void {
  res.id ??= text(response.id);
  res.model ??= text(response.model);
}

/** Status, usage and error of a finished response object. */
function readEnd(res: ParsedResponse, response: Json, eventIndex: number, offset?: number): void {
  const usage = readUsage(response.usage);
  if (usage) res.usage = usage;
  const status = text(response.status);
  if (status === undefined) return;
  const reason = text(obj(response.incomplete_details)?.reason);
  res.nativeFinishReason = reason ?? status;
  switch (status) {
    case 'completed':
      res.finishReason = res.message.toolCalls.length > 0 ? 'tool_calls' : 'stop';
      break;
    case 'incomplete':
      res.finishReason = reason === 'max_output_tokens' ? 'length' : (reason ?? 'length');
      break;
    case 'failed': {
      res.finishReason = 'error';
      setError(res, readError({ error: response.error }) ?? { message: 'response failed without details' }, eventIndex, offset);
      break;
    }
    case 'cancelled':
      res.finishReason = 'abort';
      break;
    default:
      res.finishReason = status;
  }
}
