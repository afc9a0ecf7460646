/**
 * OpenRouter client (wire-formats.md §1, §8): chat completions with an optional provider pin, the live list of
 * providers serving a model, and generation stats (who really served a request).
 *
 * The API key comes from the caller (the extension reads VS Code SecretStorage) or `OPENROUTER_API_KEY`; it is sent
 * in the Authorization header only and never stored (the capture store redacts request headers).
 */
import type { Dispatcher } from 'undici';
import { UserError } from '../model';
import type { SlugEntry } from '../capture/provider-rows';
import { fetchJson, sendWithRetry, type HttpResponse, type RetryPolicy } from './http';

export const OPENROUTER_API = 'https://openrouter.ai/api/v1';
export const OPENROUTER_KEY_ENV = 'OPENROUTER_API_KEY';

/** App attribution (OpenRouter's `HTTP-Referer` / `X-OpenRouter-Title` / `X-OpenRouter-Categories`). */
const ATTRIBUTION = {
  'http-referer': 'https://marketplace.visualstudio.com/items?itemName=tokenscope.tokenscope',
  'x-openrouter-title': 'Tokenscope',
  'x-openrouter-categories': 'ide-extension',
};

export interface OpenRouterConfig {
  /** API root (`https://openrouter.ai/api/v1`); a bare origin gets `/api/v1` appended. Tests aim it at the emulator. */
  baseUrl?: string;
  /** From SecretStorage; falls back to `OPENROUTER_API_KEY`. */
  apiKey?: string;
  retry?: RetryPolicy;
  dispatcher?: Dispatcher;
}

/** One provider serving a model, from `GET /models/{author}/{slug}/endpoints` (§1.8). */
export interface ProviderEndpoint {
  /** Routing slug (the endpoint's `tag`), what `provider.only` takes. */
  slug: string;
  /** Display name, as chunks and generation stats name the served provider. */
  name: string;
  quantization?: string;
  contextLength?: number;
  /** USD per token. */
  pricing?: { prompt?: number; completion?: number };
  /** OpenRouter's endpoint status (0 = up; negative = degraded or down). */
  status?: number;
  uptimeLast30m?: number;
  maxCompletionTokens?: number;
  supportedParameters?: string[];
}

/** The provider part of a routing tag (`deepinfra/fp4` → `deepinfra`). */
export function providerOfTag(tag: string): string {
  return tag.split('/')[0];
}

/** The display name → slug pairs an endpoint listing gives, as the capture store keeps them. */
export function entriesFromEndpoints(endpoints: readonly ProviderEndpoint[], at = Date.now()): SlugEntry[] {
  return endpoints
    .filter((e) => e.name && e.slug)
    .map((e) => ({ name: e.name, slug: providerOfTag(e.slug), source: 'endpoints' as const, at }));
}

/** `GET /generation?id=` fields Tokenscope uses (§1.7). */
export interface GenerationStats {
  id: string;
  providerName?: string;
  model?: string;
  totalCost?: number;
  latencyMs?: number;
  generationTimeMs?: number;
  finishReason?: string;
  nativeFinishReason?: string;
  tokensPrompt?: number;
  tokensCompletion?: number;
  cancelled?: boolean;
  streamed?: boolean;
}

/**
 * `https://openrouter.ai`, `…/api` (the form `tokenscope serve --openrouter-url` takes) or `…/api/v1` → the API
 * root, so one URL works for every command. Anything but an http(s) URL is a UserError, before any request.
 */
export function openRouterApiRoot(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol))
    throw new UserError(`the OpenRouter URL must be an http(s) URL such as https://openrouter.ai/api/v1; got "${url}"`);
  const u = url.replace(/\/+$/, '');
  if (/\/v1$/.test(u)) return u;
  return /\/api$/.test(u) ? `${u}/v1` : `${u}/api/v1`;
}

/** The key to use: the caller's (SecretStorage), else the environment. */
export function resolveOpenRouterKey(given?: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = given || env[OPENROUTER_KEY_ENV];
  if (!key) throw new UserError(`no OpenRouter API key: set ${OPENROUTER_KEY_ENV} (in VS Code, Tokenscope keeps it in SecretStorage)`);
  return key;
}

/**
 * Refuses provider slugs that are not among `endpoints` (the model's live provider list), before any request is
 * paid for: a misspelt slug would only buy "No endpoints found" errors, or metrics computed from them. Slugs match
 * by provider (`deepinfra` for the tag `deepinfra/fp4` and the other way round). An empty list (it could not be
 * fetched) checks nothing.
 */
export function requireServed(endpoints: readonly ProviderEndpoint[], slugs: readonly string[], model: string): void {
  const unknown = endpoints.length > 0 ? slugs.filter((s) => !endpoints.some((e) => providerOfTag(e.slug) === providerOfTag(s))) : [];
  if (unknown.length === 0) return;
  const names = unknown.map((s) => `"${s}"`).join(', ');
  throw new UserError(
    `${names} ${unknown.length === 1 ? 'does' : 'do'} not serve ${model} on OpenRouter; its providers: ${endpoints.map((e) => e.slug).join(', ')}`,
  );
}

/**
 * The body with a provider pin: `only: [slug]`, no fallbacks (a down provider must come back as an error, never
 * as a silent answer from another one). Other routing preferences of the captured body are kept, except those a
 * pin contradicts (`order`, `ignore`).
 */
export function pinProvider(body: Record<string, unknown>, slug: string): Record<string, unknown> {
  const { order: _o, ignore: _i, only: _x, allow_fallbacks: _a, ...rest } = (body.provider ?? {}) as Record<string, unknown>;
  return { ...body, provider: { ...rest, only: [slug], allow_fallbacks: false } };
}

export class OpenRouterClient {
  readonly baseUrl: string;
  private readonly key: string;

  constructor(private readonly cfg: OpenRouterConfig = {}) {
    this.baseUrl = openRouterApiRoot(cfg.baseUrl ?? OPENROUTER_API);
    this.key = resolveOpenRouterKey(cfg.apiKey);
  }

  /** Request headers for a call (the Authorization value is redacted by the capture store before it is written). */
  headers(): Record<string, string> {
    return { authorization: `Bearer ${this.key}`, 'content-type': 'application/json', ...ATTRIBUTION };
  }

  /** POST /chat/completions. Resolves at the response head (429s retried per `Retry-After`, bounded). */
  chat(body: Record<string, unknown>, signal?: AbortSignal, onRetry?: RetryPolicy['onRetry']): Promise<HttpResponse> {
    return sendWithRetry(
      {
        url: `${this.baseUrl}/chat/completions`,
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify(body),
        signal,
        dispatcher: this.cfg.dispatcher,
      },
      { ...this.cfg.retry, onRetry: onRetry ?? this.cfg.retry?.onRetry },
    );
  }

  /** The providers serving `model` right now. An unknown model is a UserError. */
  async endpoints(model: string, signal?: AbortSignal): Promise<ProviderEndpoint[]> {
    const [author, slug] = model.replace(/:[\w-]+$/, '').split('/');
    if (!author || !slug) throw new UserError(`"${model}" is not an OpenRouter model id (author/slug)`);
    const r = await fetchJson<{ data?: { endpoints?: unknown[] } }>(
      {
        url: `${this.baseUrl}/models/${encodeURIComponent(author)}/${encodeURIComponent(slug)}/endpoints`,
        method: 'GET',
        headers: this.headers(),
        signal,
        dispatcher: this.cfg.dispatcher,
      },
      this.cfg.retry,
    );
    if (r.error) throw new UserError(`cannot list the providers of ${model}: ${r.error}`);
    return (r.value?.data?.endpoints ?? []).map(readEndpoint).filter((e): e is ProviderEndpoint => !!e);
  }

  /** `GET /providers` (`{data:[{name, slug, …}]}`): every provider's display name and routing slug. */
  async providers(signal?: AbortSignal): Promise<SlugEntry[]> {
    const r = await fetchJson<{ data?: unknown[] }>(
      { url: `${this.baseUrl}/providers`, method: 'GET', headers: this.headers(), signal, dispatcher: this.cfg.dispatcher },
      this.cfg.retry,
    );
    if (r.error) throw new UserError(`cannot list OpenRouter's providers: ${r.error}`);
    const at = Date.now();
    return (r.value?.data ?? []).flatMap((v) => {
      const p = v as { name?: unknown; slug?: unknown };
      return typeof p?.name === 'string' && typeof p.slug === 'string' && p.slug
        ? [{ name: p.name, slug: p.slug, source: 'providers' as const, at }]
        : [];
    });
  }

  /** Generation stats; undefined while OpenRouter has not made them available yet (404) or on any other error. */
  async generation(id: string, signal?: AbortSignal): Promise<GenerationStats | undefined> {
    const r = await fetchJson<{ data?: Record<string, unknown> }>(
      {
        url: `${this.baseUrl}/generation?id=${encodeURIComponent(id)}`,
        method: 'GET',
        headers: this.headers(),
        signal,
        dispatcher: this.cfg.dispatcher,
      },
      this.cfg.retry,
    );
    const d = r.value?.data;
    if (!d) return undefined;
    const n = (v: unknown) => (typeof v === 'number' ? v : undefined);
    const s = (v: unknown) => (typeof v === 'string' ? v : undefined);
    return {
      id,
      providerName: s(d.provider_name),
      model: s(d.model),
      totalCost: n(d.total_cost),
      latencyMs: n(d.latency),
      generationTimeMs: n(d.generation_time),
      finishReason: s(d.finish_reason),
      nativeFinishReason: s(d.native_finish_reason),
      tokensPrompt: n(d.tokens_prompt),
      tokensCompletion: n(d.tokens_completion),
      cancelled: typeof d.cancelled === 'boolean' ? d.cancelled : undefined,
      streamed: typeof d.streamed === 'boolean' ? d.streamed : undefined,
    };
  }
}

function readEndpoint(v: unknown): ProviderEndpoint | undefined {
  // biome-ignore lint/suspicious/noExplicitAny: an endpoints listing entry, each field checked where it is read
  const e = v as Record<string, any>;
  const slug = typeof e?.tag === 'string' ? e.tag : undefined;
  if (!slug) return undefined;
  const price = (x: unknown) => (x === undefined || x === null || Number.isNaN(Number(x)) ? undefined : Number(x));
  return {
    slug,
    name: typeof e.provider_name === 'string' ? e.provider_name : slug,
    quantization: typeof e.quantization === 'string' ? e.quantization : undefined,
    contextLength: typeof e.context_length === 'number' ? e.context_length : undefined,
    pricing: e.pricing ? { prompt: price(e.pricing.prompt), completion: price(e.pricing.completion) } : undefined,
    status: typeof e.status === 'number' ? e.status : undefined,
    uptimeLast30m: typeof e.uptime_last_30m === 'number' ? e.uptime_last_30m : undefined,
    maxCompletionTokens: typeof e.max_completion_tokens === 'number' ? e.max_completion_tokens : undefined,
    supportedParameters: Array.isArray(e.supported_parameters)
      ? e.supported_parameters.filter((p: unknown) => typeof p === 'string')
      : undefined,
  };
}
