/**
 * The redaction pass every export goes through, whatever its format.
 *
 * It applies the tree's one redaction step (src/core/redact.ts) to every place a captured exchange carries text:
 * request and response headers, the request body, the raw response bytes, the URL and path, the error line. On
 * top of that step it adds what only exports need: user patterns (home paths, emails…), URL query parameters that
 * carry credentials, and chunk timing that stays consistent when a placeholder changes the body's length.
 *
 * Formats never see an unredacted capture: they take a `Repro`, which only `prepareRepro` (repro.ts) builds, and
 * every text they produce is sealed by `sealExport` before it is returned.
 */
import type { SlugEntry } from '../policy/slugs';
import { homedir } from 'node:os';
import {
  containsSecret,
  redactHeaders,
  redactText,
  redactUrl as redactUrlOnce,
  redactUrlsIn,
  type Redaction,
  type RedactOptions,
} from '../redact';
import { UserError, type Analysis, type CapturedExchange, type ChunkTiming, type ExchangeSummary } from '../model';
import { utf8Bytes, utf8Text } from '../capture/body-text';

/** A user-configured pattern: matches are replaced by `[REDACTED:<label>]`. */
export interface UserPattern {
  label: string;
  pattern: string | RegExp;
}

export interface ExportRedactOptions {
  /** Patterns on top of the built-in ones (auth headers, cookies, key shapes, credential query parameters). */
  patterns?: UserPattern[];
}

/** One kind of redaction at one place, with how many times it happened (what the export preview lists). */
export interface RedactionItem extends Redaction {
  count: number;
}

/** The raw material of an export: one capture as the store returns it. */
export interface CaptureInput {
  exchange: CapturedExchange;
  responseBody: Uint8Array;
  chunks: ChunkTiming[];
  /** The capture store's analysis of the exchange, when it holds one (read instead of analysing again). */
  stored?: { summary: ExchangeSummary; analysis: Analysis };
  /** OpenRouter's provider slugs the capture store keeps (../policy/slugs.ts), for the replay's provider pin. */
  providerSlugs?: readonly SlugEntry[];
  /** Why no OpenRouter listing could name the served provider's slug (./slugs.ts): the replay's pin is a guess. */
  slugGuess?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// User patterns

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Named patterns users switch on (`--redact home`, `--redact email`). `home` covers the usual home-directory
 * roots on every OS (in plain text and as JSON escapes them), plus the current user's own home wherever it lives;
 * only the user's part of the path is replaced, so `/home/alice/src/app.ts` becomes `[REDACTED:home]/src/app.ts`.
 */
export function presetPattern(name: string, home: string = homedir()): UserPattern | undefined {
  switch (name) {
    case 'home': {
      const roots = String.raw`(?:/home/|/Users/|[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/))[^/\\\s"'<>]+`;
      const own = home && home.length > 1 ? `|${escapeRegExp(home)}(?![^/\\s"'<>])` : '';
      return { label: 'home', pattern: new RegExp(`${own ? `(?:${roots}${own})` : roots}`) };
    }
    case 'email':
      return { label: 'email', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/ };
    default:
      return undefined;
  }
}

export const PRESET_NAMES = ['home', 'email'] as const;

/**
 * Reads one `--redact` value: a preset name (`home`, `email`), `label=REGEX`, or a bare REGEX (label `custom`).
 * A pattern that is not a valid regular expression, or that matches the empty string, is a UserError.
 */
export function parseRedactPattern(value: string): UserPattern {
  const preset = presetPattern(value);
  if (preset) return preset;
  const m = /^([A-Za-z][\w-]*)=(.+)$/s.exec(value);
  const label = m ? m[1] : 'custom';
  const source = m ? m[2] : value;
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch (e) {
    throw new UserError(`--redact ${JSON.stringify(value)} is not a valid regular expression (${(e as Error).message})`);
  }
  if (re.test('')) throw new UserError(`--redact ${JSON.stringify(value)} matches the empty string`);
  return { label, pattern: source };
}

// ---------------------------------------------------------------------------------------------------------------
// The pass

/** A URL through the tree's one URL redaction (userinfo, credential query parameters, key shapes), readable. */
function redactUrl(url: string, opts: RedactOptions, where: string): string {
  return redactUrlOnce(url, opts, { where, readable: true });
}

/**
 * Redacts raw bytes. Valid UTF-8 is redacted as text; anything else as Latin-1, which maps every byte to one
 * character and back, so key shapes (all ASCII) are still found and nothing else changes. Returns the same array
 * when nothing matched.
 */
function redactBytes(bytes: Uint8Array, opts: RedactOptions, where: string): Uint8Array {
  const utf8 = utf8Text(bytes);
  const text = utf8 ?? Buffer.from(bytes).toString('latin1');
  const out = redactText(text, opts, where);
  if (out === text) return bytes;
  return utf8 !== undefined ? utf8Bytes(out) : new Uint8Array(Buffer.from(out, 'latin1'));
}

/**
 * Chunk timing for a redacted body: every chunk keeps its time and covers its own bytes, and the chunks still
 * tile the body. Redacting chunk by chunk gives each chunk's new length directly, unless a secret was cut by a
 * chunk boundary (the totals then differ); only then are the boundaries inside the changed stretch mapped by
 * redacting the prefix before each of them.
 */
function remapChunks(before: Uint8Array, after: Uint8Array, chunks: ChunkTiming[], opts: RedactOptions): ChunkTiming[] {
  if (before === after) return chunks;
  const quiet: RedactOptions = { patterns: opts.patterns };
  const local = chunks.map((c) => redactBytes(before.subarray(c.offset, c.offset + c.length), quiet, '').length);
  let ends: number[];
  if (local.reduce((a, b) => a + b, 0) === after.length) {
    let acc = 0;
    ends = local.map((n) => (acc += n));
  } else {
    let prefix = 0;
    while (prefix < before.length && prefix < after.length && before[prefix] === after[prefix]) prefix++;
    let suffix = 0;
    while (
      suffix < before.length - prefix &&
      suffix < after.length - prefix &&
      before[before.length - 1 - suffix] === after[after.length - 1 - suffix]
    ) {
      suffix++;
    }
    const delta = after.length - before.length;
    ends = chunks.map((c) => {
      const end = c.offset + c.length;
      if (end <= prefix) return end;
      if (end >= before.length - suffix) return end + delta;
      return redactBytes(before.subarray(0, end), quiet, '').length;
    });
  }
  const out: ChunkTiming[] = [];
  let prevEnd = 0;
  for (const [i, c] of chunks.entries()) {
    const end = Math.min(Math.max(ends[i], prevEnd), after.length);
    out.push({ t: c.t, offset: prevEnd, length: end - prevEnd });
    prevEnd = end;
  }
  if (out.length > 0 && prevEnd < after.length) out[out.length - 1].length += after.length - prevEnd;
  return out;
}

function prefixWhere(report: Redaction[], from: number, prefix: string): void {
  for (let i = from; i < report.length; i++) report[i] = { ...report[i], where: `${prefix} ${report[i].where}` };
}

/**
 * The one pass: returns a redacted copy of the capture and what was replaced. Idempotent (placeholders never
 * match again), so redacting an already-redacted capture reports nothing new.
 */
export function redactCapture(input: CaptureInput, options: ExportRedactOptions = {}): { capture: CaptureInput; report: Redaction[] } {
  const report: Redaction[] = [];
  const opts: RedactOptions = { patterns: options.patterns, report };
  const x = input.exchange;

  let mark = report.length;
  const requestHeaders = redactHeaders(x.requestHeaders, opts);
  prefixWhere(report, mark, 'request header');
  mark = report.length;
  const responseHeaders = x.responseHeaders ? redactHeaders(x.responseHeaders, opts) : undefined;
  prefixWhere(report, mark, 'response header');

  const exchange: CapturedExchange = {
    ...x,
    upstreamUrl: redactUrl(x.upstreamUrl, opts, 'upstream URL'),
    path: redactUrl(x.path, opts, 'path'),
    requestHeaders,
    ...(responseHeaders ? { responseHeaders } : {}),
    ...(x.requestBody !== undefined ? { requestBody: redactText(x.requestBody, opts, 'request body') } : {}),
    ...(x.error !== undefined ? { error: redactUrlsIn(x.error, opts, 'error') } : {}),
    ...(x.target !== undefined ? { target: redactUrl(x.target, opts, 'target') } : {}),
  };
  const responseBody = redactBytes(input.responseBody, opts, 'response body');
  const chunks = remapChunks(input.responseBody, responseBody, input.chunks, opts);
  if (responseBody !== input.responseBody && exchange.responseBytes !== undefined) exchange.responseBytes = responseBody.length;
  return { capture: { exchange, responseBody, chunks }, report };
}

/** Groups a report by label, place and preview, for a preview list that stays short on long streams. */
export function summarizeRedactions(report: Redaction[]): RedactionItem[] {
  const byKey = new Map<string, RedactionItem>();
  for (const r of report) {
    const key = `${r.label}\u0000${r.where}\u0000${r.preview}`;
    const item = byKey.get(key);
    if (item) item.count++;
    else byKey.set(key, { ...r, count: 1 });
  }
  return [...byKey.values()];
}

/** What will be redacted from this capture before anything is saved (the export preview). */
export function previewRedactions(input: CaptureInput, options: ExportRedactOptions = {}): RedactionItem[] {
  return summarizeRedactions(redactCapture(input, options).report);
}

/**
 * Applies the pass to a text an exporter composed (findings quoting arguments, excerpts of the native text) and
 * refuses to hand out anything still key-shaped. Every exported text goes through here last.
 */
export function sealExport(text: string, options: ExportRedactOptions = {}): string {
  const out = redactText(text, { patterns: options.patterns });
  if (containsSecret(out)) {
    throw new UserError('export stopped: a key-shaped string survived redaction; nothing was written');
  }
  return out;
}
