/**
 * OpenAI Chat Completions responses, as OpenRouter, SGLang, vLLM and llama.cpp serve them on `/chat/completions`,
 * streamed (`chat.completion.chunk` events ending with `data: [DONE]`) or as one `chat.completion` object.
 * Legacy `/completions` choices (`choices[].text`) are read as content: raw-completion re-runs show native markup
 * there.
 *
 * Only the first choice is read (agents ask for one).
 */
import type { AssistantMessage, ParsedResponse, RawEvent, ToolCall } from '../model';
import {
  DONE,
  append,
  argumentsText,
  arr,
  callAt,
  checkTerminated,
  contentText,
  foldAll,
  streamFold,
  type StreamFold,
  errorProvider,
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

export function parseChatStream(events: RawEvent[]): ParsedResponse {
  return foldAll(chatStreamFold(events), events);
}

/** The Chat Completions stream parser, one event at a time (`events`: the list the response keeps, if any). */
export function chatStreamFold(events: RawEvent[] = []): StreamFold {
  const res = newResponse('openai-chat', true, events);
  return streamFold(
    res,
    (value, i, ev) => {
      if (value === DONE) {
        res.terminated = true;
        return;
      }
      const chunk = obj(value);
      if (!chunk) return;
      readEnvelope(res, chunk);
      // OpenRouter's mid-stream error: a top-level `error` next to a choice with finish_reason "error".
      const error = readError(chunk);
      if (error) setError(res, error, i, ev.offset);
      const choice = firstChoice(chunk);
      // OpenRouter may also put the error inside the choice that it ends with finish_reason "error".
      const choiceError = error || !choice?.error ? undefined : readError(choice);
      if (choiceError) setError(res, choiceError, i, ev.offset);
      if (choice) {
        const delta = obj(choice.delta);
        if (delta) applyDelta(res.message, delta);
        else res.message.content = append(res.message.content, choice.text);
        readChoiceEnd(res, choice);
      }
      const usage = readUsage(chunk.usage);
      if (usage) res.usage = usage;
    },
    () => checkTerminated(res, 'data: [DONE]'),
  );
}

export function parseChatJson(value: unknown, events: RawEvent[]): ParsedResponse {
  const res = newResponse('openai-chat', false, events);
  res.terminated = true;
  const body = obj(value);
  if (!body) return res;
  readEnvelope(res, body);
  const error = readError(body);
  if (error) {
    setError(res, error, 0);
    res.provider ??= errorProvider(body);
  }
  const choice = firstChoice(body);
  // An error reported inside the choice (`choices[0].error`, finish_reason "error"): OpenRouter's generation errors.
  const choiceError = error || !choice?.error ? undefined : readError(choice);
  if (choiceError) {
    setError(res, choiceError, 0);
    res.provider ??= errorProvider(choice);
  }
  if (choice) {
    const m = obj(choice.message);
    if (m) {
      res.message.content = contentText(m.content);
      res.message.reasoning = reasoningOf(m);
      res.message.toolCalls = arr(m.tool_calls).map(chatToolCall);
    } else {
      res.message.content = text(choice.text);
    }
    readChoiceEnd(res, choice);
  }
  res.usage = readUsage(body.usage);
  return res;
}

function readEnvelope(res: ParsedResponse, o: Json): void {
  res.id ??= text(o.id);
  res.model ??= text(o.model);
  res.provider ??= text(o.provider);
}

function firstChoice(o: Json): Json | undefined {
  const choices = arr(o.choices);
  return obj(choices.find((c) => obj(c)?.index === 0) ?? choices[0]);
}

/** `reasoning` (OpenRouter) or `reasoning_content` (SGLang, vLLM, DeepSeek), else the text of `reasoning_details`. */
export function reasoningOf(m: Json): string | undefined {
  const plain = str(m.reasoning) ?? str(m.reasoning_content);
  if (plain !== undefined) return plain === '' ? undefined : plain;
  let out: string | undefined;
  for (const d of arr(m.reasoning_details)) {
    const detail = obj(d);
    out = append(out, detail?.text ?? detail?.summary);
  }
  return out;
}

function applyDelta(msg: AssistantMessage, delta: Json): void {
  msg.content = append(msg.content, delta.content);
  msg.reasoning = append(msg.reasoning, reasoningOf(delta));
  const fragments = arr(delta.tool_calls);
  for (let pos = 0; pos < fragments.length; pos++) {
    const fragment = obj(fragments[pos]);
    if (!fragment) continue;
    const call = callAt(msg.toolCalls, fragmentIndex(msg.toolCalls, fragment, pos));
    const fn = obj(fragment.function);
    // id and name arrive once, on the first fragment; some servers repeat them, so the first one stays.
    call.id ??= text(fragment.id);
    if (call.name === '') call.name = str(fn?.name) ?? '';
    call.arguments += argumentsText(fn?.arguments);
  }
}

/** The call a streamed fragment belongs to: its `index`, or (servers that omit it) a new id opens a new call. */
function fragmentIndex(calls: ToolCall[], fragment: Json, pos: number): number {
  const index = num(fragment.index);
  if (index !== undefined) return index;
  const id = text(fragment.id);
  if (id !== undefined) return calls.find((c) => c.id === id)?.index ?? calls.length;
  return calls.length > 0 ? calls[calls.length - 1].index : pos;
}

/** A complete `tool_calls[]` entry (response message, or assistant message in a request's history). */
export function chatToolCall(raw: unknown, pos: number): ToolCall {
  const tc = obj(raw);
  const fn = obj(tc?.function);
  const call: ToolCall = { index: num(tc?.index) ?? pos, name: str(fn?.name) ?? '', arguments: argumentsText(fn?.arguments) };
  const id = text(tc?.id);
  if (id !== undefined) call.id = id;
  return call;
}

/** finish_reason, OpenRouter's native_finish_reason, SGLang's matched_stop, logprob tokens. */
function readChoiceEnd(res: ParsedResponse, choice: Json): void {
  const finish = text(choice.finish_reason);
  if (finish !== undefined) res.finishReason = finish;
  const native = text(choice.native_finish_reason);
  if (native !== undefined) res.nativeFinishReason = native;
  const matched = choice.matched_stop;
  if (typeof matched === 'number' || typeof matched === 'string') res.matchedStop = matched;
  for (const entry of arr(obj(choice.logprobs)?.content)) {
    const lp = obj(entry);
    const token = str(lp?.token);
    if (token === undefined) continue;
    const bytes = arr(lp?.bytes).filter((b): b is number => typeof b === 'number');
    (res.logprobTokens ??= []).push(bytes.length > 0 ? { token, bytes } : { token });
  }
}
