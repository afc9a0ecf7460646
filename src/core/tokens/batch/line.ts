/**
 * One line of a `tokens --batch` input: an OpenAI-shape `chat.completion` (as OpenRouter returns it), a
 * `{"request": …, "response": …}` pair, or a Tokenscope repro bundle. Anything else is a bad line with a one-line
 * reason (never the line's text: it may hold anything).
 */
import { parseExchange } from '../../analyze';
import { BUNDLE_FORMAT, readBundle } from '../../capture/bundle-read';
import { UserError, type NormalizedRequest, type ParsedResponse } from '../../model';
import { normalizeRequest, parseResponseBody, parseResponseJson } from '../../wire/index';

export interface BatchSample {
  response: ParsedResponse;
  request?: NormalizedRequest;
  /** The request body as sent (what the chat template renders). */
  requestBody?: unknown;
  /** The response id (`gen-…`, `chatcmpl-…`). */
  id?: string;
  /** The line's `dataset` field (or `metadata.dataset`), when present. */
  dataset?: string;
}

const utf8 = new TextEncoder();

export function parseBatchLine(text: string): BatchSample {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new UserError('not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new UserError(`${Array.isArray(v) ? 'a JSON array' : `JSON ${v === null ? 'null' : typeof v}`}, not an object`);
  const o = v as Record<string, unknown>;
  const dataset = datasetOf(o);
  if (o.format === BUNDLE_FORMAT) {
    const bundle = readBundle(text);
    const { response, request } = parseExchange(bundle.exchange, bundle.responseBody, bundle.chunks);
    return { response, request, requestBody: jsonOrUndefined(bundle.exchange.requestBody), id: response.id, dataset };
  }
  if ('response' in o) {
    const body = o.response;
    if (typeof body !== 'object' && typeof body !== 'string') throw new UserError('"response" is neither a JSON object nor a body text');
    // A body text may be anything (SSE, say); a body object is read with its JSON text beside it. The value is the
    // one the line's parse gave: parsing that text again gives the same value, so it is not parsed twice.
    const response = turnOf(
      typeof body === 'string' ? parseResponseBody(utf8.encode(body)) : parseResponseJson(JSON.stringify(body), body),
    );
    const requestBody = typeof o.request === 'string' ? jsonOrUndefined(o.request) : o.request;
    const request = requestBody === undefined || requestBody === null ? undefined : normalizeRequest(requestBody);
    return { response, request, requestBody: request ? requestBody : undefined, id: response.id, dataset };
  }
  // The line parsed as a JSON object: the body is read from that text and value, not decoded and parsed again.
  const response = turnOf(parseResponseJson(text, v));
  return { response, id: response.id, dataset };
}

/** A body the wire layer could not place as a model turn is a bad line, not an empty turn. */
function turnOf(r: ParsedResponse): ParsedResponse {
  if (r.protocol === 'unknown' || r.protocol === 'native-text') {
    throw new UserError('not a chat completion, a {"request", "response"} pair or a repro bundle');
  }
  return r;
}

function datasetOf(o: Record<string, unknown>): string | undefined {
  const meta = o.metadata as Record<string, unknown> | undefined;
  const d = o.dataset ?? (typeof meta === 'object' && meta !== null ? meta.dataset : undefined);
  return typeof d === 'string' ? d : typeof d === 'number' ? String(d) : undefined;
}

function jsonOrUndefined(s: string | undefined): unknown {
  if (!s) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
