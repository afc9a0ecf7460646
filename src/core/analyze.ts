/**
 * The analysis entry point: one response (structured from the wire, or raw native text) plus, when known, the
 * request → the model family, the native text of the turn with its segments, and every check's findings.
 * Used by the CLI (`lint`, `show`), the capture store (each finished exchange), the extension and the exports.
 */
import { CAPTURE_TRUNCATED, checks, exchangeChecks, INTERNAL_ERROR, requestChecks } from './checks/index';
import { collapseFindings } from './checks/collapse';
import type { Check, CheckContext } from './checks/types';
import { detectFamily, getFormat } from './families/index';
import type { ModelFormat } from './families/shared/format';
import type {
  Analysis,
  AssistantMessage,
  CapturedExchange,
  ChunkTiming,
  ExchangeSummary,
  FamilyId,
  Finding,
  NativeText,
  NormalizedRequest,
  ParsedNative,
  ParsedResponse,
} from './model';
import { endedTurn, normalizeRequest, parseResponseBody, protocolFromPath, type BodyHint } from './wire/index';
import { parseResponseChunks } from './wire/chunked';
import { withTextIndex } from './families/shared/text';

export interface AnalyzeInput {
  /** The response as the wire layer parsed it. `native-text` and SGLang `/generate` responses are raw text. */
  response?: ParsedResponse;
  /** Raw model output, when there is no response envelope at all (wins over `response`'s text). */
  nativeText?: string;
  request?: NormalizedRequest;
  /** A model id from outside the exchange (the user's `--model`), used when neither response nor request names one. */
  model?: string;
  /** Forces the family (the user's `--family`). */
  family?: FamilyId;
  /**
   * Whether the exchange is a model turn. Other exchanges (a model list, embeddings, a token count) get no turn
   * checks, only the exchange-level ones (an upstream error). Default: `isModelTurn(response)`.
   */
  turn?: boolean;
  /** The prompt's length as rendered locally with the model's chat template (tokens/prompt.ts), for `prompt-token-mismatch`. */
  promptTokens?: number;
}

/** Protocols whose body text is the model's own output, markers included. */
const RAW_PROTOCOLS = new Set(['native-text', 'sglang-generate']);

/** Family, native text and findings (sorted by position; unpositioned ones last) of one turn. Never throws on data. */
export function analyze(input: AnalyzeInput): Analysis {
  return analyzeWithContext(input).analysis;
}

/** `analyze`, and the context its checks saw (for the parse report); no context for an exchange that is no turn. */
export function analyzeWithContext(input: AnalyzeInput): { analysis: Analysis; ctx?: CheckContext } {
  if (!(input.turn ?? isModelTurn(input.response))) return { analysis: exchangeOnly(input) };
  // The searches of a long raw output (family detection, the parse, the marker scans) share one index of it.
  return withTextIndex(rawTextOf(input), () => {
    const { ctx, familySource, message, failure } = prepare(input);
    const findings = runChecks(ctx);
    if (failure) findings.push(failure);
    return { analysis: { family: ctx.format?.id, familySource, native: ctx.native, message, findings }, ctx };
  });
}

/** The model's own output when the input is it (raw text, SGLang `/generate`), markers and all. */
function rawTextOf(input: AnalyzeInput): string | undefined {
  const { response } = input;
  return input.nativeText ?? (response && RAW_PROTOCOLS.has(response.protocol) ? (response.message.content ?? '') : undefined);
}

/**
 * Whether a response is a model turn by its shape: a JSON document of no model API (`{"object": "list", "data": […]}`
 * from /models, embeddings, `{"input_tokens": 12}` from count_tokens) is not. An empty body or a stream of unknown
 * protocol may still be a turn that failed, and is analysed as one.
 */
export function isModelTurn(response: ParsedResponse | undefined): boolean {
  return !(response && response.protocol === 'unknown' && !response.streamed && response.events.length > 0);
}

/**
 * A request body on its own (`lint --request` without a response): the family from `family`, the request's model
 * or `model`, and the findings of the rules that judge the request alone (its history).
 */
export function analyzeRequest(input: { request: NormalizedRequest; model?: string; family?: FamilyId }): {
  analysis: Analysis;
  ctx: CheckContext;
} {
  const message: AssistantMessage = { toolCalls: [] };
  const native: Analysis['native'] = { text: '', segments: [], source: 'rendered' };
  const picked = pickFamily({ request: input.request, model: input.model, family: input.family }, () => '');
  // A model id given from outside stands for the one the body does not name (rules read the request's).
  const request = input.request.model === undefined && input.model !== undefined ? { ...input.request, model: input.model } : input.request;
  const ctx: CheckContext = { format: picked?.format, request, message, native };
  const findings = runChecks(ctx, requestChecks);
  return { analysis: { family: picked?.format.id, familySource: picked?.source ?? 'none', native, message, findings }, ctx };
}

/** An exchange that is no model turn: nothing to render, only the exchange-level rules. */
function exchangeOnly(input: AnalyzeInput): Analysis {
  const native: Analysis['native'] = { text: '', segments: [], source: 'rendered' };
  const message: AssistantMessage = { toolCalls: [] };
  const ctx: CheckContext = { request: input.request, response: input.response, message, native };
  return { familySource: 'none', native, message, findings: runChecks(ctx, exchangeChecks) };
}

/**
 * Everything the checks see, built from the input: the family, the native text and its parse. Family modules never
 * throw by contract; if one does anyway, the turn is analysed without a family and `failure` says so.
 */
export function prepare(input: AnalyzeInput): {
  ctx: CheckContext;
  familySource: NonNullable<Analysis['familySource']>;
  message: AssistantMessage;
  failure?: Finding;
} {
  try {
    return build(input);
  } catch (e) {
    const failure: Finding = {
      rule: INTERNAL_ERROR.id,
      severity: INTERNAL_ERROR.severity,
      message: `A format module failed on this turn (${e instanceof Error ? e.message : String(e)}); it was analysed without a family.`,
      location: 'analysis',
    };
    return { ...build({ ...input, family: undefined, model: undefined }, false), failure };
  }
}

function build(input: AnalyzeInput, detect = true): ReturnType<typeof prepare> {
  const { response, request } = input;
  const raw = rawTextOf(input);
  const structured = raw === undefined ? response?.message : undefined;

  const picked = detect ? pickFamily(input, () => raw ?? (structured ? freeTextOf(structured) : '')) : undefined;
  const format = picked?.format;

  let native: Analysis['native'];
  let parsed: (() => ParsedNative | undefined) | undefined;
  let message: AssistantMessage;
  if (raw !== undefined) {
    const p = format?.parse(raw);
    parsed = () => p;
    native = { text: raw, segments: p?.segments ?? wholeContent(raw), source: 'raw' };
    message = p?.message ?? { content: raw, toolCalls: [] };
  } else {
    message = structured ?? { toolCalls: [] };
    // A turn cut short is rendered as far as it got: no end-of-turn marker the model never sent.
    const rendered = format ? format.render(message, { complete: !response || endedTurn(response) }) : renderPlain(message);
    native = { ...rendered, source: 'rendered' };
    // The parse of a reconstruction is well-formed by construction and no built-in rule needs it: parse on demand.
    let p: ParsedNative | undefined;
    parsed = format ? () => (p ??= format.parse(rendered.text)) : undefined;
  }

  const ctx: CheckContext = {
    format,
    request,
    message,
    // Raw text has no wire envelope: there is no finish reason or event stream to judge.
    response: response && response.protocol !== 'native-text' ? response : undefined,
    native,
    promptTokens: input.promptTokens,
    get parsed() {
      return parsed?.();
    },
  };
  return { ctx, familySource: picked?.source ?? 'none', message };
}

/** Given family → a model id (response, request, then the caller's) → the markers in the text → none. */
function pickFamily(
  input: AnalyzeInput,
  text: () => string,
): { format: ModelFormat; source: 'given' | 'model-id' | 'markers' } | undefined {
  if (input.family) return { format: getFormat(input.family), source: 'given' };
  for (const id of [input.response?.model, input.request?.model, input.model]) {
    const hit = id ? detectFamily(id) : undefined;
    if (hit) return hit;
  }
  const t = text();
  return t ? detectFamily(undefined, t) : undefined;
}

/** Every piece of model-written text of a structured turn, for marker-based family detection. */
function freeTextOf(m: AssistantMessage): string {
  return [m.reasoning ?? '', m.content ?? '', ...m.toolCalls.map((c) => `${c.name}\n${c.arguments}`)].join('\n');
}

function wholeContent(text: string): NativeText['segments'] {
  return text ? [{ kind: 'content', start: 0, end: text.length }] : [];
}

/**
 * The turn laid out without any family's markup (the family is unknown): reasoning, content, then one line per
 * call, `name arguments`. It gives family-independent findings (JSON, schema, finish reason) a place to point at.
 */
export function renderPlain(m: AssistantMessage): NativeText {
  let text = '';
  const segments: NativeText['segments'] = [];
  const put = (s: string, kind?: NativeText['segments'][number]['kind'], callIndex?: number): void => {
    const start = text.length;
    text += s;
    if (kind && s)
      segments.push(callIndex === undefined ? { kind, start, end: text.length } : { kind, start, end: text.length, callIndex });
  };
  if (m.reasoning) put(m.reasoning, 'reasoning');
  if (m.content) {
    if (text) put('\n\n');
    put(m.content, 'content');
  }
  m.toolCalls.forEach((c, i) => {
    if (text) put('\n');
    const start = text.length;
    put(c.name, 'call-name', i);
    put(' ');
    put(c.arguments, 'arguments', i);
    segments.push({ kind: 'call', start, end: text.length, callIndex: i });
  });
  return { text, segments: segments.sort((a, b) => a.start - b.start || b.end - a.end) };
}

/**
 * Runs the checks; one that throws becomes an `internal-error` finding instead of failing the analysis. The findings
 * come back as the user reads them (checks/collapse.ts): one per span, and a defect repeated at several places once.
 */
export function runChecks(ctx: CheckContext, list: readonly Check[] = checks): Finding[] {
  const findings: Finding[] = [];
  for (const check of list) {
    try {
      findings.push(...check.run(ctx));
    } catch (e) {
      findings.push({
        rule: INTERNAL_ERROR.id,
        severity: INTERNAL_ERROR.severity,
        message: `The ${check.id} check failed (${e instanceof Error ? e.message : String(e)}); its findings are missing.`,
        location: 'analysis',
      });
    }
  }
  return collapseFindings(sortFindings(findings));
}

/** Findings in text order; those without a position (wire, finish reason, request history) after, in rule order. */
function sortFindings(findings: Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => {
      const sa = a.f.start ?? Infinity;
      const sb = b.f.start ?? Infinity;
      if (sa !== sb) return sa - sb;
      return (a.f.end ?? Infinity) - (b.f.end ?? Infinity) || a.i - b.i;
    })
    .map((x) => x.f);
}

export interface ExchangeAnalysis {
  response: ParsedResponse;
  request?: NormalizedRequest;
  analysis: Analysis;
  summary: ExchangeSummary;
  /** The context the checks saw (absent for an exchange that is no model turn). */
  ctx?: CheckContext;
}

/** A captured exchange → parsed response and request, analysis and the summary the capture list shows. */
export function analyzeExchange(exchange: CapturedExchange, responseBody: Uint8Array, chunks?: ChunkTiming[]): ExchangeAnalysis {
  // A body the proxy stopped decoding (a decompression bomb) holds only a start: checks on it would mislead.
  if (exchange.notAnalysed) return notAnalysedResult(exchange);
  const { response, request } = parseExchange(exchange, responseBody, chunks);
  // Off the turn endpoints, only a body that parsed as a known model API is a turn (a stored completion fetched by id).
  const turn = turnEndpoint(exchange) || TURN_PROTOCOLS.has(response.protocol);
  const { analysis, ctx } = analyzeWithContext({ response, request, model: exchange.requestModel, turn });
  const cut = exchange.truncated;
  if (cut) {
    analysis.findings.push({
      rule: CAPTURE_TRUNCATED.id,
      severity: CAPTURE_TRUNCATED.severity,
      message: `Tokenscope kept the first ${cut.keptBytes} of ${cut.receivedBytes} decoded response bytes (the per-body cap); the client received them all, the ${cut.receivedBytes - cut.keptBytes} bytes after the cut were not stored or analysed.`,
      location: 'wire',
    });
  }
  const summary = summarize(response, analysis, request);
  if (!summary.provider && exchange.servedProvider) summary.provider = exchange.servedProvider;
  return { response, request, analysis, summary, ctx };
}

/**
 * The result of an analysis stored earlier (capture/analysis.ts), completed with the exchange parsed again: the same
 * findings object readers show, and the context the parse report needs. No check runs here.
 */
export function storedResult(
  exchange: CapturedExchange,
  responseBody: Uint8Array,
  chunks: ChunkTiming[] | undefined,
  stored: { analysis: Analysis; summary: ExchangeSummary },
): ExchangeAnalysis {
  const { response, request } = parseExchange(exchange, responseBody, chunks);
  const { analysis, summary } = stored;
  const turn = turnEndpoint(exchange) || TURN_PROTOCOLS.has(response.protocol);
  if (!turn) return { response, request, analysis, summary };
  let format: ModelFormat | undefined;
  try {
    format = analysis.family ? getFormat(analysis.family) : undefined;
  } catch {
    format = undefined; // a family this version no longer knows: the report goes without its parse
  }
  let parsed: ParsedNative | undefined;
  const ctx: CheckContext = {
    format,
    request,
    message: analysis.message,
    response: response.protocol !== 'native-text' ? response : undefined,
    native: analysis.native,
    get parsed() {
      return format ? (parsed ??= format.parse(analysis.native.text)) : undefined;
    },
  };
  return { response, request, analysis, summary, ctx };
}

/** Protocols of model turns (what is not `native-text` or `unknown`). */
const TURN_PROTOCOLS = new Set(['openai-chat', 'anthropic-messages', 'openai-responses', 'sglang-generate']);

/** A POST to an endpoint that generates a turn: chat/completions, completions, messages, responses, generate. */
/** The result for an exchange whose body was not analysed: one finding that says why, no checks run. */
function notAnalysedResult(exchange: CapturedExchange): ExchangeAnalysis {
  const { response, request } = parseExchange(exchange, new Uint8Array(0));
  const finding: Finding = {
    rule: CAPTURE_TRUNCATED.id,
    severity: CAPTURE_TRUNCATED.severity,
    message: `Tokenscope did not analyse this response: ${exchange.notAnalysed!.replace(/^not analysed: /, '')}.`,
    location: 'wire',
  };
  const analysis: Analysis = {
    familySource: 'none',
    native: { text: '', segments: [], source: 'rendered' },
    message: { toolCalls: [] },
    findings: [finding],
  };
  return { response, request, analysis, summary: summarize(response, analysis, request) };
}

function turnEndpoint(exchange: CapturedExchange): boolean {
  // A WebSocket exchange is one response of the connection its GET opened: a turn like a POST's.
  return (exchange.method.toUpperCase() === 'POST' || exchange.websocket !== undefined) && protocolFromPath(exchange.path) !== undefined;
}

/**
 * The response body parsed with what the exchange knows (content type, chunk timing, HTTP status, who cut it short),
 * and its request. The path names the protocol only on a turn endpoint: elsewhere (`GET /v1/models`,
 * `/v1/messages/count_tokens`, a GET listing stored completions) the body says what it is.
 */
export function parseExchange(
  exchange: CapturedExchange,
  responseBody: Uint8Array,
  chunks?: ChunkTiming[],
): { response: ParsedResponse; request?: NormalizedRequest } {
  return exchangeParsed(exchange, parseResponseBody(responseBody, { ...bodyHint(exchange), chunks }));
}

/**
 * `parseExchange` on the response read chunk by chunk (the store's `readResponseFrames`): a stream's events are
 * folded as they come and not kept (wire/chunked.ts), so a 200 MB stream costs memory for what it says, not its size.
 */
export function parseExchangeChunks(
  exchange: CapturedExchange,
  frames: Iterable<{ bytes: Uint8Array; t?: number }>,
): { response: ParsedResponse; request?: NormalizedRequest } {
  return exchangeParsed(exchange, parseResponseChunks(frames, bodyHint(exchange)));
}

export function bodyHint(exchange: CapturedExchange): BodyHint {
  return { path: turnEndpoint(exchange) ? exchange.path : undefined, contentType: headerValue(exchange.responseHeaders, 'content-type') };
}

function exchangeParsed(exchange: CapturedExchange, response: ParsedResponse): { response: ParsedResponse; request?: NormalizedRequest } {
  if (exchange.status !== undefined) response.status = exchange.status;
  textErrorBody(response);
  const cutBy = cutByOf(exchange);
  if (cutBy) response.cutBy = cutBy;
  if (cutBy === 'idle') response.idleSeconds = idleSecondsOf(exchange.error!);
  return { response, request: requestOf(exchange) };
}

/**
 * An HTTP error answered with a body that is neither JSON nor SSE (a proxy's HTML page, `upstream connect error`,
 * plain text): that text is the upstream's error message, reported by upstream-error (cut when shown), not a
 * malformed API body.
 */
function textErrorBody(response: ParsedResponse): void {
  if (response.error || response.streamed || response.status === undefined || response.status < 400 || response.events.length !== 1) return;
  const i = response.wireIssues.findIndex((w) => w.code === 'invalid-json' && w.eventIndex === 0);
  if (i < 0) return;
  response.wireIssues.splice(i, 1);
  response.error = { code: response.status, message: response.events[0].data.trim() || '(an empty text body)' };
}

/**
 * Who cut an incomplete exchange short when it was not the upstream, from the capture's reason (the wording of
 * proxy/server.ts and capture/store.ts): the client closing the connection, or Tokenscope stopping mid-capture.
 */
function cutByOf(exchange: CapturedExchange): ParsedResponse['cutBy'] {
  if (exchange.truncated) return 'tokenscope';
  const reason = exchange.error;
  if (exchange.state !== 'incomplete' || !reason) return undefined;
  if (reason.startsWith('the client closed the connection')) return 'client';
  if (reason.startsWith('interrupted: Tokenscope stopped')) return 'tokenscope';
  if (reason.includes('Tokenscope ended the response (idle timeout)')) return 'idle';
  return undefined;
}

/** `the upstream sent nothing for 300 s mid-stream…` (proxy/relay.ts) → 300; `1500 ms` → 1.5. */
function idleSecondsOf(reason: string): number | undefined {
  const m = /sent nothing for ([\d.]+) (s|ms)\b/.exec(reason);
  return m ? Number(m[1]) / (m[2] === 'ms' ? 1000 : 1) : undefined;
}

/** The request body as the wire layer normalizes it; undefined when absent or not JSON (the response is still analysed). */
function requestOf(exchange: CapturedExchange): NormalizedRequest | undefined {
  if (!exchange.requestBody) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(exchange.requestBody);
  } catch {
    return undefined;
  }
  return normalizeRequest(body, { path: exchange.path });
}

function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

export function summarize(response: ParsedResponse, analysis: Analysis, request?: NormalizedRequest): ExchangeSummary {
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of analysis.findings) counts[f.severity]++;
  const summary: ExchangeSummary = {
    protocol: response.protocol,
    model: response.model ?? request?.model,
    provider: response.provider,
    family: analysis.family,
    finishReason: response.finishReason,
    streamed: response.streamed,
    usage: response.usage,
    counts,
    rules: analysis.findings.map((f) => f.rule),
  };
  for (const k of Object.keys(summary) as (keyof ExchangeSummary)[]) if (summary[k] === undefined) delete summary[k];
  return summary;
}
