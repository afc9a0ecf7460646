/**
 * Anthropic Messages responses (Claude Code's wire format, also served by Anthropic-compatible endpoints of other
 * providers), streamed (`message_start` … `message_stop`) or as one `message` object.
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
  mergeUsage,
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

/** Anthropic stop reasons in OpenAI words; the original stays in `nativeFinishReason`. */
const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
};

/** A content block being streamed. Only `tool_use` blocks need state: the call their JSON fragments build. */
interface Block {
  type: string;
  call?: ToolCall;
  /** The `input` of `content_block_start`, used when no `input_json_delta` follows. */
  input?: unknown;
  sawJson?: boolean;
}

export function parseAnthropicStream(events: RawEvent[]): ParsedResponse {
  return foldAll(anthropicStreamFold(events), events);
}

/** The Anthropic Messages stream parser, one event at a time (`events`: the list the response keeps, if any). */
export function anthropicStreamFold(events: RawEvent[] = []): StreamFold {
  const res = newResponse('anthropic-messages', true, events);
  const msg = res.message;
  const blocks = new Map<number, Block>();
  const unexpected = (i: number, ev: RawEvent, why: string) =>
    res.wireIssues.push({ code: 'unexpected-event', message: why, eventIndex: i, offset: ev.offset });

  return streamFold(
    res,
    (value, i, ev) => {
      if (value === DONE) {
        unexpected(i, ev, '`[DONE]` is not part of the Anthropic protocol');
        return;
      }
      const e = obj(value);
      if (!e) return;
      switch (str(e.type) ?? ev.event) {
        case 'message_start': {
          const m = obj(e.message);
          if (m) readEnvelope(res, m);
          res.usage = mergeUsage(res.usage, readUsage(m?.usage));
          break;
        }
        case 'content_block_start': {
          const block = obj(e.content_block);
          const type = str(block?.type) ?? '';
          const b: Block = { type };
          if (type === 'tool_use') {
            b.call = { index: msg.toolCalls.length, name: str(block?.name) ?? '', arguments: '' };
            const id = text(block?.id);
            if (id !== undefined) b.call.id = id;
            b.input = block?.input;
            msg.toolCalls.push(b.call);
          } else if (type === 'text') {
            msg.content = append(msg.content, block?.text);
          } else if (type === 'thinking') {
            msg.reasoning = append(msg.reasoning, block?.thinking);
          }
          blocks.set(num(e.index) ?? blocks.size, b);
          break;
        }
        case 'content_block_delta': {
          const delta = obj(e.delta);
          const index = num(e.index);
          let block = index === undefined ? undefined : blocks.get(index);
          if (!block) {
            unexpected(i, ev, `content_block_delta for block ${index ?? '?'} that was never started`);
            block = { type: '' };
            if (index !== undefined) blocks.set(index, block);
          }
          switch (str(delta?.type)) {
            case 'text_delta':
              msg.content = append(msg.content, delta?.text);
              break;
            case 'thinking_delta':
              msg.reasoning = append(msg.reasoning, delta?.thinking);
              break;
            case 'input_json_delta':
              if (!block.call) {
                block.call = { index: msg.toolCalls.length, name: '', arguments: '' };
                msg.toolCalls.push(block.call);
              }
              block.sawJson = true;
              block.call.arguments += str(delta?.partial_json) ?? '';
              break;
            // signature_delta (opaque signature of a thinking block) and citations carry no text.
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks.get(num(e.index) ?? -1);
          // A tool_use block may carry its whole input at start and stream no fragments.
          if (block?.call && !block.sawJson) block.call.arguments = argumentsText(block.input);
          break;
        }
        case 'message_delta': {
          readStopReason(res, obj(e.delta)?.stop_reason);
          res.usage = mergeUsage(res.usage, readUsage(e.usage));
          break;
        }
        case 'message_stop':
          res.terminated = true;
          break;
        case 'error':
          setError(res, readError(e) ?? { message: 'error event without details' }, i, ev.offset);
          res.finishReason = 'error';
          break;
        // ping: keep-alive. Unknown types: Anthropic may add event types; clients must ignore them.
      }
    },
    () => checkTerminated(res, 'message_stop'),
  );
}

export function parseAnthropicJson(value: unknown, events: RawEvent[]): ParsedResponse {
  const res = newResponse('anthropic-messages', false, events);
  res.terminated = true;
  const m = obj(value);
  if (!m) return res;
  const error = m.type === 'error' ? readError(m) : undefined;
  if (error) setError(res, error, 0);
  readEnvelope(res, m);
  for (const raw of arr(m.content)) {
    const block = obj(raw);
    switch (block?.type) {
      case 'text':
        res.message.content = append(res.message.content, block.text);
        break;
      case 'thinking':
        res.message.reasoning = append(res.message.reasoning, block.thinking);
        break;
      case 'tool_use': {
        const call: ToolCall = { index: res.message.toolCalls.length, name: str(block.name) ?? '', arguments: argumentsText(block.input) };
        const id = text(block.id);
        if (id !== undefined) call.id = id;
        res.message.toolCalls.push(call);
        break;
      }
    }
  }
  readStopReason(res, m.stop_reason);
  res.usage = readUsage(m.usage);
  return res;
}

function readEnvelope(res: ParsedResponse, m: Json): void {
  res.id ??= text(m.id);
  res.model ??= text(m.model);
}

function readStopReason(res: ParsedResponse, v: unknown): void {
  const reason = text(v);
  if (reason === undefined) return;
  res.nativeFinishReason = reason;
  res.finishReason = STOP_REASONS[reason] ?? reason;
}
