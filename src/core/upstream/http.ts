/**
 * HTTP plumbing shared by the upstream clients (on undici): one request with a clear one-line error when the server
 * cannot be reached, bounded retries on 429 that honour `Retry-After`, and abortable waits.
 */
import { request, type Dispatcher } from 'undici';

export interface HttpRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
}

export interface HttpResponse {
  url: string;
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The body as it arrives (decoded transfer, raw content). Consume it or call `discard()`. */
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
  discard(): Promise<void>;
}

/** The server could not be reached, or the exchange broke before a response head arrived. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    /** Why, in a few words (`connection refused (is the server running?)`). */
    readonly reason: string,
  ) {
    super(`cannot reach ${safeOrigin(url)}: ${reason}`);
    this.name = 'UnreachableError';
  }
}

/** True when `e` comes from an aborted signal (ours or undici's wrapping of it). */
export function isAbort(e: unknown, signal?: AbortSignal): boolean {
  return !!signal?.aborted || (e instanceof Error && (e.name === 'AbortError' || (e as { code?: string }).code === 'UND_ERR_ABORTED'));
}

/** Why a connection failed, in a few words (`connection refused (is the server running?)`). */
export function networkReason(e: unknown): string {
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err?.cause?.code ?? err?.code;
  const why: Record<string, string> = {
    ECONNREFUSED: 'connection refused (is the server running?)',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'DNS lookup failed',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'timed out',
    UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
    UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
    UND_ERR_SOCKET: 'connection closed by the server',
    EHOSTUNREACH: 'host unreachable',
  };
  return (code && why[code]) ?? (err?.cause?.message || err?.message || String(e)).split('\n')[0];
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

export async function send(req: HttpRequest): Promise<HttpResponse> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      dispatcher: req.dispatcher,
    });
  } catch (e) {
    if (isAbort(e, req.signal)) throw e;
    throw new UnreachableError(req.url, networkReason(e));
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  return {
    url: req.url,
    status: res.statusCode,
    headers,
    body: res.body,
    text: () => res.body.text(),
    discard: () => res.body.dump(),
  };
}

/** `Retry-After` (delta seconds or an HTTP date) → milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const s = value.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const at = Date.parse(s);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface RetryPolicy {
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Longest wait accepted; a longer `Retry-After` returns the 429 to the caller instead (default 30 s). */
  maxWaitMs?: number;
  /** Wait when a 429 carries no `Retry-After` (doubles per retry; default 1 s). */
  fallbackWaitMs?: number;
  onRetry?: (info: { attempt: number; waitMs: number; status: number }) => void;
}

/**
 * Sends, and on 429 waits what `Retry-After` asks (bounded) and sends again. The final response is returned as is,
 * 429 included, so the caller records it as a result.
 */
export async function sendWithRetry(req: HttpRequest, policy: RetryPolicy = {}): Promise<HttpResponse> {
  const maxRetries = policy.maxRetries ?? 2;
  const maxWait = policy.maxWaitMs ?? 30_000;
  for (let attempt = 0; ; attempt++) {
    const res = await send(req);
    if (res.status !== 429 || attempt >= maxRetries) return res;
    const waitMs = retryAfterMs(res.headers['retry-after']) ?? (policy.fallbackWaitMs ?? 1000) * 2 ** attempt;
    if (waitMs > maxWait) return res;
    await res.discard();
    policy.onRetry?.({ attempt: attempt + 1, waitMs, status: res.status });
    await sleep(waitMs, req.signal);
    if (req.signal?.aborted) throw req.signal.reason ?? new DOMException('aborted', 'AbortError');
  }
}

/** Waits `ms`; returns early when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** GET (or POST) returning parsed JSON; a non-2xx status or a non-JSON body comes back as `error` (one line). */
export async function fetchJson<T>(req: HttpRequest, policy?: RetryPolicy): Promise<{ status: number; value?: T; error?: string }> {
  const res = await sendWithRetry(req, policy);
  const body = await res.text();
  if (res.status < 200 || res.status >= 300) return { status: res.status, error: errorLine(res.status, body) };
  try {
    return { status: res.status, value: JSON.parse(body) as T };
  } catch {
    return { status: res.status, error: `HTTP ${res.status} from ${safeOrigin(req.url)} is not JSON` };
  }
}

/** `HTTP 502: Provider returned error` from an error body of any usual shape (`{error:{message}}`, `{message}`, `{detail}`). */
export function errorLine(status: number, body: string): string {
  let msg: string | undefined;
  try {
    const v = JSON.parse(body);
    const m = v?.error?.message ?? v?.message ?? v?.detail ?? (typeof v?.error === 'string' ? v.error : undefined);
    if (typeof m === 'string') msg = m;
    const raw = v?.error?.metadata?.raw;
    const provider = v?.error?.metadata?.provider_name;
    if (msg && typeof provider === 'string') msg += ` (${provider}${typeof raw === 'string' ? `: ${raw}` : ''})`;
  } catch {
    msg = body.trim();
  }
  const line = (msg || '(empty body)').split('\n')[0].slice(0, 300);
  return `HTTP ${status}: ${line}`;
}
