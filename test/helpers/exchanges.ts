/** Captured exchanges for tests: a complete OpenRouter chat exchange as a value, or recorded through a real store. */
import type { CaptureStore, ExchangeAnnotations } from '../../src/core/capture/store';
import type { CapturedExchange } from '../../src/core/model';

/** A complete OpenRouter chat exchange (HTTP 200, nothing served or analysed yet), with `fields` over it. */
export function openRouterExchange(fields: Partial<CapturedExchange> = {}): CapturedExchange {
  return {
    id: 'x1',
    sessionId: 's',
    startedAt: 0,
    state: 'complete',
    route: 'openrouter',
    upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
    method: 'POST',
    path: '/openrouter/v1/chat/completions',
    requestHeaders: {},
    status: 200,
    ...fields,
  };
}

/** An OpenRouter Chat Completions call as the proxy begins its capture (the request body is the caller's). */
export const OPENROUTER_CHAT = {
  route: 'openrouter',
  upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
  method: 'POST',
  path: '/openrouter/v1/chat/completions',
  requestHeaders: { 'content-type': 'application/json' },
} as const;

/**
 * Records one OpenRouter chat exchange in `store` as the proxy would: the request, the annotations (served provider,
 * policy…), then the response bytes in one chunk. Resolves to its id once finished (its analysis may still be queued).
 */
export async function recordExchange(
  store: CaptureStore,
  opts: { request: unknown; response: string | Uint8Array; contentType?: string; agent?: string; annotate?: ExchangeAnnotations },
): Promise<string> {
  const w = store.begin({
    ...OPENROUTER_CHAT,
    requestBody: JSON.stringify(opts.request),
    ...(opts.agent && { agent: opts.agent }),
  });
  if (opts.annotate) w.annotate(opts.annotate);
  w.responseStarted(200, { 'content-type': opts.contentType ?? 'application/json' });
  w.chunk(typeof opts.response === 'string' ? Buffer.from(opts.response) : opts.response);
  return (await w.finish()).id;
}
