/**
 * The reproduce script: a `curl` command that sends the captured request again, to the same upstream and, on
 * OpenRouter, pinned to the provider that served it (`provider.only`, `allow_fallbacks: false`), plus the
 * `tokenscope rerun` equivalent. The key comes from an environment variable; it is never written out.
 */
import { OPENROUTER_KEY_ENV, pinProvider } from '../upstream/openrouter';
import { header, isOpenRouter, replayPin, requestJson, type Repro } from './repro';
import { sealExport } from './redaction';
import { jsonText } from './json-text';
import { httpEquivalent } from '../wire/websocket-request';

/** Request headers worth replaying: they change what the upstream does. Everything else is the client's own. */
const REPLAYED_HEADERS = new Set([
  'content-type',
  'accept',
  'anthropic-version',
  'anthropic-beta',
  'openai-beta',
  'http-referer',
  'x-title',
  'x-openrouter-title',
  'x-openrouter-categories',
]);

export interface Replay {
  /** The HTTP method (a WebSocket exchange's `response.create` is replayed as the POST it stands for). */
  method: string;
  url: string;
  /** Headers as sent, the credential as a shell reference to `keyEnv`. */
  headers: [string, string][];
  body?: string;
  /** Environment variable the key is read from, when the upstream needs one. */
  keyEnv?: string;
  /** The provider pin applied to the body, and the served provider name a derived slug came from (and why). */
  pin?: { slug: string; derivedFrom?: string; why?: string };
  /** The request had a body the capture did not keep: the replay reads it from `$REQUEST_BODY_FILE` instead. */
  bodyNotKept?: { bytes: number; why: string };
}

/** The variable a replay reads a request body from when the capture did not keep it. */
export const REQUEST_BODY_ENV = 'REQUEST_BODY_FILE';

/** Environment variable for a route's key (`OPENROUTER_API_KEY`, `ANTHROPIC_API_KEY`, `SGLANG_API_KEY`…). */
function keyEnvOf(r: Repro): string {
  if (isOpenRouter(r.exchange)) return OPENROUTER_KEY_ENV;
  const route = r.exchange.route
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return `${route || 'UPSTREAM'}_API_KEY`;
}

/** The request to replay: same URL and body, the OpenRouter provider pin set, the key from the environment. */
export function replayOf(r: Repro): Replay {
  const x = r.exchange;
  const headers: [string, string][] = [];
  const keyEnv = keyEnvOf(r);
  let usesKey = false;
  if (header(x.requestHeaders, 'authorization') !== undefined || isOpenRouter(x)) {
    headers.push(['Authorization', `Bearer $${keyEnv}`]);
    usesKey = true;
  } else if (header(x.requestHeaders, 'x-api-key') !== undefined) {
    headers.push(['x-api-key', `$${keyEnv}`]);
    usesKey = true;
  }
  for (const [name, value] of Object.entries(x.requestHeaders)) {
    if (REPLAYED_HEADERS.has(name.toLowerCase())) headers.push([name, value]);
  }
  const ws = httpEquivalent(x);
  if (ws && !headers.some(([name]) => name.toLowerCase() === 'content-type')) headers.push(['Content-Type', 'application/json']);
  let body = ws?.body ?? x.requestBody;
  const pin = isOpenRouter(x) ? replayPin(r) : undefined;
  const json = pin ? requestJson(r) : undefined;
  if (pin && json) body = jsonText(pinProvider(json, pin.slug));
  return {
    method: ws?.method ?? x.method,
    url: x.upstreamUrl,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(usesKey ? { keyEnv } : {}),
    ...(pin && json ? { pin } : {}),
    ...(body === undefined && x.requestNotKept ? { bodyNotKept: x.requestNotKept } : {}),
  };
}

/** One line saying a replay's provider slug is a guess: derived from the served provider's name, and why. */
export function guessLine(pin: { slug: string; derivedFrom: string; why?: string }): string {
  // One line whatever the name holds (it comes from the network): it is written into comments.
  const one = (t: string) => t.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
  return one(
    `WARNING: the provider slug "${pin.slug}" is a guess, derived from the served provider's name "${pin.derivedFrom}"${pin.why ? ` (${pin.why})` : ''}. Check it on the model's OpenRouter page: a wrong slug gets 404 "No allowed providers".`,
  );
}

/** One line saying a request body the capture did not keep (its size, and why). */
export function bodyNotKeptLine(n: { bytes: number; why: string }): string {
  return `the request body (${n.bytes} bytes) was not kept by the capture: ${n.why}`;
}

/** `tokenscope rerun ID --target openrouter:SLUG`, when the exchange went to OpenRouter. */
export function rerunCommand(r: Repro): string | undefined {
  if (!isOpenRouter(r.exchange)) return undefined;
  const pin = replayPin(r);
  return `tokenscope rerun ${r.exchange.id} --target openrouter${pin ? `:${pin.slug}` : ''}`;
}

/** Single-quotes a word for POSIX shells. */
function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Double-quotes a header whose value references the key variable, so the shell expands it and nothing else. */
function dq(s: string): string {
  return `"${s.replace(/(["\\`])/g, '\\$1').replace(/\$(?![A-Z_][A-Z0-9_]*\b)/g, '\\$')}"`;
}

/** The curl command alone (what the Markdown issue body quotes). */
export function curlCommand(r: Repro): string {
  const rep = replayOf(r);
  const lines = [`curl -sS -N -X ${rep.method} ${sq(rep.url)}`];
  for (const [name, value] of rep.headers) {
    const h = `${name}: ${value}`;
    lines.push(rep.keyEnv && value.includes(`$${rep.keyEnv}`) ? `-H ${dq(h)}` : `-H ${sq(h)}`);
  }
  // A body the capture did not keep is never dropped silently: the command reads it from a file the user names.
  if (rep.bodyNotKept) lines.push(`--data-binary @"$${REQUEST_BODY_ENV}"`);
  if (rep.body === undefined) return lines.join(' \\\n  ');
  let delimiter = 'TOKENSCOPE_BODY';
  while (rep.body.split('\n').includes(delimiter)) delimiter += '_';
  lines.push(`--data-binary @- <<'${delimiter}'`);
  return `${lines.join(' \\\n  ')}\n${rep.body}\n${delimiter}`;
}

/** The reproduce script: comments saying what it does, the curl command, and the Tokenscope equivalent. */
export function writeCurl(r: Repro): string {
  const rep = replayOf(r);
  const out = ['#!/bin/sh', `# Replays Tokenscope capture ${r.exchange.id} (${new Date(r.exchange.startedAt).toISOString()}).`];
  if (rep.keyEnv) out.push(`# The key is read from $${rep.keyEnv}; set it first. It is never written into this file.`);
  if (rep.pin) {
    out.push(`# Pinned to provider ${rep.pin.slug} with fallbacks off, so the same provider serves the replay.`);
    if (rep.pin.derivedFrom) {
      out.push(`# ${guessLine(rep.pin as { slug: string; derivedFrom: string; why?: string })}`);
    }
  }
  if (rep.bodyNotKept) {
    out.push(
      `# Note: ${bodyNotKeptLine(rep.bodyNotKept)}.`,
      `# This replay sends the file named by $${REQUEST_BODY_ENV} as the body; without it the script stops here.`,
      `: "\${${REQUEST_BODY_ENV}:?set ${REQUEST_BODY_ENV} to a file holding the request body (the capture did not keep it)}"`,
    );
  }
  out.push(curlCommand(r));
  const rerun = rerunCommand(r);
  if (rerun) out.push('', '# With Tokenscope, which captures and checks the replay:', `# ${rerun}`);
  return sealExport(out.join('\n') + '\n');
}
