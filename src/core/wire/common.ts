/**
 * Helpers every protocol parser shares: safe field access on untrusted JSON, the empty result, usage and error
 * normalization, JSON events with their issues, and recovery of a truncated JSON body.
 *
 * Everything here is defensive by design: bodies come from the network and from the model, and nothing in the
 * wire layer may throw on any input.
 */
import type { ParsedResponse, Protocol, RawEvent, ToolCall, Usage } from '../model';

export type Json = Record<string, unknown>;

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown): Json | undefined {
  return isObj(v) ? v : undefined;
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A string, or undefined for absent / null / empty. */
export function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Appends to an optional text; empty pieces leave it absent. */
export function append(to: string | undefined, piece: unknown): string | undefined {
  if (typeof piece !== 'string' || piece === '') return to;
  return to === undefined ? piece : to + piece;
}

/** A message content as text: a plain string, or the text parts of a content-part array joined. */
export function contentText(v: unknown): string | undefined {
  if (typeof v === 'string') return v === '' ? undefined : v;
  let out: string | undefined;
  for (const part of arr(v)) out = append(out, typeof part === 'string' ? part : obj(part)?.text);
  return out;
}

/** Tool-call arguments as received: a JSON text is kept byte for byte; an object (some servers) is serialized. */
export function argumentsText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return '';
  }
}

/** The protocol an endpoint path speaks (`/api/v1/chat/completions`, `/v1/messages`, `/v1/responses`, `/generate`). */
export function protocolFromPath(path: string | undefined): Protocol | undefined {
  if (!path) return undefined;
  const p = path.split('?')[0].replace(/\/+$/, '');
  // Legacy `/completions` answers in the Chat Completions envelope (`choices[].text`).
  if (p.endsWith('/completions')) return 'openai-chat';
  if (p.endsWith('/messages')) return 'anthropic-messages';
  if (p.endsWith('/responses')) return 'openai-responses';
  if (p.endsWith('/generate')) return 'sglang-generate';
  return undefined;
}

export function newResponse(protocol: Protocol, streamed: boolean, events: RawEvent[]): ParsedResponse {
  return { protocol, streamed, message: { toolCalls: [] }, terminated: false, events, wireIssues: [] };
}

/**
 * Usage in any of the protocols' spellings: OpenAI (`prompt_tokens`…), Anthropic and Responses (`input_tokens`…),
 * SGLang `meta_info`. Anthropic counts cached prompt tokens apart from `input_tokens`; they are added back so
 * `promptTokens` always means the whole prompt.
 */
export function readUsage(v: unknown): Usage | undefined {
  const u = obj(v);
  if (!u) return undefined;
  const usage: Usage = {};
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  const input = num(u.prompt_tokens) ?? num(u.input_tokens);
  if (input !== undefined) usage.promptTokens = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const output = num(u.completion_tokens) ?? num(u.output_tokens);
  if (output !== undefined) usage.completionTokens = output;
  const reasoning = num(obj(u.completion_tokens_details)?.reasoning_tokens) ?? num(obj(u.output_tokens_details)?.reasoning_tokens);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  const cached =
    num(obj(u.prompt_tokens_details)?.cached_tokens) ??
    num(obj(u.input_tokens_details)?.cached_tokens) ??
    cacheRead ??
    num(u.cached_tokens);
  if (cached !== undefined) usage.cachedTokens = cached;
  const total = num(u.total_tokens);
  if (total !== undefined) usage.totalTokens = total;
  const cost = num(u.cost);
  if (cost !== undefined) usage.cost = cost;
  return Object.keys(usage).length > 0 ? usage : undefined;
}

/** Later reports win field by field (Anthropic sends input counts first, output counts at the end). */
export function mergeUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  return a && b ? { ...a, ...b } : (b ?? a);
}

/**
 * An error in any of the shapes upstreams use: `{error:{code,message}}` (OpenAI, OpenRouter), `{type:"error",
 * error:{type,message}}` (Anthropic), `{error:"text"}`, `{object:"error",message,code}` (SGLang / vLLM OpenAI
 * servers).
 */
export function readError(v: unknown): { code?: string | number; message: string } | undefined {
  const o = obj(v);
  if (!o) return undefined;
  if (typeof o.error === 'string') return { message: o.error };
  const e = obj(o.error) ?? (o.object === 'error' ? o : undefined);
  if (!e) return undefined;
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? e.code : str(e.type);
  const message = str(e.message) ?? (argumentsText(e) || 'error');
  return code === undefined ? { message } : { code, message };
}

/** The provider an error body blames: OpenRouter names it in `error.metadata.provider_name`. */
export function errorProvider(v: unknown): string | undefined {
  return text(obj(obj(obj(v)?.error)?.metadata)?.provider_name);
}

/**
 * Records an upstream error on the response. `offset`: the event's byte offset (a stream parsed as it is read keeps
 * no events to look it up in); default: that of `res.events[ev]`.
 */
export function setError(
  res: ParsedResponse,
  error: { code?: string | number; message: string },
  ev?: number,
  offset = ev !== undefined ? res.events[ev]?.offset : undefined,
): void {
  res.error = error;
  res.wireIssues.push({
    code: 'error-event',
    message: `upstream error${error.code !== undefined ? ` ${error.code}` : ''}: ${error.message}`,
    eventIndex: ev,
    offset,
  });
}

/** Marker passed to visitors for the `[DONE]` sentinel. */
export const DONE = Symbol('[DONE]');

/**
 * Visits the JSON payload of each data event in order. Comments and blank payloads are skipped; a payload that is
 * not JSON is reported as `invalid-json` and parsing goes on.
 */
export function eachJsonEvent(res: ParsedResponse, visit: JsonVisitor): void {
  const events = res.events;
  for (let i = 0; i < events.length; i++) visitJsonEvent(res, events[i], i, visit);
}

export type JsonVisitor = (value: unknown, index: number, ev: RawEvent) => void;

/** One event of `eachJsonEvent`: event `i` of the stream, whether or not `res.events` holds it. */
export function visitJsonEvent(res: ParsedResponse, ev: RawEvent, i: number, visit: JsonVisitor): void {
  if (ev.comment) return;
  const data = ev.data.trim();
  if (data === '') return;
  if (data === '[DONE]') {
    visit(DONE, i, ev);
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (e) {
    res.wireIssues.push({
      code: 'invalid-json',
      // The event is named by `eventIndex`; the message is the parser's reason only.
      message: e instanceof Error ? e.message : String(e),
      eventIndex: i,
      offset: ev.offset,
    });
    return;
  }
  visit(value, i, ev);
}

/**
 * A protocol's stream parser, fed one event at a time: `event(ev, i)` for event `i` of the stream, `end()` once after
 * the last. The same fold parses a whole event list (`foldAll`) and a body read in chunks (./chunked.ts), which keeps
 * no events: what the events say is folded into the response as they come.
 */
export interface StreamFold {
  event(ev: RawEvent, index: number): void;
  end(): ParsedResponse;
}

/** A fold over `res`: each event's JSON payload goes to `visit` (see `eachJsonEvent`); `finish` runs at the end. */
export function streamFold(res: ParsedResponse, visit: JsonVisitor, finish: () => void): StreamFold {
  return {
    event: (ev, i) => visitJsonEvent(res, ev, i, visit),
    end: () => {
      finish();
      return res;
    },
  };
}

/** Parses a whole event list with a fold. */
export function foldAll(fold: StreamFold, events: readonly RawEvent[]): ParsedResponse {
  for (let i = 0; i < events.length; i++) fold.event(events[i], i);
  return fold.end();
}

/** How many events the stream had: `events`, or the count kept when they were not (a body read in chunks). */
export function eventCount(r: Pick<ParsedResponse, 'events' | 'eventCount'>): number {
  return r.eventCount ?? r.events.length;
}

/** Finish reasons after which the model did not reach its end of turn: the token limit, an error, an abort. */
const CUT_SHORT_FINISH = new Set(['length', 'error', 'abort']);

/** True when generation provably stopped before the model ended its turn: no terminal event, or a cut-short finish. */
export function cutShort(r: ParsedResponse): boolean {
  return !r.terminated || (r.finishReason !== undefined && CUT_SHORT_FINISH.has(r.finishReason));
}

/** True when the model ended its turn: the response is complete and its finish reason says it stopped on its own. */
export function endedTurn(r: ParsedResponse): boolean {
  return r.finishReason !== undefined && !cutShort(r);
}

/** Reports a stream that ended without its protocol's terminal event (the caller, knowing the body size, places it). */
export function checkTerminated(res: ParsedResponse, terminal: string): void {
  if (!res.terminated) res.wireIssues.push({ code: 'no-terminal-event', message: `stream ended without ${terminal}` });
}

/** Gets or creates the tool call at `index`, keeping the list ordered by index. */
export function callAt(calls: ToolCall[], index: number): ToolCall {
  let call = calls.find((c) => c.index === index);
  if (!call) {
    call = { index, name: '', arguments: '' };
    calls.push(call);
    calls.sort((a, b) => a.index - b.index);
  }
  return call;
}

/**
 * Parses a JSON text that may have been cut short. Returns the value of the longest prefix that can be closed
 * into valid JSON (an unfinished string value is kept up to the cut), or undefined when the text is not a prefix
 * of a JSON document. Linear in the text size: only run on bodies that failed to parse.
 */
export function recoverTruncatedJson(source: string): unknown {
  const end = scanJson(source, source.length);
  if (!end || end.closers === '') return undefined;
  const close = (closers: string) => closers.split('').reverse().join('');
  if (end.inStringValue) {
    // Keep the string's text so far; drop a dangling escape so it closes.
    const body = (end.escaped ? source.slice(0, -1) : source).replace(/\\u[0-9a-fA-F]{0,3}$/, '');
    const value = tryParse(body + '"' + close(end.closers));
    if (value !== undefined) return value;
  } else if (!end.inString) {
    // The text may end right after a complete number or literal.
    const value = tryParse(source + close(end.closers));
    if (value !== undefined) return value;
  }
  for (let k = end.cuts.length - 1; k >= 0; k--) {
    const at = end.cuts[k];
    const state = scanJson(source, at);
    const value = state && tryParse(source.slice(0, at) + close(state.closers));
    if (value !== undefined) return value;
  }
  return undefined;
}

interface JsonScan {
  /** Closing brackets owed, innermost last. */
  closers: string;
  inString: boolean;
  inStringValue: boolean;
  escaped: boolean;
  /** The last few offsets right after a complete value or an opening bracket: places to cut and close. */
  cuts: number[];
}

/** Scans `source[0, end)` for its nesting state; undefined when it cannot be a JSON prefix. */
function scanJson(source: string, end: number): JsonScan | undefined {
  const closers: string[] = [];
  const cuts: number[] = [];
  const cut = (at: number) => {
    cuts.push(at);
    if (cuts.length > 16) cuts.shift();
  };
  let inString = false;
  let stringIsKey = false;
  let escaped = false;
  let expectingKey = false;
  for (let i = 0; i < end; i++) {
    const c = source[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') {
        inString = false;
        if (!stringIsKey) cut(i + 1);
      }
      continue;
    }
    switch (c) {
      case '"':
        inString = true;
        stringIsKey = expectingKey;
        expectingKey = false;
        break;
      case '{':
        closers.push('}');
        expectingKey = true;
        cut(i + 1);
        break;
      case '[':
        closers.push(']');
        cut(i + 1);
        break;
      case '}':
      case ']':
        if (closers.pop() !== c) return undefined;
        // A complete document followed by more text is not a truncation.
        if (closers.length === 0 && source.slice(i + 1).trim() !== '') return undefined;
        cut(i + 1);
        break;
      case ',':
        expectingKey = closers[closers.length - 1] === '}';
        break;
      case ':':
      case ' ':
      case '\n':
      case '\r':
      case '\t':
        break;
      default: {
        // A number or literal: it must be one (or the start of one, at the cut), else this is not JSON at all
        // (raw model text that happens to start with `[` or `{`).
        let j = i + 1;
        while (j < end && !isDelimiter(source[j]) && source[j] !== '"' && source[j] !== '{' && source[j] !== '[') j++;
        const token = source.slice(i, j);
        const complete = j < end;
        if (!(NUMBER.test(token) || (complete ? LITERALS.includes(token) : LITERALS.some((l) => l.startsWith(token))))) {
          return undefined;
        }
        if (complete) cut(j);
        i = j - 1;
      }
    }
  }
  return { closers: closers.join(''), inString, inStringValue: inString && !stringIsKey, escaped, cuts };
}

const LITERALS = ['true', 'false', 'null'];
/** A JSON number, or a prefix of one. */
const NUMBER = /^-?(\d+(\.\d*)?([eE][+-]?\d*)?)?$/;

function isDelimiter(c: string): boolean {
  return c === ',' || c === '}' || c === ']' || c === ':' || c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

function tryParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
