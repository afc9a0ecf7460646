/**
 * What the CLI's `lint` and `tokens` accept as FILE, turned into a parsed response: raw native text, a JSON
 * response body (OpenAI Chat, Anthropic Messages, Responses, SGLang), an SSE dump of any of them, a Tokenscope repro
 * bundle (`*.tokenscope.json`), or the id of an exchange in the capture store. Unusable input is a one-line UserError.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, type Stats } from 'node:fs';
import { basename, join } from 'node:path';
import { parseExchange, parseExchangeChunks, type ExchangeAnalysis } from '../core/analyze';
import { resultFor } from '../core/capture/analysis';
import { DB_FILE, openStore, defaultDataDir } from '../core/capture/store';
import { LOG_FILE } from '../core/capture/log';
import { BUNDLE_EXTENSION, BUNDLE_FORMAT, readBundle } from '../core/capture/bundle-read';
import { UserError, type CapturedExchange, type ChunkTiming, type NormalizedRequest, type ParsedResponse } from '../core/model';
import { recoverTruncatedJson } from '../core/wire/common';
import { normalizeRequest, parseResponseBody, parseTextBody } from '../core/wire/index';
import {
  HEAD_BYTES,
  isBlank,
  isGzip,
  looksBinary,
  MAX_BYTES,
  modelTextHead,
  readTextFile,
  sameFile,
  takePreread,
  type Preread,
} from './input-head';
import { parseResponseChunks, sseHead } from '../core/wire/chunked';
import { fsWhy } from '../core/fs-errors';

export interface LoadedInput {
  response: ParsedResponse;
  request?: NormalizedRequest;
  /** Model id the input names (served model, else the request's). */
  model?: string;
  /** How to name the input to the user: the file name, or `capture <id>`. */
  label: string;
  /** The captured exchange, for bundles and capture ids. */
  exchange?: CapturedExchange;
  /** Set when FILE was the id of an exchange in the capture store. */
  captureId?: string;
  /** A capture id's result as `show` and the Problems panel read it (the store's analysis), when asked for. */
  stored?: ExchangeAnalysis;
}

export interface LoadInputOptions {
  /** Capture store directory for capture ids (default: TOKENSCOPE_DATA_DIR or ~/.tokenscope). */
  dataDir?: string;
  /**
   * For a capture id: its result from the store's one analysis (capture/analysis.ts `resultFor`: the stored analysis,
   * else analysed by the service's own function), in `stored`.
   */
  storedResult?: boolean;
}

/** A renamed bundle is still recognised: the writer puts `"format"` first. */
const BUNDLE_HEAD = new RegExp(`^\\s*\\{\\s*"format"\\s*:\\s*"${BUNDLE_FORMAT.replace(/\./g, '\\.')}"`);

export async function loadInput(file: string, opts: LoadInputOptions = {}): Promise<LoadedInput> {
  // The text the CLI read before its code loaded, if any: used below or dropped, never kept beside another copy.
  const early = takePreread();
  if (!existsSync(file)) return loadCapture(file, opts.dataDir ?? defaultDataDir(), opts.storedResult === true);
  const label = basename(file);
  const head = readHead(file);
  if (
    head &&
    !isBlank(head.bytes) &&
    !looksBinary(head.bytes) &&
    !BUNDLE_HEAD.test(new TextDecoder().decode(head.bytes.subarray(0, 512))) &&
    !file.endsWith(BUNDLE_EXTENSION)
  ) {
    // An SSE dump is parsed as it is read, a block at a time, keeping none of its events.
    if (sseHead(head.bytes, undefined, head.size <= head.bytes.length))
      return { ...streamedResponse(parseResponseChunks(fileBlocks(file, head.size)), label), label };
    // Model text is read straight into a string, its bytes freed as soon as they are decoded (input-head.ts).
    if (modelTextHead(head.bytes, head.size <= head.bytes.length))
      return { ...modelText(readText(file, head.stat, early), label, /\.json$/i.test(file)), label };
  }
  const bytes = readBytes(file);
  if (isBlank(bytes)) throw new UserError(`${label} is empty`);
  if (isGzip(bytes)) throw new UserError(`${label} is gzip-compressed; decompress it first`);
  if (looksBinary(bytes)) throw new UserError(`${label} is binary, not a response body, SSE dump or model text`);

  if (file.endsWith(BUNDLE_EXTENSION) || BUNDLE_HEAD.test(new TextDecoder().decode(bytes.subarray(0, 512)))) {
    const bundle = readBundle(new TextDecoder().decode(bytes));
    return fromExchange(bundle.exchange, bundle.responseBody, bundle.chunks, label);
  }

  return { ...readResponse(bytes, label, /\.json$/i.test(file)), label };
}

/**
 * What the bytes are: a response of a known API (JSON or SSE, complete or cut short), or the model's own text. Text
 * that opens with `{` or `[` is often model output (Hermes, Llama and Mistral calls, pasted argument text), so only a
 * JSON document of a known shape is read as one: a response, an error body, a request given in the wrong place (refused
 * with a hint), another API's document (refused). A response cut short is read as far as it got; its truncated body is
 * a finding, not unusable input. Everything else is model text.
 */
function readResponse(bytes: Uint8Array, label: string, jsonFile: boolean): { response: ParsedResponse; model?: string } {
  const response = parseResponseBody(bytes);
  if (response.protocol === 'native-text' && jsonFile) refuseBareJson(response, label);
  if (response.streamed || response.error || response.protocol !== 'unknown') return streamedResponse(response, label);
  if (response.events.length === 0) return { response };
  const body = response.events[0]?.data ?? '';
  const cut = response.wireIssues.some((w) => w.code === 'truncated-body');
  const value = jsonValue(body, cut);
  if (isObj(value)) {
    const request = looksLikeRequest(value);
    if (request)
      throw new UserError(`${label} looks like a request body (it has "${request}"); pass it with --request and give the response as FILE`);
    if (cut) {
      // A response cut so early that its shape is not certain yet: its head still says which API it is.
      const protocol = protocolOfHead(value);
      if (protocol) {
        const again = parseResponseBody(bytes, { protocol });
        return { response: again, model: again.model };
      }
    } else if (typeof value.object === 'string') {
      throw new UserError(
        `${label} is JSON of an unknown API (an "object" document), not a response of OpenAI Chat, Anthropic Messages, OpenAI Responses or SGLang`,
      );
    }
  }
  return { response: parseResponseBody(bytes, { protocol: 'native-text' }) };
}

/** `readResponse` of a file `textFramed` calls text, from its text. */
function modelText(text: string, label: string, jsonFile: boolean): { response: ParsedResponse; model?: string } {
  const response = parseTextBody(text);
  if (response.protocol === 'native-text' && jsonFile) refuseBareJson(response, label);
  return streamedResponse(response, label);
}

/** A .json file holding one bare JSON value (`null`, `42`, `"text"`) is a document, and no response. */
function refuseBareJson(response: ParsedResponse, label: string): void {
  const value = jsonValue(response.message.content ?? '', false);
  if (value !== undefined && typeof value !== 'object') throw new UserError(`${label} is ${jsonKind(value)}, not a response`);
  if (value === null) throw new UserError(`${label} is JSON null, not a response`);
}

/** A response of a known API, an error, or a stream (one of an unknown API is refused unless something is wrong with it). */
function streamedResponse(response: ParsedResponse, label: string): { response: ParsedResponse; model?: string } {
  if (response.protocol !== 'unknown' || response.error) return { response, model: response.model };
  // An SSE stream whose events name no known API, and nothing wrong with it: not a turn of any protocol Tokenscope reads.
  if (response.wireIssues.length === 0)
    throw new UserError(`${label} is a stream of an unknown API, not OpenAI Chat, Anthropic Messages, OpenAI Responses or SGLang`);
  return { response };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON value of a body (recovered as far as it goes when cut short), or undefined when it is not JSON. */
function jsonValue(body: string, cut: boolean): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return cut ? recoverTruncatedJson(body.trim()) : undefined;
  }
}

/**
 * The API a cut-short JSON head belongs to, from the fields every response opens with: `object` (a prefix of
 * `chat.completion` or `response`), a response id (`chatcmpl-`, `gen-`, `cmpl-`, `msg_`, `resp_`), `choices`,
 * `meta_info`. Undefined for anything else (a cut Llama call or argument text is model text).
 */
function protocolOfHead(
  v: Record<string, unknown>,
): 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'sglang-generate' | undefined {
  const object = typeof v.object === 'string' && v.object.length >= 2 ? v.object : undefined;
  if (object && ('chat.completion'.startsWith(object) || object.startsWith('chat.completion') || 'text_completion'.startsWith(object)))
    return 'openai-chat';
  if (object && 'response'.startsWith(object)) return 'openai-responses';
  if ('choices' in v) return 'openai-chat';
  if ('meta_info' in v) return 'sglang-generate';
  const id = typeof v.id === 'string' ? v.id : '';
  if (/^(chatcmpl-|gen-|cmpl-)/.test(id)) return 'openai-chat';
  if (/^msg_/.test(id) && (v.type === undefined || 'message'.startsWith(String(v.type)))) return 'anthropic-messages';
  if (/^resp_/.test(id)) return 'openai-responses';
  return undefined;
}

/** A request body file (`--request`): JSON of any supported protocol; `-` reads it from stdin. */
export function loadRequest(file: string): NormalizedRequest {
  const label = file === '-' ? 'stdin' : basename(file);
  if (file !== '-' && !existsSync(file)) throw new UserError(`${file}: no such file`);
  const bytes = file === '-' ? readStdin() : readBytes(file);
  const expected = '--request takes the request body the agent sent, as JSON';
  if (isBlank(bytes)) throw new UserError(`${label} is empty; ${expected}`);
  if (looksBinary(bytes)) throw new UserError(`${label} is binary; ${expected}`);
  const text = new TextDecoder().decode(bytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${label} is not valid JSON (${jsonFault(text, e as Error)}); ${expected}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new UserError(`${label} is ${jsonKind(body)}, not a JSON object; ${expected}`);
  const response = parseResponseBody(bytes);
  if (response.protocol !== 'unknown') {
    throw new UserError(
      `${label} is a response body (${response.protocol}), not a request: give the response as FILE and the request body the agent sent to --request`,
    );
  }
  return normalizeRequest(body);
}

/** All of stdin (a pipe, a redirected file), refused past the input size limit. */
function readStdin(): Uint8Array {
  let bytes: Buffer;
  try {
    bytes = readFileSync(0);
  } catch (e) {
    throw new UserError(`cannot read stdin (${(e as Error).message})`);
  }
  if (bytes.length > MAX_BYTES)
    throw new UserError(`stdin holds more than ${MAX_BYTES} bytes; Tokenscope reads request bodies up to that size`);
  return bytes;
}

/** The first 4 KB of a regular file within the size limit, and its size; undefined when `readBytes` would refuse it. */
function readHead(file: string): { bytes: Uint8Array; size: number; stat: Stats } | undefined {
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size > MAX_BYTES) return undefined;
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
      return { bytes: buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)), size: st.size, stat: st };
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // readBytes says why
  }
}

/** A file's bytes a block at a time (at most `size`: the file as it was when its head was read). */
function* fileBlocks(file: string, size: number): Generator<{ bytes: Uint8Array }> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${fsWhy(e)}`);
  }
  try {
    for (let at = 0; at < size; ) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, size - at));
      const n = readSync(fd, buf, 0, buf.length, at);
      if (n === 0) break;
      yield { bytes: buf.subarray(0, n) };
      at += n;
    }
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${fsWhy(e)}`);
  } finally {
    closeSync(fd);
  }
}

function readBytes(file: string): Uint8Array {
  const st = statSync(file);
  if (st.isDirectory()) throw new UserError(`${file} is a directory`);
  if (st.size > MAX_BYTES)
    throw new UserError(`${basename(file)} is ${Math.round(st.size / 1024 ** 2)} MB; the limit is ${MAX_BYTES / 1024 ** 2} MB`);
  try {
    return readFileSync(file);
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${fsWhy(e)}`);
  }
}

/** A model-text file's text: as read before the CLI's code loaded (`Preread`) when it is still the same file, else now. */
function readText(file: string, st: Stats, early: Preread | undefined): string {
  if (early && sameFile(early, file, st)) return early.text;
  try {
    return readTextFile(file);
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${fsWhy(e)}`);
  }
}

function jsonKind(value: unknown): string {
  if (value === null) return 'JSON null';
  if (Array.isArray(value)) return 'a JSON array';
  return `a JSON ${typeof value}`;
}

/**
 * Where JSON.parse gave up, as a byte offset. Its own message is not shown: V8 quotes the input in it, which
 * would echo whatever the file holds (binary bytes, secrets) to the terminal.
 */
function jsonFault(text: string, e: Error): string {
  const bytesBefore = (chars: number) => new TextEncoder().encode(text.slice(0, chars)).length;
  const at = /position (\d+)/.exec(e.message);
  if (/end of JSON input/.test(e.message) || (at && Number(at[1]) >= text.trimEnd().length))
    return `cut short at byte ${bytesBefore(text.length)}`;
  return at ? `unexpected character at byte ${bytesBefore(Number(at[1]))}` : 'unexpected character';
}

/**
 * The key that makes a JSON document a request body, if it is one: a `messages` array (Chat, Anthropic), or a `model`
 * with `input` (Responses) or `prompt`/`text` (completions, SGLang). Argument text such as `{"input": "…"}` is not.
 */
function looksLikeRequest(v: Record<string, unknown>): string | undefined {
  if (Array.isArray(v.messages)) return 'messages';
  if (typeof v.model !== 'string') return undefined;
  return ['input', 'prompt'].find((k) => k in v);
}

function fromExchange(exchange: CapturedExchange, body: Uint8Array, chunks: ChunkTiming[], label: string): LoadedInput {
  const { response, request } = parseExchange(exchange, body, chunks);
  return { response, request, model: response.model ?? exchange.requestModel ?? request?.model, label, exchange };
}

/** FILE is not a file: a capture id (or a unique prefix of one) in the capture store. */
async function loadCapture(id: string, dataDir: string, withResult: boolean): Promise<LoadedInput> {
  if (/[\\/]/.test(id) || /\.\w+$/.test(id) || (!existsSync(join(dataDir, DB_FILE)) && !existsSync(join(dataDir, LOG_FILE)))) {
    throw new UserError(`${id}: no such file${/[\\/.]/.test(id) ? '' : ' or capture id'}`);
  }
  const store = await openStore(dataDir, { analyze: false, readOnly: true });
  try {
    const matches = store.get(id) ? [id] : store.list().flatMap((x) => (x.id.startsWith(id) ? [x.id] : []));
    if (matches.length === 0) throw new UserError(`${id}: no such file or capture id (store: ${dataDir})`);
    if (matches.length > 1) throw new UserError(`${id}: ${matches.length} captures start with this id; give more characters`);
    // `get` (not the list entry) also reads the request body.
    const exchange = store.get(matches[0])!;
    const label = `capture ${exchange.id}`;
    const noBody = () => new UserError(`capture ${exchange.id} has no response body (state: ${exchange.state})`);
    if (!withResult) {
      // Parsed as read from disk, a block at a time: a large stream is never held whole, nor its events.
      const frames = store.readResponseFrames(exchange.id);
      if (!frames) throw noBody();
      const { response, request } = parseExchangeChunks(exchange, frames);
      return {
        response,
        request,
        model: response.model ?? exchange.requestModel ?? request?.model,
        label,
        exchange,
        captureId: exchange.id,
      };
    }
    const body = store.readResponse(exchange.id);
    if (!body) throw noBody();
    const stored = resultFor(store, exchange, body.bytes, body.chunks);
    const { response, request } = stored;
    return {
      response,
      request,
      model: response.model ?? exchange.requestModel ?? request?.model,
      label,
      exchange,
      captureId: exchange.id,
      stored,
    };
  } finally {
    await store.close();
  }
}
