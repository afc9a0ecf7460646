/**
 * The wire layer: what crossed the wire → one normalized `ParsedResponse` / `NormalizedRequest`, whatever the
 * protocol (OpenAI Chat, Anthropic Messages, OpenAI Responses, SGLang /generate) and whether it was streamed.
 *
 * Nothing here throws on any input: malformed bodies come back parsed as far as they go, with `wireIssues`
 * saying what was wrong and where.
 */
import type { ChunkTiming, ParsedResponse, Protocol, RawEvent } from '../model';
import { parseAnthropicJson, parseAnthropicStream } from './anthropic';
import { errorProvider, newResponse, obj, protocolFromPath, readError, recoverTruncatedJson, setError } from './common';
import { parseChatJson, parseChatStream } from './openai-chat';
import { parseResponsesJson, parseResponsesStream } from './responses';
import { parseSglangJson, parseSglangStream } from './sglang';
import { parseSse } from './sse';
import { SSE_FIELDS } from './framing';

export { normalizeRequest } from './request';
export { SSE_FIELDS, textFramed } from './framing';
export { cutShort, endedTurn, protocolFromPath } from './common';
export { parseSse, SseReader } from './sse';

/** What the caller knows about a body besides its bytes. Every field is optional; the content decides the rest. */
export interface BodyHint {
  /** The protocol, when known for sure (it wins over everything else). */
  protocol?: Protocol;
  /** Request path (`/api/v1/chat/completions`, `/v1/messages`, `/v1/responses`, `/generate`). */
  path?: string;
  /** Response `Content-Type`. */
  contentType?: string;
  /** Arrival of the body's chunks: gives each event its time `t`. */
  chunks?: ChunkTiming[];
}

interface ProtocolParser {
  stream(events: RawEvent[]): ParsedResponse;
  json(value: unknown, events: RawEvent[]): ParsedResponse;
}

const CHAT: ProtocolParser = { stream: parseChatStream, json: parseChatJson };

const PARSERS: Partial<Record<Protocol, ProtocolParser>> = {
  'openai-chat': CHAT,
  'anthropic-messages': { stream: parseAnthropicStream, json: parseAnthropicJson },
  'openai-responses': { stream: parseResponsesStream, json: parseResponsesJson },
  'sglang-generate': { stream: parseSglangStream, json: parseSglangJson },
};

const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/** How a body is framed. `events`: SSE, or SGLang's legacy NUL-delimited JSON chunks. `text`: neither JSON nor SSE. */
type Framing =
  | { kind: 'empty' }
  | { kind: 'text'; text: string }
  | { kind: 'json'; text: string; value: unknown; truncated: boolean }
  | { kind: 'events'; events: RawEvent[] };

/** Parses a response body of any supported protocol. Never throws. */
export function parseResponseBody(body: Uint8Array | string, hint: BodyHint = {}): ParsedResponse {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const framing = frame(bytes, hint.contentType);
  const protocol = chooseProtocol(framing, hint);
  const res =
    protocol === 'native-text' && framing.kind !== 'empty'
      ? // Framing decoded JSON and plain text already: a megabyte body is not decoded twice.
        nativeText(framing.kind === 'events' ? utf8.decode(bytes) : framing.text)
      : parseFramed(framing, protocol, bytes.length);
  if (hint.chunks && hint.chunks.length > 0) stampTimes(res.events, hint.chunks);
  return res;
}

/**
 * `parseResponseBody` of a body `textFramed` calls text, given as its text (decoded as TextDecoder decodes it, a
 * leading byte-order mark dropped): the same result, without the body's bytes. A large model output read from a file
 * is never held as bytes and text at once.
 */
export function parseTextBody(text: string, hint: BodyHint = {}): ParsedResponse {
  const framing: Framing = { kind: 'text', text };
  const protocol = chooseProtocol(framing, hint);
  // The size only places events and a cut JSON body: text has neither.
  const res = protocol === 'native-text' ? nativeText(text) : parseFramed(framing, protocol, 0);
  if (hint.chunks && hint.chunks.length > 0) stampTimes(res.events, hint.chunks);
  return res;
}

/**
 * A JSON body already decoded and parsed (`value` is `JSON.parse(text)`, `text` has no NUL): the same result as
 * `parseResponseBody` on its UTF-8 bytes, without encoding, decoding and parsing it again. Never throws.
 */
export function parseResponseJson(text: string, value: unknown, hint: BodyHint = {}): ParsedResponse {
  const framing: Framing = { kind: 'json', text, value, truncated: false };
  const protocol = chooseProtocol(framing, hint);
  const res = protocol === 'native-text' ? nativeText(text) : parseFramed(framing, protocol, utf8Length(text));
  if (hint.chunks && hint.chunks.length > 0) stampTimes(res.events, hint.chunks);
  return res;
}

/** UTF-8 byte length of a string (lone surrogates count as U+FFFD, as `TextEncoder` writes them). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) (n += 4), i++;
    else n += 3;
  }
  return n;
}

/** The protocol a body speaks, from the hint (protocol, then path) or else from the content. */
export function detectProtocol(body: Uint8Array | string, hint: BodyHint = {}): Protocol {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  return chooseProtocol(frame(bytes, hint.contentType), hint);
}

function parseFramed(framing: Framing, protocol: Protocol, size: number): ParsedResponse {
  if (framing.kind === 'empty') {
    const res = newResponse(protocol, false, []);
    res.wireIssues.push({ code: 'empty-body', message: 'the response body is empty' });
    return res;
  }
  if (framing.kind === 'text') return notWireFormat(protocol, framing.text);
  const parser = PARSERS[protocol];
  if (framing.kind === 'events') {
    // Unknown protocol: read it as Chat Completions (the most common), which still surfaces errors and [DONE].
    const res = (parser ?? CHAT).stream(framing.events);
    res.protocol = protocol;
    // The terminal event was due where the body ends.
    for (const issue of res.wireIssues) if (issue.code === 'no-terminal-event') issue.offset = size;
    return res;
  }
  const events: RawEvent[] = [{ data: framing.text, offset: 0 }];
  let res: ParsedResponse;
  if (parser) {
    res = parser.json(framing.value, events);
  } else {
    res = newResponse(protocol, false, events);
    res.terminated = true;
    const error = readError(framing.value);
    if (error) {
      setError(res, error, 0);
      const provider = errorProvider(framing.value);
      if (provider) res.provider = provider;
    }
  }
  if (framing.truncated) {
    res.terminated = false;
    res.wireIssues.push({
      code: 'truncated-body',
      message: 'the JSON body ends early; showing what could be recovered',
      eventIndex: 0,
      offset: size,
    });
  }
  return res;
}

/** Raw model output (no JSON envelope): the whole text is the content. */
function nativeText(text: string): ParsedResponse {
  const res = newResponse('native-text', false, [{ data: text, offset: 0 }]);
  res.message.content = text;
  res.terminated = true;
  return res;
}

/** A body that should have been JSON or SSE (say an HTML error page on /chat/completions). */
function notWireFormat(protocol: Protocol, text: string): ParsedResponse {
  const res = newResponse(protocol, false, [{ data: text, offset: 0 }]);
  res.wireIssues.push({
    code: 'invalid-json',
    message: `expected a ${protocol} body, got text that is neither JSON nor SSE: ${JSON.stringify(text.slice(0, 80))}`,
    eventIndex: 0,
    offset: 0,
  });
  return res;
}

function frame(bytes: Uint8Array, contentType?: string): Framing {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  if (i === bytes.length) return { kind: 'empty' };
  const first = bytes[i];
  if (first === 0x7b /* { */ || first === 0x5b /* [ */) {
    if (bytes.indexOf(0, i) >= 0) return { kind: 'events', events: nulDelimited(bytes) };
    const text = utf8.decode(bytes);
    try {
      return { kind: 'json', text, value: JSON.parse(text), truncated: false };
    } catch {
      const value = recoverTruncatedJson(text.trim());
      return value === undefined ? { kind: 'text', text } : { kind: 'json', text, value, truncated: true };
    }
  }
  const sse = SSE_FIELDS.some((f) => f.every((b, k) => bytes[i + k] === b)) || /text\/event-stream/i.test(contentType ?? '');
  return sse ? { kind: 'events', events: parseSse(bytes) } : { kind: 'text', text: utf8.decode(bytes) };
}

/** SGLang's oldest streaming: JSON chunks separated by NUL bytes (some with a `data:` prefix). */
function nulDelimited(bytes: Uint8Array): RawEvent[] {
  const events: RawEvent[] = [];
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0, start);
    if (end < 0) end = bytes.length;
    const data = utf8
      .decode(bytes.subarray(start, end))
      .trim()
      .replace(/^data:\s?/, '');
    if (data !== '') events.push({ data, offset: start });
    start = end + 1;
  }
  return events;
}

function chooseProtocol(framing: Framing, hint: BodyHint): Protocol {
  if (hint.protocol && hint.protocol !== 'unknown') return hint.protocol;
  const fromPath = protocolFromPath(hint.path);
  if (fromPath) return fromPath;
  switch (framing.kind) {
    case 'empty':
      return 'unknown';
    case 'text':
      return 'native-text';
    case 'json':
      return protocolOfValue(framing.value) ?? 'unknown';
    case 'events':
      return protocolOfEvents(framing.events);
  }
}

const ANTHROPIC_TYPES = new Set([
  'message',
  'message_start',
  'message_delta',
  'message_stop',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'ping',
]);

function protocolOfValue(value: unknown): Protocol | undefined {
  // A batch (SGLang /generate with several prompts) is an array of outputs: look at the first.
  const o = obj(Array.isArray(value) ? value[0] : value);
  if (!o) return undefined;
  if (typeof o.type === 'string') {
    if (o.type.startsWith('response.')) return 'openai-responses';
    if (ANTHROPIC_TYPES.has(o.type)) return 'anthropic-messages';
    // Both send `type: "error"`: Anthropic nests the error object, Responses does not.
    if (o.type === 'error') return typeof o.error === 'object' ? 'anthropic-messages' : 'openai-responses';
  }
  if (typeof o.object === 'string') {
    if (o.object.startsWith('chat.completion') || o.object === 'text_completion') return 'openai-chat';
    if (o.object === 'response') return 'openai-responses';
  }
  if (Array.isArray(o.choices)) return 'openai-chat';
  if (typeof o.meta_info === 'object' && o.meta_info !== null) return 'sglang-generate';
  return undefined;
}

/** The first event whose JSON says which protocol it is. */
function protocolOfEvents(events: RawEvent[]): Protocol {
  for (const ev of events) {
    const protocol = protocolOfEvent(ev);
    if (protocol) return protocol;
  }
  return 'unknown';
}

/** The protocol one event's name or JSON says it is; undefined when it does not say. */
export function protocolOfEvent(ev: RawEvent): Protocol | undefined {
  if (ev.comment) return undefined;
  if (ev.event?.startsWith('response.')) return 'openai-responses';
  if (ev.event && ANTHROPIC_TYPES.has(ev.event)) return 'anthropic-messages';
  let value: unknown;
  try {
    value = JSON.parse(ev.data);
  } catch {
    // A stream cut inside its first event still says what it is.
    value = recoverTruncatedJson(ev.data.trim());
  }
  return protocolOfValue(value);
}

/** Each event gets the arrival time of the chunk holding its first byte. */
function stampTimes(events: RawEvent[], chunks: ChunkTiming[]): void {
  for (const ev of events) {
    if (ev.offset === undefined) continue;
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (chunks[mid].offset <= ev.offset) lo = mid;
      else hi = mid - 1;
    }
    ev.t = chunks[lo].t;
  }
}
