/**
 * Where and how OpenTelemetry spans go, read the standard way: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is),
 * else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, else `http://localhost:4318/v1/traces`;
 * `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS` (`k=v,k2=v2`, values URL-encoded); `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`
 * (`http/protobuf`, the default, or `http/json`); `OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT` (ms, default 10 s);
 * `OTEL_SERVICE_NAME` (default `tokenscope`). Explicit settings
 * (the VS Code settings, a header from secret storage) win over the environment.
 */
import { UserError } from '../model';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface OtlpConfig {
  /** The full traces URL (`…/v1/traces`). */
  url: string;
  headers: Record<string, string>;
  protocol: OtlpProtocol;
  serviceName: string;
  /** Send message content (`gen_ai.input.messages`, …), after redaction. Default false. */
  content: boolean;
  /** Spans waiting to be sent, at most; beyond that new spans are dropped and counted. */
  maxQueueSize: number;
  /** How long one export request may take before it counts as failed, ms. */
  timeoutMs: number;
  /** How long spans wait to be sent in one batch, ms. */
  batchDelayMs: number;
}

export interface OtlpOverrides {
  endpoint?: string;
  headers?: Record<string, string>;
  protocol?: string;
  serviceName?: string;
  content?: boolean;
  maxQueueSize?: number;
  timeoutMs?: number;
  batchDelayMs?: number;
}

type Env = Record<string, string | undefined>;

const DEFAULT_ENDPOINT = 'http://localhost:4318';
const TRACES_PATH = '/v1/traces';

/** `OTEL_EXPORTER_OTLP_HEADERS` syntax: comma-separated `key=value`, values percent-encoded. */
export function parseOtlpHeaders(text: string | undefined, name = 'OTEL_EXPORTER_OTLP_HEADERS'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    if (!pair.trim()) continue;
    const eq = pair.indexOf('=');
    // The entry itself is not quoted: it may be a key.
    if (eq <= 0) throw new UserError(`${name}: expected key=value pairs separated by commas, got an entry without "="`);
    const key = pair.slice(0, eq).trim();
    let value = pair.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as written
    }
    out[key] = value;
  }
  return out;
}

function checkUrl(url: string, what: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UserError(`${what} is not a URL: ${JSON.stringify(url.slice(0, 80))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UserError(`${what} must be an http(s) URL, got ${u.protocol}`);
  return url;
}

function tracesUrl(base: string): string {
  return base.replace(/\/+$/, '') + TRACES_PATH;
}

function protocolOf(value: string | undefined, what: string): OtlpProtocol {
  const v = (value ?? 'http/protobuf').trim().toLowerCase();
  if (v === 'http/protobuf' || v === 'http/json') return v;
  if (v === 'grpc')
    throw new UserError(`${what}=grpc is not supported: use http/protobuf or http/json (every common backend takes OTLP over HTTP)`);
  throw new UserError(`${what} must be http/protobuf or http/json, got ${JSON.stringify(value)}`);
}

/** `OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT`, ms; an unusable value is ignored, as the SDK does. */
function envTimeout(env: Env): number | undefined {
  const v = Number(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

/** Whether the environment asks for OTLP export: an endpoint is set, and `OTEL_SDK_DISABLED` is not `true`. */
export function otlpRequestedByEnv(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

export function readOtlpConfig(over: OtlpOverrides = {}, env: Env = process.env): OtlpConfig {
  let url: string;
  if (over.endpoint?.trim()) {
    const e = over.endpoint.trim();
    url = checkUrl(/\/v1\/traces\/?$/.test(e) ? e : tracesUrl(e), 'the OTLP endpoint');
  } else if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) {
    url = checkUrl(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.trim(), 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  } else {
    url = checkUrl(tracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_ENDPOINT), 'OTEL_EXPORTER_OTLP_ENDPOINT');
  }
  const protoVar = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = protocolOf(
    over.protocol ?? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL,
    over.protocol ? 'the OTLP protocol' : protoVar,
  );
  const headers = {
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    ...over.headers,
  };
  return {
    url,
    headers,
    protocol,
    serviceName: over.serviceName?.trim() || env.OTEL_SERVICE_NAME?.trim() || 'tokenscope',
    content: over.content ?? false,
    maxQueueSize: over.maxQueueSize ?? 2048,
    timeoutMs: over.timeoutMs ?? envTimeout(env) ?? 10_000,
    batchDelayMs: over.batchDelayMs ?? 1000,
  };
}

/** The config in one line for a terminal, with header values hidden. */
export function describeOtlp(c: OtlpConfig): string {
  const names = Object.keys(c.headers);
  return `${c.url} (${c.protocol}${names.length ? `, headers: ${names.join(', ')}` : ''}${c.content ? ', with message content' : ''})`;
}
