/**
 * The one message protocol between the extension host and the exchange webview.
 *
 * Both sides import this file: the host (src/extension/exchangePanel.ts) posts `HostMessage`s and handles
 * `WebviewMessage`s; the webview (webview/main.ts) does the opposite. Every payload is plain JSON built by the host
 * from the core's data; the webview never sees core objects and renders every string from the model as text.
 *
 * Flow: the webview posts `ready` whenever it (re)starts — first load, or after being hidden and shown again —, the
 * host answers with `exchange` and, once tokenizing is done, `tokens`. Nothing the webview needs lives only in the
 * webview, so a restart loses nothing but scroll position and tab, which it keeps itself with setState.
 *
 * The Wire tab's events beyond the first page are never part of `exchange`: the webview asks for one page with
 * `wirePage` (its `seq` numbers the request), and the host answers with a `wirePage` of the same `seq`, read from
 * the stored body then (src/extension/wirePage.ts). An answer whose `seq` is not the latest request is stale.
 *
 * What every panel's protocol shares (`ready`, `error`, the field-checking guard) is ./panel/protocol.ts.
 */
import type { AssistantMessage, HistoryMessage, Severity, SegmentKind, ToolDef, Usage } from '../src/core/model';
import { isIndex, messageGuard, type PanelErrorMessage, type ReadyMessage } from './panel/protocol';

/** Segment kinds in a fixed order: token streams carry an index into this list per token. */
export const SEGMENT_KINDS: readonly (SegmentKind | 'none')[] = [
  'none',
  'reasoning',
  'content',
  'section',
  'call',
  'call-id',
  'call-name',
  'arguments',
  'marker',
  'end',
];

/** Token kinds, by index: 0 ordinary text, 1 a real special-token id, 2 a marker that came back spelled as text. */
export const TOKEN_KINDS = ['ordinary', 'special', 'marker-as-text'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export interface FindingView {
  rule: string;
  severity: Severity;
  /** Short rule title, when the rule is known. */
  title?: string;
  message: string;
  /** One line: why this breaks agents. */
  why?: string;
  location: string;
  /** Character range in the native text (`TokenStreamView` offsets use the same text). */
  start?: number;
  end?: number;
  expectedAt?: number;
  expectedMarker?: string;
  /** On a token stream's findings: the tokens [first, last) it covers, and the token a missing marker belongs before. */
  tokens?: [number, number];
  expectedBefore?: number;
}

export interface WireEventView {
  /** Milliseconds since the first response byte. */
  t?: number;
  /** Milliseconds since the previous event. */
  gap?: number;
  event?: string;
  data: string;
  comment?: boolean;
}

/** The Wire tab shows this many events at a time (a page); the webview asks for other pages with `wirePage`. */
export const WIRE_SHOWN = 5000;

/** The Wire tab: the first WIRE_SHOWN events, and what is known of all of them. */
export interface WireView {
  /** The first events (at most WIRE_SHOWN), in order. */
  events: WireEventView[];
  /** How many events the response had. */
  eventCount: number;
  /** The longest gap between two events, in ms (over all of them). */
  longestGapMs: number;
  /** The index of the event that came after the longest gap (absent when no two events have times). */
  longestGapAt?: number;
  /** Network chunks the response came in. */
  chunkCount: number;
}

/**
 * What a `wirePage` request found. `ok`: `events` are the events from `from` on (at most WIRE_SHOWN). Otherwise
 * `events` is empty and `message` says why in one line: `out-of-range` (no event `from`), `streaming` (pages open
 * once the stream has finished), `gone` (the exchange is no longer in the capture store), `unreadable` (its body
 * could not be read).
 */
export type WirePageState = 'ok' | 'out-of-range' | 'streaming' | 'gone' | 'unreadable';

export interface WirePageView {
  state: WirePageState;
  /** The index of the first event asked for (and, when `ok`, of `events[0]`). */
  from: number;
  events: WireEventView[];
  /** How many events the response has: set when the host read its body to the end (the last page, out of range). */
  eventCount?: number;
  message?: string;
}

export interface RequestView {
  model?: string;
  stream?: boolean;
  messages: HistoryMessage[];
  tools: ToolDef[];
  /** Sampling and other parameters: every top-level field of the body except messages/tools/input/system. */
  params: Record<string, unknown>;
  /** OpenRouter provider routing object, when present. */
  provider?: unknown;
}

export interface ResponseView {
  message: AssistantMessage;
  finishReason?: string;
  nativeFinishReason?: string;
  usage?: Usage;
  /** The usage as people read it (`1200 prompt · 27 completion · $0.000102`): core/cost.ts. */
  usageText?: string;
  error?: { code?: string | number; message: string };
  terminated: boolean;
  wireIssues: { code: string; message: string }[];
}

/** One call as the Parsed tab shows it: what a parser extracted, or what the provider returned. */
export interface ParsedCallView {
  index: number;
  id?: string;
  name: string;
  /** The arguments text as emitted. */
  arguments: string;
  /** The arguments parsed and pretty-printed; absent when they are not JSON. */
  argumentsPretty?: string;
  /** False for a call the output cut off. */
  complete: boolean;
  /** Range in the native text, when the call is in it. */
  start?: number;
  end?: number;
  /** How this call differs from the other side, in a few words (`dropped by the provider`…). */
  mismatch?: string;
}

/** The Parsed tab: what a correct parser extracts from the model's text, beside the provider's structured calls. */
export interface ParsedView {
  source: 'raw' | 'logprobs' | 'reconstruction';
  /** One line: what the parsed text is (the raw output, the output the logprobs spell, a reconstruction). */
  sourceText: string;
  /** Display name of the family whose parser ran. */
  family?: string;
  content?: string;
  reasoning?: string;
  calls: ParsedCallView[];
  /** What the provider returned structured; absent when no provider parser ran (the input is raw model text). */
  provider?: { content?: string; reasoning?: string; calls: ParsedCallView[] };
  /** The provider-parse-mismatch findings' messages. */
  mismatches: string[];
}

/** Everything about one exchange except its tokens. */
export interface ExchangeView {
  id: string;
  title: string;
  /** Label/value pairs for the header (model, provider, finish, status, timing…). */
  meta: { label: string; value: string }[];
  /** Worst severity among the findings, for the header icon. */
  worst?: Severity;
  findings: FindingView[];
  /** The native text the findings and tokens index into, and how it was obtained. */
  native?: { text: string; source: 'raw' | 'rendered' };
  request?: RequestView;
  response?: ResponseView;
  wire: WireView;
  /** The parse of the turn (the Parsed tab); absent when the exchange is no model turn. */
  parsed?: ParsedView;
  /** Why analysis is missing, in one line (set instead of findings/response when it could not run). */
  unavailable?: string;
  /** Set when repair mode rewrote the response: what it changed, in one line (the "repaired" badge's tooltip). */
  repaired?: string;
  /** Set while the exchange is still streaming: what is shown is the stream so far. */
  live?: LiveView;
}

/** A stream in flight: bytes and seconds so far, and how long it has been silent. */
export interface LiveView {
  bytes: number;
  ageMs: number;
  quietMs: number;
  started: boolean;
  /** `3.2 kB · 12 s · no bytes for 42 s` */
  text: string;
}

/** A token stream in columns (cheap to post and to scan for 200,000 tokens). Per-token arrays have the same length. */
export interface TokenStreamView {
  /** Tokenizer used, e.g. `moonshotai/Kimi-K2-Instruct (tiktoken)`. */
  tokenizer: string;
  /** Where the ids come from: the server's own ids, a re-encoding of the structured response, or raw native text. */
  source: 'server' | 'reconstructed' | 'text';
  ids: number[];
  /** Each token's text as it occurs (whitespace raw; the view shows it on demand); `\xNN` for bytes that are not whole characters. */
  texts: string[];
  /** Character offsets [start, end) of each token in the native text. */
  starts: number[];
  ends: number[];
  /** Index into TOKEN_KINDS. */
  kinds: number[];
  /** Index into SEGMENT_KINDS. */
  segments: number[];
  /** Token accounting: label/value pairs (counted here vs. billed by the upstream). */
  accounting: { label: string; value: string }[];
  /**
   * The one token count the view gives (the tab's badge, the toolbar, the accounting): the completion's tokens as the
   * model emitted them, each marker one token even where the provider spelled it out as text (then `ids` holds more).
   * Absent: `ids.length`.
   */
  count?: number;
  /** What `count` counts, in a few words (`completion tokens, as billed`…). */
  countMeaning?: string;
  /** The findings placed on these tokens. They replace the exchange's list (same analysis, plus the accounting check). */
  findings: FindingView[];
}

/**
 * The model's tokenizer is not on this machine (neither shipped with Tokenscope, nor downloaded, nor in the folder
 * setting): the Tokens tab offers to download it or to choose a folder.
 */
export interface TokenizerNeededView {
  /** The Hugging Face repo it would be downloaded from. */
  repo: string;
  /** The data dir folder a download goes to. */
  dir: string;
  /** Why the last download or folder choice failed, in one line. */
  error?: string;
}

/** A tokenizer download in progress (one file of it). */
export interface TokenizerProgressView {
  file: string;
  received: number;
  total?: number;
}

export type HostMessage =
  | { type: 'exchange'; exchange: ExchangeView }
  /** While streaming, between snapshots: the clock and the silence moved, nothing else did. */
  | { type: 'live'; live: LiveView }
  /** `stream` is absent when tokens cannot be shown; `reason` says why in one line, `needed` when a tokenizer would help. */
  | { type: 'tokens'; stream?: TokenStreamView; reason?: string; needed?: TokenizerNeededView }
  /** The tokenizer download asked for with `getTokenizer` is under way; `tokens` follows when it ends. */
  | { type: 'tokenizerProgress'; progress: TokenizerProgressView }
  /** The answer to the webview's `wirePage` request with the same `seq`. */
  | { type: 'wirePage'; seq: number; page: WirePageView }
  | PanelErrorMessage;

/** The exchange view's buttons that run a Tokenscope command on the exchange (the host maps each to its command). */
export const PANEL_COMMANDS = ['rerun', 'compare', 'export', 'diffDelivered'] as const;
export type PanelCommand = (typeof PANEL_COMMANDS)[number];

export type WebviewMessage =
  | ReadyMessage
  /** Open the raw stream document at a character offset of the native text. */
  | { type: 'openRaw'; offset?: number }
  | { type: 'command'; command: PanelCommand }
  /** The Wire tab's events from `from` on (a page of WIRE_SHOWN); answered by a `wirePage` with the same `seq`. */
  | { type: 'wirePage'; seq: number; from: number }
  /** Get the tokenizer the Tokens tab says is missing: download it from the Hub, or choose a folder that holds it. */
  | { type: 'getTokenizer'; how: 'download' | 'folder' };

/** Messages from the webview are checked field by field: the host acts only on well-formed ones. */
export const isWebviewMessage = messageGuard<WebviewMessage>({
  ready: () => true,
  openRaw: (m) => m.offset === undefined || isIndex(m.offset),
  command: (m) => (PANEL_COMMANDS as readonly unknown[]).includes(m.command),
  wirePage: (m) => isIndex(m.seq) && isIndex(m.from),
  getTokenizer: (m) => m.how === 'download' || m.how === 'folder',
});
