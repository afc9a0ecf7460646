/**
 * One finished exchange → one span in the OpenTelemetry GenAI semantic conventions (inference span, kind CLIENT):
 * name `{gen_ai.operation.name} {gen_ai.request.model}`, the `gen_ai.*` request, response and usage attributes, and
 * Tokenscope's own facts under `tokenscope.` (served provider, pin, family, findings). Each finding is a span event
 * `tokenscope.finding`. Message content (`gen_ai.input.messages`, `gen_ai.output.messages`) only when asked for.
 *
 * Pure data, no SDK: ./otlp.ts hands the result to the OpenTelemetry SDK. The input must already be redacted
 * (./otlp.ts runs the export redaction pass first); every text attribute is sealed again here, and one that still
 * looks like a key is left out rather than sent.
 */
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_STREAM,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_REQUEST_TOP_P,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions/incubating';
import type { ExchangeAnalysis } from '../analyze';
import type { AssistantMessage, CapturedExchange, ChunkTiming, HistoryMessage } from '../model';
import { containsSecret, redactText, type RedactOptions } from '../redact';

export type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue>;

export interface SpanEventData {
  name: string;
  /** Epoch ms. */
  time: number;
  attributes: Attributes;
}

export interface SpanData {
  name: string;
  /** Epoch ms. */
  startTime: number;
  endTime: number;
  attributes: Attributes;
  events: SpanEventData[];
  status: { code: 'unset' | 'error'; message?: string };
}

export interface SpanOptions {
  /** Add `gen_ai.input.messages`, `gen_ai.output.messages` and `gen_ai.system_instructions` (default off). */
  content?: boolean;
  /** The user's extra redaction patterns. */
  patterns?: RedactOptions['patterns'];
}

export const FINDING_EVENT = 'tokenscope.finding';

/** The inference operation of an exchange, or undefined for what is not one (a model list, a token count). */
export function operationName(x: CapturedExchange, protocol?: string): string | undefined {
  // A WebSocket exchange (one response of the connection a GET opened) is an inference like a POST's.
  if (x.method.toUpperCase() !== 'POST' && !x.websocket) return undefined;
  const path = x.path.split('?')[0].replace(/\/+$/, '');
  if (path.endsWith('/count_tokens')) return undefined;
  if (path.endsWith('/chat/completions') || path.endsWith('/messages') || path.endsWith('/responses')) return 'chat';
  if (path.endsWith('/completions') || path.endsWith('/generate')) return 'text_completion';
  return protocol === 'openai-chat' || protocol === 'anthropic-messages' || protocol === 'openai-responses' ? 'chat' : undefined;
}

const KNOWN_HOSTS: [RegExp, string][] = [
  [/(^|\.)openrouter\.ai$/, 'openrouter'],
  [/(^|\.)anthropic\.com$/, 'anthropic'],
  [/(^|\.)openai\.com$/, 'openai'],
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)mistral\.ai$/, 'mistral_ai'],
  [/(^|\.)x\.ai$/, 'x_ai'],
];

/**
 * `gen_ai.provider.name`: the API the client spoke to through Tokenscope (a well-known value where there is one,
 * the route name otherwise). Behind OpenRouter the real upstream is `tokenscope.served_provider`.
 */
export function providerName(x: CapturedExchange): string {
  if (['openrouter', 'anthropic', 'openai', 'sglang'].includes(x.route)) return x.route;
  try {
    const host = new URL(x.upstreamUrl).hostname;
    for (const [re, name] of KNOWN_HOSTS) if (re.test(host)) return name;
  } catch {
    // fall through to the route name
  }
  return x.route;
}

function sealed(text: string, opts: SpanOptions): string | undefined {
  const out = redactText(text, { patterns: opts.patterns });
  return containsSecret(out) ? undefined : out;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function setIf(attrs: Attributes, key: string, value: AttributeValue | undefined): void {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return;
  attrs[key] = value;
}

/** Messages as lists of parts, the shape `gen_ai.input.messages` / `gen_ai.output.messages` take. */
function parts(m: { content?: string; reasoning?: string; toolCalls?: AssistantMessage['toolCalls'] }): object[] {
  const out: object[] = [];
  if (m.reasoning) out.push({ type: 'reasoning', content: m.reasoning });
  if (m.content) out.push({ type: 'text', content: m.content });
  for (const c of m.toolCalls ?? []) out.push({ type: 'tool_call', id: c.id ?? null, name: c.name, arguments: c.arguments });
  return out;
}

function inputMessages(messages: HistoryMessage[]): object[] {
  return messages
    .filter((m) => m.role !== 'system' && m.role !== 'developer')
    .map((m) =>
      m.role === 'tool'
        ? { role: 'tool', parts: [{ type: 'tool_call_response', id: m.toolCallId ?? null, response: m.content ?? '' }] }
        : { role: m.role, parts: parts(m) },
    );
}

function rawBody(x: CapturedExchange): Record<string, unknown> | undefined {
  if (!x.requestBody) return undefined;
  try {
    const v = JSON.parse(x.requestBody) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `error.type` for a failed exchange: the HTTP status, the upstream's error code, or what cut it short. */
function errorType(x: CapturedExchange, result: ExchangeAnalysis | undefined): string | undefined {
  if (x.status !== undefined && x.status >= 400) return String(x.status);
  const upstream = result?.response.error;
  if (upstream) return upstream.code !== undefined ? String(upstream.code) : 'upstream_error';
  if (x.state === 'incomplete') return 'incomplete';
  if (x.state === 'error') return x.status === undefined ? 'no_response' : 'error';
  return undefined;
}

/**
 * The span of one finished exchange (already redacted, request body included), or undefined when the exchange is
 * no inference call (`GET /models`, `count_tokens`).
 */
export function exchangeSpan(
  x: CapturedExchange,
  result: ExchangeAnalysis | undefined,
  chunks: ChunkTiming[],
  opts: SpanOptions = {},
): SpanData | undefined {
  const response = result?.response;
  const request = result?.request;
  const op = operationName(x, response?.protocol ?? request?.protocol);
  if (!op) return undefined;
  const body = rawBody(x);
  const requestModel = x.requestModel ?? request?.model ?? (typeof body?.model === 'string' ? body.model : undefined);
  const attrs: Attributes = {};
  attrs[ATTR_GEN_AI_OPERATION_NAME] = op;
  attrs[ATTR_GEN_AI_PROVIDER_NAME] = providerName(x);
  setIf(attrs, ATTR_GEN_AI_REQUEST_MODEL, requestModel);
  setIf(attrs, ATTR_GEN_AI_REQUEST_STREAM, request?.stream ?? (typeof body?.stream === 'boolean' ? body.stream : undefined));
  setIf(attrs, ATTR_GEN_AI_REQUEST_MAX_TOKENS, num(body?.max_tokens) ?? num(body?.max_completion_tokens) ?? num(body?.max_output_tokens));
  setIf(attrs, ATTR_GEN_AI_REQUEST_TEMPERATURE, num(body?.temperature));
  setIf(attrs, ATTR_GEN_AI_REQUEST_TOP_P, num(body?.top_p));
  setIf(attrs, ATTR_GEN_AI_CONVERSATION_ID, x.sessionId);
  try {
    const u = new URL(x.upstreamUrl);
    attrs[ATTR_SERVER_ADDRESS] = u.hostname;
    attrs[ATTR_SERVER_PORT] = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
  } catch {
    // an unparsable URL is left out
  }
  setIf(attrs, ATTR_HTTP_RESPONSE_STATUS_CODE, x.status);

  if (response) {
    setIf(attrs, ATTR_GEN_AI_RESPONSE_MODEL, response.model);
    setIf(attrs, ATTR_GEN_AI_RESPONSE_ID, response.id ?? x.generationId);
    // A stream that ended before its final event reports `error` (the convention's wording).
    const finish = response.streamed && !response.terminated ? 'error' : response.finishReason;
    setIf(attrs, ATTR_GEN_AI_RESPONSE_FINISH_REASONS, finish ? [finish] : undefined);
    const u = response.usage;
    setIf(attrs, ATTR_GEN_AI_USAGE_INPUT_TOKENS, u?.promptTokens);
    setIf(attrs, ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, u?.completionTokens);
    setIf(attrs, ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, u?.cachedTokens);
    setIf(attrs, ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, u?.reasoningTokens);
    setIf(attrs, 'tokenscope.usage.cost', u?.cost);
  } else {
    setIf(attrs, ATTR_GEN_AI_RESPONSE_ID, x.generationId);
  }
  const first = chunks.find((c) => c.length > 0);
  setIf(attrs, ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, first ? first.t / 1000 : undefined);

  const err = errorType(x, result);
  setIf(attrs, ATTR_ERROR_TYPE, err);

  // Tokenscope's own facts.
  attrs['tokenscope.exchange.id'] = x.id;
  attrs['tokenscope.state'] = x.state;
  attrs['tokenscope.route'] = x.route;
  setIf(attrs, 'tokenscope.agent', x.agent);
  setIf(attrs, 'tokenscope.served_provider', x.servedProvider ?? response?.provider);
  setIf(attrs, 'tokenscope.pin.requested', x.pin?.requested);
  setIf(attrs, 'tokenscope.pin.honoured', x.pin?.honoured);
  setIf(attrs, 'tokenscope.family', result?.analysis.family);
  // Repair mode delivered something other than the upstream's bytes (the span describes the upstream's answer).
  setIf(
    attrs,
    'tokenscope.repaired',
    x.repair
      ? x.repair.calls.some((c) => c.status === 'delivered') || x.repair.removedChars.content + x.repair.removedChars.reasoning > 0
      : undefined,
  );
  setIf(attrs, 'tokenscope.repair.calls_delivered', x.repair?.calls.filter((c) => c.status === 'delivered').length);
  setIf(attrs, 'tokenscope.parent_id', x.parentId);
  setIf(attrs, 'tokenscope.target', x.target);
  setIf(attrs, 'tokenscope.ttfb_ms', x.ttfbMs);
  const findings = result?.analysis.findings ?? [];
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  attrs['tokenscope.findings.errors'] = counts.error;
  attrs['tokenscope.findings.warnings'] = counts.warning;
  setIf(attrs, 'tokenscope.findings.rules', [...new Set(findings.map((f) => f.rule))]);

  const endTime = x.endedAt ?? x.startedAt;
  const events: SpanEventData[] = findings.map((f) => {
    const a: Attributes = {
      'tokenscope.finding.rule': f.rule,
      'tokenscope.finding.severity': f.severity,
      'tokenscope.finding.location': f.location,
    };
    setIf(a, 'tokenscope.finding.message', sealed(f.message, opts));
    setIf(a, 'tokenscope.finding.range.start', f.start);
    setIf(a, 'tokenscope.finding.range.end', f.end);
    setIf(a, 'tokenscope.finding.expected_at', f.expectedAt);
    setIf(a, 'tokenscope.finding.expected_marker', f.expectedMarker);
    return { name: FINDING_EVENT, time: endTime, attributes: a };
  });

  if (opts.content) {
    const system = request?.messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => ({ type: 'text', content: m.content ?? '' }));
    if (system?.length) setIf(attrs, ATTR_GEN_AI_SYSTEM_INSTRUCTIONS, sealed(JSON.stringify(system), opts));
    if (request) setIf(attrs, ATTR_GEN_AI_INPUT_MESSAGES, sealed(JSON.stringify(inputMessages(request.messages)), opts));
    const out = result?.analysis.message ?? response?.message;
    if (out) {
      const message = {
        role: 'assistant',
        parts: parts(out),
        finish_reason: (attrs[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] as string[] | undefined)?.[0] ?? null,
      };
      setIf(attrs, ATTR_GEN_AI_OUTPUT_MESSAGES, sealed(JSON.stringify([message]), opts));
    }
  }

  const status: SpanData['status'] = err
    ? { code: 'error', message: sealed(x.error ?? response?.error?.message ?? err, opts) ?? err }
    : counts.error > 0
      ? { code: 'error', message: `${counts.error} error finding${counts.error === 1 ? '' : 's'}` }
      : { code: 'unset' };
  return {
    name: requestModel ? `${op} ${requestModel}` : op,
    startTime: x.startedAt,
    endTime: Math.max(endTime, x.startedAt),
    attributes: attrs,
    events,
    status,
  };
}
