/**
 * Reading a repro bundle, `*.tokenscope.json` (its schema: ../export/bundle.ts, which writes it): one exchange with
 * its decoded response body and chunk timing, checked to be whole. Kept below the layers that take a bundle as input
 * (`tokens --batch` lines, `lint` and `tokens` FILEs, `import`), which need no part of the export to read one.
 */
import type { CapturedExchange, ChunkTiming, Finding, ToolDef } from '../model';
import { UserError } from '../model';
import { base64Bytes, utf8Bytes } from './body-text';

export const BUNDLE_FORMAT = 'tokenscope.repro';
export const BUNDLE_VERSION = 1;
export const BUNDLE_EXTENSION = '.tokenscope.json';

export interface BundleFinding extends Finding {
  title?: string;
  why?: string;
}

/** The agent that sent the bundled request, as far as it is known. */
export interface BundleAgent {
  name?: string;
  userAgent?: string;
  version?: string;
}

export interface LoadedBundle {
  exchange: CapturedExchange;
  responseBody: Uint8Array;
  chunks: ChunkTiming[];
  /** Findings as recorded in the bundle (re-analyse `exchange` + `responseBody` for current ones). */
  findings: BundleFinding[];
  createdAt?: string;
  tokenscopeVersion?: string;
  agent?: BundleAgent;
  tools: ToolDef[];
}

function fail(why: string): never {
  throw new UserError(`not a usable Tokenscope repro bundle: ${why}`);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function need(ok: boolean, what: string): void {
  if (!ok) fail(`${what} is missing or malformed`);
}

function stringMap(v: unknown, what: string): Record<string, string> {
  if (!isObj(v) || !Object.values(v).every((s) => typeof s === 'string')) fail(`${what} must map names to strings`);
  return v as Record<string, string>;
}

const STATES = new Set(['streaming', 'complete', 'incomplete', 'error']);

function readExchange(v: unknown): CapturedExchange {
  if (!isObj(v)) fail('"exchange" is missing');
  for (const k of ['id', 'sessionId', 'route', 'upstreamUrl', 'method', 'path'] as const) {
    need(typeof v[k] === 'string', `exchange.${k}`);
  }
  need(typeof v.startedAt === 'number' && Number.isFinite(v.startedAt), 'exchange.startedAt');
  need(typeof v.state === 'string' && STATES.has(v.state), 'exchange.state');
  stringMap(v.requestHeaders, 'exchange.requestHeaders');
  if (v.responseHeaders !== undefined) stringMap(v.responseHeaders, 'exchange.responseHeaders');
  if (v.requestBody !== undefined) need(typeof v.requestBody === 'string', 'exchange.requestBody');
  if (v.status !== undefined) need(typeof v.status === 'number', 'exchange.status');
  return v as unknown as CapturedExchange;
}

/** Chunks must tile the body: from offset 0, each starting where the previous ended, covering every byte. */
function readChunks(v: unknown, bodyLength: number): ChunkTiming[] {
  if (!Array.isArray(v)) fail('"response.chunks" must be a list');
  let end = 0;
  for (const [i, c] of v.entries()) {
    const ok =
      isObj(c) &&
      typeof c.t === 'number' &&
      Number.isFinite(c.t) &&
      c.offset === end &&
      Number.isInteger(c.length) &&
      (c.length as number) >= 0;
    if (!ok) fail(`response.chunks[${i}] does not continue the body at byte ${end}`);
    end += c.length as number;
  }
  if (end !== bodyLength) fail(`response.chunks cover ${end} bytes but the body has ${bodyLength}`);
  return v as ChunkTiming[];
}

/**
 * Parses a `*.tokenscope.json` text. Truncated or malformed JSON, another format, a newer schema version or an
 * inconsistent body all give a one-line UserError naming what is wrong.
 */
export function readBundle(text: string): LoadedBundle {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const why = text.trim() === '' ? 'the file is empty' : `the JSON is cut short or malformed (${(e as Error).message})`;
    fail(why);
  }
  if (!isObj(v) || v.format !== BUNDLE_FORMAT) {
    fail(`"format" is ${isObj(v) && v.format !== undefined ? JSON.stringify(v.format) : 'missing'}, expected "${BUNDLE_FORMAT}"`);
  }
  if (typeof v.version !== 'number' || !Number.isInteger(v.version) || v.version < 1) fail('"version" is missing or malformed');
  if (v.version > BUNDLE_VERSION) {
    throw new UserError(
      `this repro bundle uses schema version ${v.version}; this Tokenscope reads version ${BUNDLE_VERSION} — update Tokenscope to open it`,
    );
  }
  const exchange = readExchange(v.exchange);
  const response = v.response;
  if (!isObj(response) || typeof response.body !== 'string') fail('"response.body" is missing');
  let responseBody: Uint8Array;
  if (response.encoding === 'utf8') responseBody = utf8Bytes(response.body);
  else if (response.encoding === 'base64') responseBody = base64Bytes(response.body) ?? fail('"response.body" is not valid base64');
  else fail(`"response.encoding" must be "utf8" or "base64"`);
  const chunks = readChunks(response.chunks, responseBody.length);
  const tokenscope = isObj(v.tokenscope) ? v.tokenscope : undefined;
  return {
    exchange,
    responseBody,
    chunks,
    findings: Array.isArray(v.findings) ? (v.findings.filter(isObj) as unknown as BundleFinding[]) : [],
    tools: Array.isArray(v.tools) ? (v.tools.filter(isObj) as unknown as ToolDef[]) : [],
    ...(typeof v.createdAt === 'string' ? { createdAt: v.createdAt } : {}),
    ...(typeof tokenscope?.version === 'string' ? { tokenscopeVersion: tokenscope.version } : {}),
    ...(isObj(v.agent) ? { agent: v.agent as LoadedBundle['agent'] } : {}),
  };
}
