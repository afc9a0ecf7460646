/**
 * A repro: one captured exchange made ready to leave the machine. It is redacted (redaction.ts); its findings are the
 * store's analysis when the redaction left what the analysis reads unchanged, else the redacted copy is analysed
 * (by the analysis service's function), so findings, ranges and excerpts describe exactly the bytes that are shared. Every export format takes a
 * `Repro`, and only `prepareRepro` makes one: no format can be handed an unredacted capture.
 */
import { storedResult, type ExchangeAnalysis } from '../analyze';
import { analyzeCaptured } from '../capture/analysis';
import { findCapture } from '../capture/store';
import { getFormat } from '../families/index';
import { exchangeTokenStream } from '../tokens/exchange';
import type { TokenStream } from '../tokens/stream';
import type { Tokenizer } from '../tokens/types';
import { containsSecret } from '../redact';
import { httpEquivalent } from '../wire/websocket-request';
import type { CaptureReader, ChunkTiming, CapturedExchange, Finding, ToolDef, Usage } from '../model';
import { nameKey, ProviderDirectory, providerOfTag, type SlugCache, type SlugEntry } from '../policy/slugs';
import { redactCapture, summarizeRedactions, type CaptureInput, type RedactionItem, type UserPattern } from './redaction';

declare const reproBrand: unique symbol;

export interface Repro {
  readonly [reproBrand]: true;
  /** The redacted exchange. */
  readonly exchange: CapturedExchange;
  /** The redacted response body, byte for byte as received otherwise. */
  readonly responseBody: Uint8Array;
  readonly chunks: ChunkTiming[];
  /** Analysis of the redacted exchange. */
  readonly analysis: ExchangeAnalysis;
  /** What the redaction pass replaced. */
  readonly redactions: RedactionItem[];
  /** Version of the Tokenscope that made the export. */
  readonly tokenscopeVersion: string;
  /** The user patterns in force, so composed texts (Markdown, YAML) get the same treatment. */
  readonly patterns: UserPattern[];
  /** The token stream of the turn in the model's own tokenizer, when one was given. */
  readonly tokens?: TokenStream;
  /** OpenRouter's provider slugs the capture store keeps: the replay pins the served provider by its real slug. */
  readonly providerSlugs?: readonly SlugEntry[];
  /** Why no listing could name the served provider's slug, when the export tried (./slugs.ts). */
  readonly slugGuess?: string;
}

export interface ReproOptions {
  /** User patterns for the redaction pass. */
  patterns?: UserPattern[];
  /** Version stamped into exports (the CLI and the extension pass their own). */
  tokenscopeVersion?: string;
  /** The model's tokenizer: adds the token stream and token accounting to the bundle and the issue. */
  tokenizer?: Tokenizer;
}

/** Redacts a capture and analyses the result. */
export function prepareRepro(input: CaptureInput, opts: ReproOptions = {}): Repro {
  const { capture, report } = redactCapture(input, { patterns: opts.patterns });
  const analysis = redactedResult(input, capture);
  const redactions = summarizeRedactions(report);
  // A key the model streamed over several events cannot be cut out of the raw stream; say so in the preview.
  if (splitSecret(analysis)) {
    redactions.push({
      label: 'split-key',
      where: 'response (a key-shaped string spans several stream events; excerpts are redacted, the raw stream is not)',
      preview: '…',
      count: 1,
    });
  }
  const r = {
    exchange: capture.exchange,
    responseBody: capture.responseBody,
    chunks: capture.chunks,
    analysis,
    redactions,
    tokenscopeVersion: opts.tokenscopeVersion ?? 'unknown',
    patterns: opts.patterns ?? [],
    ...(input.providerSlugs && { providerSlugs: input.providerSlugs }),
    ...(input.slugGuess && { slugGuess: input.slugGuess }),
  } as Repro;
  return opts.tokenizer ? withTokens(r, opts.tokenizer) : r;
}

/** The repro with the turn's token stream in the model's own tokenizer (and the token accounting). */
export function withTokens(r: Repro, tokenizer: Tokenizer): Repro {
  const { response, request, analysis } = r.analysis;
  return { ...r, tokens: exchangeTokenStream({ tokenizer, response, request, analysis }).stream };
}

/** The analysis of a redacted capture: the store's, when the redaction changed nothing it read; else analysed once. */
export function redactedResult(input: CaptureInput, redacted: CaptureInput): ExchangeAnalysis {
  const { exchange, responseBody, chunks } = redacted;
  return input.stored && sameForAnalysis(input, redacted)
    ? storedResult(exchange, responseBody, chunks, input.stored)
    : analyzeCaptured(exchange, responseBody, chunks);
}

/** Whether the redaction left every input of the analysis as it was (the common case: the store masked keys already). */
function sameForAnalysis(a: CaptureInput, b: CaptureInput): boolean {
  const x = a.exchange;
  const y = b.exchange;
  return a.responseBody === b.responseBody && x.requestBody === y.requestBody && x.path === y.path && x.error === y.error;
}

function splitSecret(a: ExchangeAnalysis): boolean {
  const m = a.response.message;
  return [m.content, m.reasoning, a.analysis.native.text, ...m.toolCalls.map((c) => c.arguments)].some(
    (t) => t !== undefined && containsSecret(t),
  );
}

/** Reads one capture from the store by id or unique id prefix; a missing or ambiguous id is a UserError. */
export function readCapture(reader: CaptureReader, id: string): CaptureInput {
  const exchange = findCapture(reader, id);
  const res = reader.readResponse(exchange.id) ?? { bytes: new Uint8Array(0), chunks: [] };
  const stored = reader.readAnalysis?.(exchange.id);
  const providerSlugs = (reader as Partial<SlugCache>).providerSlugs?.();
  return {
    exchange,
    responseBody: res.bytes,
    chunks: res.chunks,
    ...(stored && { stored }),
    ...(providerSlugs?.length && { providerSlugs }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Facts every format reports, computed once here.

/** Case-insensitive header lookup. */
export function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === want) return v;
  return undefined;
}

/** The request body as JSON, when it is JSON. */
export function requestJson(r: Repro): Record<string, unknown> | undefined {
  // A WebSocket exchange's response.create message: the POST body it stands for.
  const text = httpEquivalent(r.exchange)?.body ?? r.exchange.requestBody;
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export interface ReproFacts {
  agent?: { name?: string; userAgent?: string; version?: string };
  /** Model requested, and model the upstream says it served. */
  model?: string;
  servedModel?: string;
  /** Provider that served the request (OpenRouter display name), when known. */
  provider?: string;
  /** Serving engine, when the route or the response headers tell. */
  engine?: string;
  protocol?: string;
  streamed?: boolean;
  finishReason?: string;
  nativeFinishReason?: string;
  usage?: Usage;
  tools: ToolDef[];
  /** Tool calls the model wrote, whether or not they reached the agent as structured calls. */
  callsAttempted: number;
  /** Structured tool calls the agent received. */
  callsDelivered: number;
  findings: Finding[];
  /** The first error finding, else the first finding. */
  primary?: Finding;
}

/** `opencode/0.3.1 ai-sdk/…` → `0.3.1`: the version of the first product token. */
function agentVersion(userAgent: string | undefined): string | undefined {
  const m = userAgent && /^[^\s/]+\/(v?\d[\w.+-]*)/.exec(userAgent.trim());
  return m ? m[1] : undefined;
}

/** Engines that name themselves in response headers or through the route. */
function engineOf(x: CapturedExchange): string | undefined {
  const server = header(x.responseHeaders, 'server');
  if (x.route === 'sglang' || x.target?.startsWith('sglang:')) return 'SGLang';
  if (server && /vllm|sglang|llama\.cpp|ollama|tgi|text-generation/i.test(server)) return server;
  return undefined;
}

export function facts(r: Repro): ReproFacts {
  const x = r.exchange;
  const { response: res, request: req } = r.analysis;
  const userAgent = header(x.requestHeaders, 'user-agent');
  const findings = r.analysis.analysis.findings;
  return {
    // The first product token's version is the agent's only when the agent is known (a browser says `Mozilla/5.0`).
    ...(x.agent || userAgent ? { agent: { name: x.agent, userAgent, version: x.agent ? agentVersion(userAgent) : undefined } } : {}),
    model: req?.model,
    servedModel: res.model,
    provider: x.servedProvider ?? res.provider,
    engine: engineOf(x),
    protocol: res.protocol,
    streamed: res.streamed,
    finishReason: res.finishReason,
    nativeFinishReason: res.nativeFinishReason,
    usage: res.usage,
    tools: req?.tools ?? [],
    callsAttempted: callsAttempted(r),
    callsDelivered: res.message.toolCalls.length,
    findings,
    primary: findings.find((f) => f.severity === 'error') ?? findings[0],
  };
}

/**
 * Calls the model wrote: the family's parse of the native text counts markup that never became a structured call
 * (markers leaked into content), which the wire's own count misses.
 */
function callsAttempted(r: Repro): number {
  const { analysis, response } = r.analysis;
  const parsed = analysis.family ? getFormat(analysis.family).parse(analysis.native.text).message.toolCalls.length : 0;
  return Math.max(parsed, response.message.toolCalls.length);
}

/**
 * The OpenRouter provider a replay pins: the one that served the captured answer (that is the failure to see
 * again), by the slug OpenRouter's listings gave for its display name (kept in the capture store; a requested pin of
 * that provider, `deepinfra/fp4`, is kept as requested). When no listing named it, the requested pin whose name
 * matches; else a slug derived from the display name, a guess `derivedFrom` says, with `why` no listing named it
 * (outputs tell the user to check it). Without a served provider, the requested pin.
 */
export function replayPin(r: Repro): { slug: string; derivedFrom?: string; why?: string } | undefined {
  const requested = r.exchange.pin?.requested ?? [];
  const served = facts(r).provider;
  if (!served) return requested.length > 0 ? { slug: requested[0] } : undefined;
  const { slug, known } = new ProviderDirectory(r.providerSlugs ?? []).slugOf(served);
  const ofProvider = (s: string) => providerOfTag(s.trim().toLowerCase());
  if (known) return { slug: requested.find((s) => ofProvider(s) === slug) ?? slug };
  const match = requested.find((s) => nameKey(ofProvider(s)) === nameKey(served));
  return match ? { slug: match } : { slug, derivedFrom: served, why: r.slugGuess ?? 'no OpenRouter listing Tokenscope has read names it' };
}

/** True when the exchange went to OpenRouter. */
export function isOpenRouter(x: CapturedExchange): boolean {
  return x.route === 'openrouter' || /^https?:\/\/(?:[\w-]+\.)*openrouter\.ai\b/i.test(x.upstreamUrl);
}
