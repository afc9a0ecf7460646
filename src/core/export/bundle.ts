/**
 * The repro bundle, `*.tokenscope.json`: one exchange with everything needed to see the failure again, offline.
 *
 * Schema, version 1 (every field not marked optional is always written):
 *
 *   {
 *     "format": "tokenscope.repro",
 *     "version": 1,
 *     "createdAt": "2026-11-30T03:00:00.000Z",        ISO 8601, when the bundle was written
 *     "tokenscope": { "version": "0.1.0" },            the Tokenscope that wrote it
 *     "agent": { "name", "userAgent", "version" },     optional: the agent that sent the request
 *     "exchange": CapturedExchange,                    src/core/model.ts, redacted; `requestBody` is the request body
 *     "response": {
 *       "encoding": "utf8" | "base64",                 how `body` holds the bytes
 *       "body": string,                                the decoded response body exactly as received
 *       "chunks": [{ "t", "offset", "length" }]        chunk timing (ms since the request started); tiles `body`
 *     },
 *     "served": { "provider", "model", "finishReason", "nativeFinishReason", "generationId", "pin" },  all optional
 *     "usage": Usage,                                  optional
 *     "tools": ToolDef[],                              the tool schemas the request offered (normalized)
 *     "findings": [Finding & { "title", "why" }],      what Tokenscope flagged when the bundle was written
 *     "tokens": { "tokenizer", "source", "ids", "accounting" },   optional: the turn in the model's tokenizer
 *     "redactions": [{ "label", "where", "preview", "count" }]   what the export redacted
 *   }
 *
 * `exchange` and `response` are the source of truth: readers re-analyse them. `served`, `usage`, `tools` and
 * `findings` are a readable record for people and other tools. Readers ignore fields they do not know, so adding
 * a field keeps version 1; a change old readers would misread bumps `version`, and this reader refuses newer ones.
 */
import { ruleInfo } from '../checks/index';
import type { CapturedExchange, ChunkTiming, Finding, ToolDef, Usage } from '../model';
import { UserError } from '../model';
import { base64Bytes, encodeBody, utf8Bytes } from './body';
import type { TokenAccounting } from '../tokens/accounting';
import type { TokenStream } from '../tokens/stream';
import type { RedactionItem } from './redaction';
import { jsonText } from './json-text';
import { sealExport } from './redaction';
import { facts, type Repro } from './repro';

export const BUNDLE_FORMAT = 'tokenscope.repro';
export const BUNDLE_VERSION = 1;
export const BUNDLE_EXTENSION = '.tokenscope.json';

export interface BundleFinding extends Finding {
  title?: string;
  why?: string;
}

export interface ReproBundleV1 {
  format: typeof BUNDLE_FORMAT;
  version: 1;
  createdAt: string;
  tokenscope: { version: string };
  agent?: { name?: string; userAgent?: string; version?: string };
  exchange: CapturedExchange;
  response: { encoding: 'utf8' | 'base64'; body: string; chunks: ChunkTiming[] };
  served: {
    provider?: string;
    model?: string;
    finishReason?: string;
    nativeFinishReason?: string;
    generationId?: string;
    pin?: { requested: string[]; honoured?: boolean };
  };
  usage?: Usage;
  tools: ToolDef[];
  findings: BundleFinding[];
  tokens?: {
    tokenizer: string;
    /** `server` (the server's own ids), `reconstructed` (the structured response re-encoded), `text`. */
    source: TokenStream['source'];
    ids: number[];
    accounting: Omit<TokenAccounting, 'finding'>;
  };
  redactions: RedactionItem[];
}

/** Drops undefined fields so the file holds only what is known. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export interface WriteBundleOptions {
  /** Clock for `createdAt` (tests). */
  now?: () => Date;
}

function tokensOf(t: TokenStream): NonNullable<ReproBundleV1['tokens']> {
  const { finding: _finding, ...accounting } = t.accounting;
  return { tokenizer: t.tokenizer, source: t.source, ids: t.tokens.map((k) => k.id), accounting };
}

/** The bundle as a JSON text, redacted and sealed. */
export function writeBundle(r: Repro, opts: WriteBundleOptions = {}): string {
  const f = facts(r);
  const body = encodeBody(r.responseBody);
  const bundle: ReproBundleV1 = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    createdAt: (opts.now?.() ?? new Date()).toISOString(),
    tokenscope: { version: r.tokenscopeVersion },
    ...(f.agent ? { agent: compact(f.agent) } : {}),
    exchange: r.exchange,
    response: { encoding: body.encoding, body: body.text, chunks: r.chunks },
    served: compact({
      provider: f.provider,
      model: f.servedModel,
      finishReason: f.finishReason,
      nativeFinishReason: f.nativeFinishReason,
      generationId: r.exchange.generationId,
      pin: r.exchange.pin,
    }),
    ...(f.usage ? { usage: f.usage } : {}),
    tools: f.tools,
    findings: f.findings.map((x) => {
      const info = ruleInfo(x.rule);
      return compact({ ...x, title: info?.title, why: info?.why });
    }),
    ...(r.tokens ? { tokens: tokensOf(r.tokens) } : {}),
    redactions: r.redactions,
  };
  return sealExport(jsonText(bundle, 2) + '\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

export interface LoadedBundle {
  exchange: CapturedExchange;
  responseBody: Uint8Array;
  chunks: ChunkTiming[];
  /** Findings as recorded in the bundle (re-analyse `exchange` + `responseBody` for current ones). */
  findings: BundleFinding[];
  createdAt?: string;
  tokenscopeVersion?: string;
  agent?: ReproBundleV1['agent'];
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
