/**
 * HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) export and import, so captures move to and from
 * browser devtools, HTTP Toolkit and mitmproxy.
 *
 * Export writes one entry per exchange with every field HAR 1.2 requires. What HAR has no place for goes into
 * `_tokenscope` on the entry (custom fields start with `_`, which HAR readers ignore): the capture's own fields
 * and its chunk timing, so a Tokenscope HAR imports back without loss.
 *
 * Import reads HARs from any of those tools: streamed (SSE) bodies in `content.text`, binary ones with
 * `encoding: "base64"`. Entries that are not model API calls (a devtools HAR holds every image and script of the
 * page) are skipped and counted.
 */
import { STATUS_CODES } from 'node:http';
import type { CapturedExchange, ChunkTiming, ExchangeState } from '../model';
import { UserError } from '../model';
import { base64Bytes, encodeBody, utf8Bytes } from '../capture/body-text';
import type { CaptureInput } from './redaction';
import { bodyNotKeptLine } from './curl';
import { jsonText } from './json-text';
import { sealExport } from './redaction';
import { facts, header, type Repro } from './repro';
import { httpEquivalent } from '../wire/websocket-request';

export interface HarHeader {
  name: string;
  value: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: { name: string; value: string }[];
    headers: HarHeader[];
    queryString: HarHeader[];
    postData?: { mimeType: string; text: string };
    headersSize: number;
    bodySize: number;
    comment?: string;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: { name: string; value: string }[];
    headers: HarHeader[];
    content: { size: number; mimeType: string; text?: string; encoding?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  comment?: string;
  _tokenscope?: TokenscopeEntryFields;
}

/** The capture fields HAR has no place for. */
export interface TokenscopeEntryFields {
  id: string;
  sessionId: string;
  route: string;
  path: string;
  state: ExchangeState;
  agent?: string;
  error?: string;
  parentId?: string;
  target?: string;
  requestModel?: string;
  generationId?: string;
  servedProvider?: string;
  pin?: { requested: string[]; honoured?: boolean };
  ttfbMs?: number;
  queuedMs?: number;
  requestNotKept?: { bytes: number; why: string };
  notAnalysed?: string;
  chunks: ChunkTiming[];
}

export interface Har {
  log: {
    version: '1.2';
    creator: { name: string; version: string };
    entries: HarEntry[];
    comment?: string;
  };
}

function pairs(headers: Record<string, string> | undefined): HarHeader[] {
  return Object.entries(headers ?? {}).map(([name, value]) => ({ name, value }));
}

function queryOf(url: string): HarHeader[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

/** Total duration: recorded end, else the last chunk's arrival, else time to first byte. */
function durationOf(r: Repro): number {
  const x = r.exchange;
  if (x.endedAt !== undefined) return Math.max(0, x.endedAt - x.startedAt);
  return Math.max(0, r.chunks.at(-1)?.t ?? x.ttfbMs ?? 0);
}

function entryOf(r: Repro): HarEntry {
  const x = r.exchange;
  const f = facts(r);
  const time = durationOf(r);
  const wait = Math.min(x.ttfbMs ?? r.chunks[0]?.t ?? 0, time);
  const body = encodeBody(r.responseBody);
  const requestType = header(x.requestHeaders, 'content-type') ?? 'application/json';
  // A WebSocket exchange's response.create message: the POST it stands for.
  const ws = httpEquivalent(x);
  const requestBody = ws?.body ?? x.requestBody;
  const flagged = f.findings.filter((d) => d.severity === 'error');
  return {
    startedDateTime: new Date(x.startedAt).toISOString(),
    time,
    request: {
      method: ws?.method ?? x.method,
      url: x.upstreamUrl,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: pairs(x.requestHeaders),
      queryString: queryOf(x.upstreamUrl),
      ...(requestBody !== undefined ? { postData: { mimeType: requestType, text: requestBody } } : {}),
      headersSize: -1,
      bodySize: requestBody !== undefined ? Buffer.byteLength(requestBody) : (x.requestNotKept?.bytes ?? 0),
      // A body the capture did not keep: the entry says so (its size above is what was sent), it is not an empty body.
      ...(x.requestBody === undefined && x.requestNotKept ? { comment: `Tokenscope: ${bodyNotKeptLine(x.requestNotKept)}` } : {}),
      ...(ws ? { comment: 'Tokenscope: sent as a response.create message over a WebSocket; shown as the POST it stands for' } : {}),
    },
    response: {
      status: x.status ?? 0,
      statusText: (x.status !== undefined && STATUS_CODES[x.status]) || '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: pairs(x.responseHeaders),
      content: {
        size: r.responseBody.length,
        mimeType: header(x.responseHeaders, 'content-type') ?? 'application/octet-stream',
        text: body.text,
        ...(body.encoding === 'base64' ? { encoding: 'base64' } : {}),
      },
      redirectURL: header(x.responseHeaders, 'location') ?? '',
      headersSize: -1,
      bodySize: r.responseBody.length,
    },
    cache: {},
    timings: { send: 0, wait, receive: time - wait },
    ...(flagged.length > 0 ? { comment: `Tokenscope: ${flagged.map((d) => `${d.rule}: ${d.message}`).join('; ')}` } : {}),
    _tokenscope: {
      id: x.id,
      sessionId: x.sessionId,
      route: x.route,
      path: x.path,
      state: x.state,
      ...(x.agent !== undefined ? { agent: x.agent } : {}),
      ...(x.error !== undefined ? { error: x.error } : {}),
      ...(x.parentId !== undefined ? { parentId: x.parentId } : {}),
      ...(x.target !== undefined ? { target: x.target } : {}),
      ...(x.requestModel !== undefined ? { requestModel: x.requestModel } : {}),
      ...(x.generationId !== undefined ? { generationId: x.generationId } : {}),
      ...(x.servedProvider !== undefined ? { servedProvider: x.servedProvider } : {}),
      ...(x.pin !== undefined ? { pin: x.pin } : {}),
      ...(x.ttfbMs !== undefined ? { ttfbMs: x.ttfbMs } : {}),
      ...(x.queuedMs !== undefined ? { queuedMs: x.queuedMs } : {}),
      ...(x.requestNotKept !== undefined ? { requestNotKept: x.requestNotKept } : {}),
      ...(x.notAnalysed !== undefined ? { notAnalysed: x.notAnalysed } : {}),
      chunks: r.chunks,
    },
  };
}

/** One exchange or a whole session as a HAR 1.2 text, entries in start order. */
export function writeHar(repros: Repro[]): string {
  if (repros.length === 0) throw new UserError('nothing to export: no exchanges');
  const sorted = [...repros].sort((a, b) => a.exchange.startedAt - b.exchange.startedAt);
  const har: Har = {
    log: {
      version: '1.2',
      creator: { name: 'Tokenscope', version: sorted[0].tokenscopeVersion },
      entries: sorted.map(entryOf),
    },
  };
  return sealExport(jsonText(har, 2) + '\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Import

export interface HarImport {
  /** Model API exchanges found, in start order (ids are placeholders: the store assigns its own). */
  captures: CaptureInput[];
  /** Entries skipped, with why (not a model call, malformed). */
  skipped: { index: number; url?: string; why: string }[];
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** HAR headers (a list, names may repeat) → one map; HTTP/2 pseudo-headers (`:authority`) are not headers. */
function headerMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of Array.isArray(v) ? v : []) {
    if (!isObj(h) || typeof h.name !== 'string' || typeof h.value !== 'string' || h.name.startsWith(':')) continue;
    const name = h.name;
    const prev = Object.keys(out).find((k) => k.toLowerCase() === name.toLowerCase());
    if (prev) out[prev] = `${out[prev]}, ${h.value}`;
    else out[name] = h.value;
  }
  return out;
}

/** Paths of the APIs Tokenscope reads (OpenAI chat/completions/responses, Anthropic messages, SGLang generate, Ollama chat). */
const MODEL_PATH = /\/(?:chat\/completions|completions|messages|responses|generate|api\/chat)\/?$/;

function looksLikeModelCall(method: string, url: URL, body: string | undefined, responseType: string): boolean {
  if (method !== 'POST' || body === undefined) return false;
  if (MODEL_PATH.test(url.pathname) || /text\/event-stream/i.test(responseType)) return true;
  try {
    const v: unknown = JSON.parse(body);
    return isObj(v) && typeof v.model === 'string' && ('messages' in v || 'prompt' in v || 'input' in v);
  } catch {
    return false;
  }
}

function routeOf(url: URL): string {
  if (/(?:^|\.)openrouter\.ai$/i.test(url.hostname)) return 'openrouter';
  if (/(?:^|\.)anthropic\.com$/i.test(url.hostname)) return 'anthropic';
  if (/(?:^|\.)openai\.com$/i.test(url.hostname)) return 'openai';
  return 'imported';
}

/** Chunks recorded by Tokenscope, when they tile the body; otherwise undefined. */
function recordedChunks(v: unknown, length: number): ChunkTiming[] | undefined {
  if (!Array.isArray(v)) return undefined;
  let end = 0;
  for (const c of v) {
    if (!isObj(c) || num(c.t) === undefined || c.offset !== end || !Number.isInteger(c.length) || (c.length as number) < 0)
      return undefined;
    end += c.length as number;
  }
  return end === length ? (v as ChunkTiming[]) : undefined;
}

const STATES = new Set<ExchangeState>(['complete', 'incomplete', 'error']);

function readEntry(e: unknown): CaptureInput | string {
  if (!isObj(e) || !isObj(e.request) || !isObj(e.response)) return 'not a HAR entry (no request or response)';
  const req = e.request;
  const res = e.response;
  if (typeof req.method !== 'string' || typeof req.url !== 'string') return 'request has no method or URL';
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return `request URL ${JSON.stringify(req.url)} is not a URL`;
  }
  const startedAt = typeof e.startedDateTime === 'string' ? Date.parse(e.startedDateTime) : NaN;
  if (!Number.isFinite(startedAt)) return 'startedDateTime is missing or not a date';
  const requestBody = isObj(req.postData) && typeof req.postData.text === 'string' ? req.postData.text : undefined;
  const content = isObj(res.content) ? res.content : {};
  const responseHeaders = headerMap(res.headers);
  const responseType = (typeof content.mimeType === 'string' ? content.mimeType : '') || (header(responseHeaders, 'content-type') ?? '');
  const ts = isObj(e._tokenscope) ? e._tokenscope : undefined;
  if (!ts && !looksLikeModelCall(req.method.toUpperCase(), url, requestBody, responseType)) return 'not a model API call';

  let responseBody: Uint8Array;
  if (typeof content.text !== 'string') responseBody = new Uint8Array(0);
  else if (content.encoding === 'base64') {
    const bytes = base64Bytes(content.text);
    if (!bytes) return 'response content says base64 but is not';
    responseBody = bytes;
  } else responseBody = utf8Bytes(content.text);

  const status = num(res.status);
  const timings = isObj(e.timings) ? e.timings : {};
  // Time to first byte: everything before the response started (HAR uses -1 for "does not apply").
  const ttfb = ['blocked', 'dns', 'connect', 'send', 'wait'].reduce((sum, k) => sum + Math.max(0, num(timings[k]) ?? 0), 0);
  const time = num(e.time);
  const chunks =
    recordedChunks(ts?.chunks, responseBody.length) ??
    (responseBody.length > 0 ? [{ t: ttfb, offset: 0, length: responseBody.length }] : []);
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const noBody = typeof content.text !== 'string' && (num(content.size) ?? 0) > 0 ? 'the HAR holds no response body' : undefined;
  const error = str(ts?.error) ?? str(res._error) ?? noBody;
  const state: ExchangeState = STATES.has(ts?.state as ExchangeState)
    ? (ts!.state as ExchangeState)
    : !status
      ? 'error'
      : noBody
        ? 'incomplete'
        : 'complete';

  const exchange: CapturedExchange = {
    id: str(ts?.id) ?? '',
    sessionId: str(ts?.sessionId) ?? '',
    startedAt,
    ...(time !== undefined ? { endedAt: startedAt + time } : {}),
    state,
    route: str(ts?.route) ?? routeOf(url),
    upstreamUrl: req.url,
    method: req.method,
    path: str(ts?.path) ?? url.pathname + url.search,
    requestHeaders: headerMap(req.headers),
    ...(requestBody !== undefined ? { requestBody } : {}),
    ...(status ? { status, responseHeaders } : {}),
    ...(num(ts?.ttfbMs) !== undefined ? { ttfbMs: num(ts?.ttfbMs) } : status ? { ttfbMs: ttfb } : {}),
    responseBytes: responseBody.length,
    ...(error !== undefined ? { error } : {}),
    ...(str(ts?.agent) !== undefined ? { agent: str(ts?.agent) } : {}),
    ...(str(ts?.parentId) !== undefined ? { parentId: str(ts?.parentId) } : {}),
    ...(str(ts?.target) !== undefined ? { target: str(ts?.target) } : {}),
    ...(str(ts?.requestModel) !== undefined ? { requestModel: str(ts?.requestModel) } : {}),
    ...(str(ts?.generationId) !== undefined ? { generationId: str(ts?.generationId) } : {}),
    ...(str(ts?.servedProvider) !== undefined ? { servedProvider: str(ts?.servedProvider) } : {}),
    ...(isObj(ts?.pin) && Array.isArray(ts.pin.requested) ? { pin: ts.pin as CapturedExchange['pin'] } : {}),
    ...(num(ts?.queuedMs) !== undefined ? { queuedMs: num(ts?.queuedMs) } : {}),
    ...(requestBody === undefined &&
    isObj(ts?.requestNotKept) &&
    num(ts.requestNotKept.bytes) !== undefined &&
    str(ts.requestNotKept.why) !== undefined
      ? { requestNotKept: { bytes: num(ts.requestNotKept.bytes)!, why: str(ts.requestNotKept.why)! } }
      : {}),
    ...(str(ts?.notAnalysed) !== undefined ? { notAnalysed: str(ts?.notAnalysed) } : {}),
  };
  return { exchange, responseBody, chunks };
}

function fail(why: string): never {
  throw new UserError(`not a usable HAR file: ${why}`);
}

/** Reads a HAR text. Malformed JSON, no `log.entries`, or no model API call among the entries → UserError. */
export function readHar(text: string): HarImport {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    fail(text.trim() === '' ? 'the file is empty' : `the JSON is cut short or malformed (${(e as Error).message})`);
  }
  return readHarValue(v);
}

/** The same, on an already parsed document. */
export function readHarValue(v: unknown): HarImport {
  if (!isObj(v) || !isObj(v.log)) fail('no "log" object');
  const entries = v.log.entries;
  if (!Array.isArray(entries)) fail('"log.entries" is missing');
  if (entries.length === 0) fail('the HAR has no entries');
  const captures: CaptureInput[] = [];
  const skipped: HarImport['skipped'] = [];
  entries.forEach((e, index) => {
    const got = readEntry(e);
    if (typeof got === 'string') {
      const url = isObj(e) && isObj(e.request) && typeof e.request.url === 'string' ? e.request.url : undefined;
      skipped.push({ index, ...(url ? { url } : {}), why: got });
    } else captures.push(got);
  });
  if (captures.length === 0) {
    const reasons = [...new Set(skipped.map((s) => s.why))].slice(0, 3).join('; ');
    fail(`none of its ${entries.length} entries is a model API exchange (${reasons})`);
  }
  captures.sort((a, b) => a.exchange.startedAt - b.exchange.startedAt);
  return { captures, skipped };
}
