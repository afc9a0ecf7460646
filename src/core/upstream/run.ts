/**
 * One request sent by Tokenscope itself (a re-run, one sample of a comparison): to an OpenRouter provider (pinned or
 * not) or an SGLang server, recorded through the capture store like any proxied exchange when a store is given,
 * then parsed, analysed and measured. A failure is an outcome too (status, error body, one-line reason), never an
 * exception, except a UserError about the target itself (no API key, SGLang down) which the caller reports.
 */
import { parseExchange, type ExchangeAnalysis } from '../analyze';
import { analyzeCaptured, resultWhenAnalysed } from '../capture/analysis';
import type { CaptureStore, ExchangeWriter } from '../capture/store';
import type { Analysis, CapturedExchange, ChunkTiming, ExchangeSummary, ParsedResponse } from '../model';
import { UserError } from '../model';
import { pinHonoured } from '../proxy/openrouter';
import { errorLine, isAbort, UnreachableError, type HttpResponse } from './http';
import { pinProvider, type OpenRouterClient } from './openrouter';
import { SGLANG_DEFAULT_URL, SglangClient, type GenerateOptions, type SglangServer } from './sglang';
import { translateBody } from '../wire/dialects';
import { repairPreview, type RepairPreview } from '../repair/preview';

/** Where a request goes. */
export type Target =
  | { kind: 'openrouter' /** Provider slug to pin; undefined = OpenRouter's own routing. */; provider?: string }
  | { kind: 'sglang'; url: string /** `chat`: /v1/chat/completions; `native`: /generate with output_ids. */; api: 'chat' | 'native' };

/**
 * `openrouter`, `openrouter:SLUG`, `sglang`, `sglang:URL`, `sglang-native`, `sglang-native:URL`.
 * Throws a UserError naming the accepted forms otherwise.
 */
export function parseTarget(spec: string): Target {
  const m = /^(openrouter|sglang|sglang-native)(?::(.+))?$/.exec(spec.trim());
  if (!m) throw new UserError(`unknown target "${spec}": use openrouter, openrouter:SLUG, sglang[:URL] or sglang-native[:URL]`);
  if (m[1] === 'openrouter') return m[2] ? { kind: 'openrouter', provider: m[2] } : { kind: 'openrouter' };
  const url = m[2] ?? SGLANG_DEFAULT_URL;
  if (!/^https?:\/\/[^/]/.test(url)) throw new UserError(`"${url}" is not an http(s) URL for the SGLang server`);
  return { kind: 'sglang', url, api: m[1] === 'sglang-native' ? 'native' : 'chat' };
}

/** The label stored as the exchange's `target` (`openrouter:fireworks`, `sglang:http://…`). */
export function targetLabel(t: Target): string {
  if (t.kind === 'openrouter') return t.provider ? `openrouter:${t.provider}` : 'openrouter';
  return `${t.api === 'native' ? 'sglang-native' : 'sglang'}:${t.url}`;
}

export interface RunContext {
  /** Required for OpenRouter targets. */
  openrouter?: OpenRouterClient;
  /** SGLang server already checked (saves the health round trip per sample). */
  sglangServer?: SglangServer;
  sglang?: GenerateOptions;
  /** Records the exchange when given. */
  store?: CaptureStore;
  parentId?: string;
  signal?: AbortSignal;
  /** Told about each 429 wait. */
  onRetry?: (info: { attempt: number; waitMs: number; status: number }) => void;
}

export interface RunOutcome {
  target: string;
  /** The new exchange in the capture store (when one was given). */
  exchangeId?: string;
  /** 2xx, a complete response, no upstream error. */
  ok: boolean;
  /** Aborted by the caller. */
  cancelled: boolean;
  /** HTTP status; undefined when no response head arrived. */
  status?: number;
  /** Why it is not ok, in one line. */
  error?: string;
  /** The error response body as received (first 4 KB), for HTTP errors. */
  errorBody?: string;
  /** Served provider as the upstream named it (OpenRouter chunk `provider`). */
  servedProvider?: string;
  generationId?: string;
  startedAt: number;
  /** Time to the first data event (comments such as `: OPENROUTER PROCESSING` do not count), ms. */
  ttftMs?: number;
  durationMs: number;
  completionTokens?: number;
  /** Completion tokens per second after the first token. */
  tokensPerSecond?: number;
  costUsd?: number;
  /** The body as sent (key-free: the key travels in a header). */
  requestBody: Record<string, unknown>;
  response?: ParsedResponse;
  analysis?: Analysis;
  summary?: ExchangeSummary;
  /** What repair mode would have delivered instead (a leaked call as a structured one, a truncated one withheld). */
  repair?: RepairPreview;
}

/** What to send where, per target. */
async function prepare(target: Target, body: Record<string, unknown>, ctx: RunContext) {
  if (target.kind === 'openrouter') {
    const client = ctx.openrouter;
    if (!client) throw new UserError('an OpenRouter target needs an OpenRouter client (API key)');
    const sent = target.provider ? pinProvider(translateBody(body, 'openrouter'), target.provider) : translateBody(body, 'openrouter');
    return {
      route: 'openrouter',
      url: `${client.baseUrl}/chat/completions`,
      headers: client.headers(),
      sent,
      go: (signal?: AbortSignal) => client.chat(sent, signal, ctx.onRetry),
    };
  }
  const client = new SglangClient(target.url);
  const server = ctx.sglangServer ?? (await client.check(ctx.signal));
  const sent = target.api === 'native' ? await client.generateBody(body, server, ctx.sglang) : client.chatBody(body, server);
  return {
    route: 'sglang',
    url: client.url + SglangClient.path(target.api),
    headers: { 'content-type': 'application/json' },
    sent,
    // A native `/generate` body names no model (it sends token ids): the capture records the server's, so `tokens`
    // and the analysis know which tokenizer and family the ids are in.
    ...(target.api === 'native' && { model: server.servedModel ?? server.modelPath }),
    go: (signal?: AbortSignal) => client.post(target.api, sent, signal),
  };
}

export async function runRequest(target: Target, body: Record<string, unknown>, ctx: RunContext = {}): Promise<RunOutcome> {
  const label = targetLabel(target);
  const p = await prepare(target, body, ctx);
  const requestText = JSON.stringify(p.sent);
  const startedAt = Date.now();
  const t0 = performance.now();
  const writer: ExchangeWriter | undefined = ctx.store?.begin({
    route: p.route,
    upstreamUrl: p.url,
    method: 'POST',
    path: new URL(p.url).pathname,
    requestHeaders: p.headers,
    requestBody: requestText,
    agent: 'tokenscope',
    parentId: ctx.parentId,
    target: label,
    startedAt,
  });
  const parts: Uint8Array[] = [];
  const chunks: ChunkTiming[] = [];
  let size = 0;
  let res: HttpResponse | undefined;
  let failure: string | undefined;
  let cancelled = false;
  try {
    res = await p.go(ctx.signal);
    writer?.responseStarted(res.status, res.headers);
    for await (const c of res.body) {
      const bytes = c instanceof Uint8Array ? c : new Uint8Array(c as ArrayBuffer);
      chunks.push({ t: performance.now() - t0, offset: size, length: bytes.length });
      parts.push(bytes);
      size += bytes.length;
      writer?.chunk(bytes);
    }
  } catch (e) {
    if (isAbort(e, ctx.signal)) {
      cancelled = true;
      failure = 'cancelled';
    } else if (e instanceof UnreachableError) {
      failure = e.message;
    } else if (e instanceof UserError) {
      throw e;
    } else {
      failure = `${res ? 'the response broke off' : 'the request failed'}: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`;
    }
  }
  const durationMs = performance.now() - t0;
  const bytes = Buffer.concat(parts);

  const outcome: RunOutcome = { target: label, ok: false, cancelled, status: res?.status, startedAt, durationMs, requestBody: p.sent };
  let standIn: CapturedExchange | undefined;
  if (res) {
    const exchange: CapturedExchange = (standIn = {
      id: writer?.id ?? '',
      sessionId: '',
      startedAt,
      state: 'complete',
      route: p.route,
      upstreamUrl: p.url,
      method: 'POST',
      path: new URL(p.url).pathname,
      requestHeaders: {},
      requestBody: requestText,
      status: res.status,
      responseHeaders: res.headers,
    });
    // Parsed here for the outcome (no check runs); the findings come from the analysis of the stored capture below.
    const r = parseExchange(exchange, bytes, chunks).response;
    outcome.response = r;
    outcome.servedProvider = r.provider;
    outcome.generationId = res.headers['x-generation-id'] ?? (r.id?.startsWith('gen-') ? r.id : undefined);
    outcome.ttftMs = r.events.find((ev) => !ev.comment && ev.t !== undefined)?.t;
    outcome.completionTokens = r.usage?.completionTokens ?? r.outputIds?.length;
    outcome.costUsd = r.usage?.cost;
    const genMs = durationMs - (outcome.ttftMs ?? 0);
    if (outcome.completionTokens && genMs > 0) outcome.tokensPerSecond = (outcome.completionTokens * 1000) / genMs;
    if (res.status >= 200 && res.status < 300) {
      const preview = repairPreview({
        requestBody: requestText,
        path: new URL(p.url).pathname,
        contentType: res.headers['content-type'],
        bytes,
      });
      if (preview) outcome.repair = preview;
    }
    if (res.status < 200 || res.status >= 300) {
      const text = bytes.toString('utf8');
      outcome.errorBody = text.slice(0, 4096);
      failure ??= errorLine(res.status, text);
    } else if (r.error) {
      failure ??= `upstream error${r.error.code !== undefined ? ` ${r.error.code}` : ''}: ${r.error.message}`;
    } else if (!r.terminated) {
      failure ??= r.wireIssues[0]?.message ?? 'the response ended early';
    }
  }
  outcome.ok = failure === undefined;
  outcome.error = failure;
  if (writer) {
    const pin = target.kind === 'openrouter' && target.provider ? [target.provider] : undefined;
    writer.annotate({
      ...('model' in p && p.model && { requestModel: p.model }),
      ...(outcome.generationId && { generationId: outcome.generationId }),
      ...(outcome.servedProvider && { servedProvider: outcome.servedProvider }),
      ...(pin && { pin: { requested: pin, ...(outcome.servedProvider && { honoured: pinHonoured(pin, outcome.servedProvider) }) } }),
    });
    const x = await writer.finish(
      outcome.ok
        ? undefined
        : { error: failure, incomplete: cancelled || !res || (outcome.response ? !outcome.response.terminated : true) },
    );
    outcome.exchangeId = x.id;
    // The store's analysis service analyses the capture once; the outcome reads that result.
    if (res && ctx.store) {
      const full = ctx.store.get(x.id) ?? x;
      setAnalysis(outcome, await resultWhenAnalysed(ctx.store, full, bytes, chunks));
    }
  }
  // Nothing recorded it (no store): analysed once, by the same function the service runs.
  if (res && !outcome.analysis) setAnalysis(outcome, analyzeCaptured(standIn!, bytes, chunks));
  return outcome;
}

function setAnalysis(outcome: RunOutcome, a: ExchangeAnalysis): void {
  outcome.analysis = a.analysis;
  outcome.summary = a.summary;
}
