/**
 * The normalized data model every part of Tokenscope speaks.
 *
 * Data flows one way: bytes → wire events → exchange → family parse → findings / tokens → views and exports.
 * This file holds only types and tiny helpers; it imports only the list of family ids (families/ids.ts, which imports
 * nothing).
 */
import type { FamilyId } from './families/ids';

export type Severity = 'error' | 'warning' | 'info';

/** Which API a body speaks. `native-text` is raw model output (no JSON envelope). */
export type Protocol = 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'sglang-generate' | 'native-text' | 'unknown';

/** A tool call as the agent sees it (structured), or as a family parser recovered it from native text. */
export interface ToolCall {
  /** Position among the calls of one message (OpenAI `index`). */
  index: number;
  /** Call id as emitted (`functions.read:3`, `call_abc…`, `toolu_…`). */
  id?: string;
  /** Function name. Empty string when none could be recovered. */
  name: string;
  /** Arguments exactly as received (a JSON text when healthy). */
  arguments: string;
}

/** One assistant turn in structured form. */
export interface AssistantMessage {
  reasoning?: string;
  content?: string;
  toolCalls: ToolCall[];
}

/** One event as it crossed the wire (SSE event, NDJSON chunk, or a whole JSON body). */
export interface RawEvent {
  /** Milliseconds since the first byte of the response, when known. */
  t?: number;
  /** SSE `event:` field when present. */
  event?: string;
  /** The `data:` payload (multi-line data joined with `\n`), or a comment text for comments. */
  data: string;
  /** True for SSE comment lines such as `: OPENROUTER PROCESSING`. */
  comment?: boolean;
  /** Byte offset of the event's first byte in the raw body. */
  offset?: number;
}

export interface Usage {
  promptTokens?: number;
  completionTokens?: number;
  reasoningTokens?: number;
  cachedTokens?: number;
  totalTokens?: number;
  /** USD, when the upstream reports it (OpenRouter `usage.cost`). */
  cost?: number;
}

/** Something wrong with the wire itself (not the model's output): bad JSON in an event, a missing terminator… */
export interface WireIssue {
  code: 'invalid-json' | 'no-terminal-event' | 'error-event' | 'truncated-body' | 'unexpected-event' | 'empty-body';
  message: string;
  /** Index into `ParsedResponse.events`. */
  eventIndex?: number;
  /** Byte offset in the raw body. */
  offset?: number;
}

/** A response body parsed into one normalized shape, whatever the protocol. */
export interface ParsedResponse {
  protocol: Protocol;
  streamed: boolean;
  message: AssistantMessage;
  /** Finish reason normalized to OpenAI words: stop | length | tool_calls | content_filter | error | abort | … */
  finishReason?: string;
  /** The provider's own finish reason (OpenRouter `native_finish_reason`, Anthropic `stop_reason`, SGLang `meta_info.finish_reason.type`). */
  nativeFinishReason?: string;
  /** Served provider as the upstream named it (OpenRouter chunk `provider` display name). */
  provider?: string;
  model?: string;
  /** Response / generation id (`gen-…`, `msg_…`, `resp_…`). */
  id?: string;
  usage?: Usage;
  /** An error reported by the upstream, in the body or mid-stream. */
  error?: { code?: string | number; message: string };
  /** True when the stream ended with its protocol's terminal event (`[DONE]`, `message_stop`, `response.completed`…) or the body was a complete JSON document. */
  terminated: boolean;
  events: RawEvent[];
  /**
   * Set when `events` holds none of the stream's events (a body parsed as it was read, wire/chunked.ts): how many
   * there were. Read the count through wire `eventCount`.
   */
  eventCount?: number;
  wireIssues: WireIssue[];
  /** Exact generated token ids when the server returned them (SGLang `/generate` `output_ids`). */
  outputIds?: number[];
  /** Per-token strings from logprobs, when present (OpenAI `logprobs.content[].token` / `bytes`). */
  logprobTokens?: { token: string; bytes?: number[] }[];
  /** What stopped generation, when the server says (SGLang `matched_stop` / `meta_info.finish_reason.matched`): a stop token id, stop string, or token ids. */
  matchedStop?: number | string | number[];
  /** HTTP status of the response, when the caller knows it (a captured exchange). */
  status?: number;
  /**
   * Who cut the response short, when the capture knows: the client, Tokenscope stopping, or Tokenscope's idle timeout
   * giving up on an upstream that went silent mid-response (`idleSeconds` long).
   */
  cutBy?: 'client' | 'tokenscope' | 'idle';
  /** With cutBy `idle`: the silence, in seconds, after which Tokenscope ended the response. */
  idleSeconds?: number;
}

/** A tool the request offered. */
export interface ToolDef {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: unknown;
}

/** One message of the request's history, normalized across protocols. */
export interface HistoryMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'developer' | string;
  content?: string;
  reasoning?: string;
  toolCalls?: ToolCall[];
  /** For `tool` messages: the id of the call this answers. */
  toolCallId?: string;
}

/** A request body normalized across protocols. `raw` is the body exactly as parsed. */
export interface NormalizedRequest {
  protocol: Protocol;
  model?: string;
  stream?: boolean;
  tools: ToolDef[];
  messages: HistoryMessage[];
  /** OpenRouter `provider` routing object when present. */
  provider?: { only?: string[]; order?: string[]; allowFallbacks?: boolean; [k: string]: unknown };
  raw: unknown;
}

/** Model family ids, one per module in `src/core/families/`. */
export type { FamilyId };

/** What a stretch of native text is. */
export type SegmentKind =
  | 'reasoning'
  | 'content'
  | 'section' // the tool-call section as a whole (begin marker … end marker)
  | 'call' // one call as a whole
  | 'call-id'
  | 'call-name'
  | 'arguments'
  | 'marker' // a control marker (special token string) outside the above
  | 'end'; // end-of-turn marker(s)

/** A character range [start, end) in a native text. */
export interface Segment {
  kind: SegmentKind;
  start: number;
  end: number;
  /** For call, call-id, call-name and arguments: which call. */
  callIndex?: number;
}

/** Structural trouble a family parser met (it never throws; it reports). */
export interface FormatProblem {
  code:
    | 'section-unclosed' // tool-call section opened, never closed
    | 'call-unclosed' // one call opened, never closed
    | 'marker-truncated' // a marker cut short (`<|tool_calls_section_end|` without `>`)
    | 'reasoning-unclosed' // `<think>` without `</think>`
    | 'malformed-call' // markup present but not in the family's grammar
    | 'stray-marker' // a marker where none belongs (section end without begin…)
    | 'marker-placeholder'; // a marker's special id shown as a placeholder (`<|reserved_token_163595|>`)
  message: string;
  start: number;
  end: number;
  /** Where the missing marker should have been, when that is known (for "expected here" ghosts). */
  expectedAt?: number;
  /** The marker that is missing or truncated. */
  marker?: string;
  callIndex?: number;
  /**
   * For `reasoning-unclosed`: what the model meant as its answer or its calls and the engines keep inside the
   * reasoning (they read everything after an open reasoning block as reasoning), so the agent never sees or runs it.
   */
  stuck?: 'answer' | 'calls' | 'answer-and-calls';
}

/** The native text of one assistant turn, with what each part is. */
export interface NativeText {
  text: string;
  segments: Segment[];
}

export interface ParsedNative extends NativeText {
  family: FamilyId;
  message: AssistantMessage;
  problems: FormatProblem[];
}

/** A finding of one check. Ranges are character offsets into the analysed native text (`Analysis.native.text`). */
export interface Finding {
  rule: string;
  severity: Severity;
  message: string;
  /** Where the trouble is, in words the agent's user knows: `content`, `reasoning`, `tool_calls[0].arguments`, `request.messages[3]`, `wire`, `finish_reason`. */
  location: string;
  start?: number;
  end?: number;
  /** For a missing marker: the offset where it should have been. */
  expectedAt?: number;
  expectedMarker?: string;
}

/** The result of analysing one exchange. */
export interface Analysis {
  family?: FamilyId;
  /** How the family was chosen. */
  familySource?: 'model-id' | 'markers' | 'given' | 'none';
  /** The native text analysed: the raw text itself, or a reconstruction rendered from the structured response. */
  native: NativeText & { source: 'raw' | 'rendered' };
  /** Structured view of the turn (from the wire, or parsed from native text). */
  message: AssistantMessage;
  findings: Finding[];
}

/** Timing of one chunk of a raw body as it arrived. */
export interface ChunkTiming {
  /** Milliseconds since the request started. */
  t: number;
  offset: number;
  length: number;
}

export type ExchangeState = 'streaming' | 'complete' | 'incomplete' | 'error';

/** One captured request/response pair as the capture store keeps it. Keys and cookies are already redacted. */
export interface CapturedExchange {
  /** Sortable id (time-based). */
  id: string;
  sessionId: string;
  /** Epoch milliseconds. */
  startedAt: number;
  endedAt?: number;
  state: ExchangeState;
  /** Agent name guessed from the User-Agent (`opencode`, `claude-code`, `codex`, `aider`, `openai-sdk`…). */
  agent?: string;
  /** Route name: `openrouter`, `sglang`, `anthropic`, `openai`, a custom name, or `default`. */
  route: string;
  /** Full upstream URL the request went to. */
  upstreamUrl: string;
  method: string;
  /** Path as the client sent it to the proxy. */
  path: string;
  requestHeaders: Record<string, string>;
  /** Request body as UTF-8 text (redacted). */
  requestBody?: string;
  status?: number;
  responseHeaders?: Record<string, string>;
  /** Time to first response byte, ms since start. */
  ttfbMs?: number;
  /** Decoded response size in bytes. */
  responseBytes?: number;
  /** Why the exchange is incomplete or errored, in one line. */
  error?: string;
  /** The response was larger than the store keeps per body (its cap): only the first `keptBytes` are stored. */
  truncated?: { keptBytes: number; receivedBytes: number };
  /** Filled after analysis. */
  summary?: ExchangeSummary;
  /** A re-run's original exchange. */
  parentId?: string;
  /** A re-run's target (`openrouter:fireworks`, `sglang:http://…`). */
  target?: string;
  /** OpenRouter: `X-Generation-Id`. */
  generationId?: string;
  /** Model the request asked for (the body's `model`), recorded by the proxy. */
  requestModel?: string;
  /** Served provider as the upstream named it (OpenRouter `provider` display name), recorded by the proxy. */
  servedProvider?: string;
  /** OpenRouter: the provider pin requested, and whether the served provider honoured it. */
  pin?: { requested: string[]; honoured?: boolean };
  /** Repair mode rewrote the response: what was delivered instead of the upstream's bytes (those stay the capture's body). */
  repair?: RepairRecord;
  /** A per-model provider policy changed the request's OpenRouter `provider` object. */
  policy?: PolicyRecord;
  /**
   * Keys the model streamed over several SSE events were masked (same length) in the stored body when it ended:
   * how many, their kinds, and where (`response chat:0:content`, `delivered chat:0:content` for repair mode's copy).
   */
  masked?: { splitKeys: number; labels: string[]; where?: string[] };
  /** The proxy held the request this long (ms) for a free connection to its upstream (all were in use). */
  queuedMs?: number;
  /** The request had a body the capture does not hold: its size as received, and why (`requestBody` is absent). */
  requestNotKept?: { bytes: number; why: string };
  /** The response was not decoded whole for the capture (a decompression bomb), so it is not analysed: why, in one line. */
  notAnalysed?: string /**
   * The exchange is one response of a WebSocket connection (the Responses API's WebSocket mode): `connection` names
   * the connection (its exchanges share it), `response` counts the responses on it from 1. Its request body is the
   * `response.create` message; its body the server's events, stored as the SSE stream that carries them over HTTP.
   */;
  websocket?: { connection: string; response: number };
}

/** One tool call repair mode recovered from markup in content or reasoning. */
export interface RepairedCallRecord {
  index: number;
  id: string;
  name: string;
  from: 'content' | 'reasoning';
  family: FamilyId;
  /** delivered: as a structured call. withheld: truncated, not delivered. passed-through: truncated, left as text. */
  status: 'delivered' | 'withheld' | 'passed-through';
  /** Why a call was truncated, or what its arguments fail in the tool's schema. */
  note?: string;
  argumentsChars: number;
}

export interface RepairRecord {
  /**
   * The protocol the repaired response spoke, which names what was delivered (tool_calls, tool_use blocks,
   * function_call items) and what `finishReason` holds. Absent in captures recorded before it was kept: Chat Completions.
   */
  protocol?: 'openai-chat' | 'anthropic-messages' | 'openai-responses';
  /** The `tokenscope.repair.truncated` setting in force. */
  truncated: 'withhold' | 'passthrough';
  calls: RepairedCallRecord[];
  /** Characters of markup removed from content and reasoning. */
  removedChars: { content: number; reasoning: number };
  /**
   * How the turn's end changed, in the protocol's own terms: Chat `finish_reason`, Anthropic `stop_reason` (`error`:
   * the turn was failed with an error), Responses `status`.
   */
  finishReason?: { upstream: string | null; delivered: string | null };
}

export interface PolicyRecord {
  model: string;
  /** The policy's key when it is not the model id itself (the base model of a variant, a `prefix*`). */
  key?: string;
  /** The policy's preferences as configured. */
  policy: Record<string, unknown>;
  /** The `provider` object the agent sent, if any. */
  agent?: Record<string, unknown>;
  /** The `provider` object sent upstream. */
  sent: Record<string, unknown>;
}

export interface ExchangeSummary {
  protocol?: Protocol;
  model?: string;
  provider?: string;
  family?: FamilyId;
  finishReason?: string;
  streamed?: boolean;
  usage?: Usage;
  counts: { error: number; warning: number; info: number };
  /** Rule ids of the findings, in order. */
  rules: string[];
}

/** Read access to the capture store, as exports and views use it. */
export interface CaptureReader {
  list(): CapturedExchange[];
  get(id: string): CapturedExchange | undefined;
  /** The decoded response body exactly as received, with chunk timing. */
  readResponse(id: string): { bytes: Uint8Array; chunks: ChunkTiming[] } | undefined;
  /** The analysis the capture store's analysis service stored for the exchange, if any (capture/analysis.ts). */
  readAnalysis?(id: string): { version: number; summary: ExchangeSummary; analysis: Analysis } | undefined;
}

/** A one-line error meant for the user (CLI prints the message, no stack). */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
