/**
 * Import of repro bundles and HAR files into the capture store. Imported exchanges are written through the
 * store's ordinary writer (begin → responseStarted → chunk → finish), with their recorded timing, so they are
 * captures like any other: listed, analysed, exportable, re-runnable.
 *
 * Everything is parsed and validated before the first write: a file that cannot be used changes nothing.
 */
import type { CaptureStore } from '../capture/store';
import type { CapturedExchange } from '../model';
import { UserError } from '../model';
import { BUNDLE_FORMAT, readBundle } from '../capture/bundle-read';
import { readHarValue, type HarImport } from './har';
import { redactCapture, type CaptureInput } from './redaction';

export interface ParsedImport {
  kind: 'bundle' | 'har';
  captures: CaptureInput[];
  /** HAR entries left out (not model API calls, malformed). */
  skipped: HarImport['skipped'];
}

/**
 * Recognizes and validates a file's text: a repro bundle (`"format": "tokenscope.repro"`) or a HAR (`"log"`).
 * `name` (the file name) only sharpens the error message.
 */
export function parseImport(text: string, name = 'the file'): ParsedImport {
  const fail = (why: string) => new UserError(`cannot import ${name}: ${why}`);
  // Windows tools save JSON with a byte-order mark, which JSON.parse refuses.
  text = text.replace(/^\ufeff/, '');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const head = text.trimStart();
    if (head === '') throw fail('it is empty');
    // Binary and plain-text files are not broken JSON: say what they are instead of quoting them.
    if (/[\u0000-\u0008\u000e-\u001f]/.test(head.slice(0, 4096))) throw fail('it is a binary file, not a HAR or a Tokenscope repro bundle');
    if (head[0] !== '{') throw fail('it is not JSON, so neither a HAR nor a Tokenscope repro bundle');
    throw fail(`its JSON is cut short or malformed (${(e as Error).message})`);
  }
  const o = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  try {
    if (o && 'format' in o) {
      // readBundle gives the precise reason (wrong format, newer version, inconsistent body).
      const b = readBundle(text);
      return { kind: 'bundle', captures: [{ exchange: b.exchange, responseBody: b.responseBody, chunks: b.chunks }], skipped: [] };
    }
    if (o && 'log' in o) {
      const har = readHarValue(o);
      return { kind: 'har', captures: har.captures, skipped: har.skipped };
    }
  } catch (e) {
    // The reader's reason, prefixed with the file it is about.
    throw e instanceof UserError ? new UserError(`cannot import ${name}: ${e.message}`, e.exitCode) : e;
  }
  throw fail(`it is neither a HAR (no "log") nor a Tokenscope repro bundle (no "format": "${BUNDLE_FORMAT}")`);
}

/** Writes parsed captures into the store, redacted, keeping their recorded timing. Returns the new exchanges. */
export async function importCaptures(store: CaptureStore, captures: CaptureInput[]): Promise<CapturedExchange[]> {
  const out: CapturedExchange[] = [];
  for (const input of captures) {
    // HARs from browser devtools carry live Authorization headers and cookies: never store them.
    const { exchange: x, responseBody, chunks } = redactCapture(input).capture;
    const w = store.begin({
      route: x.route,
      upstreamUrl: x.upstreamUrl,
      method: x.method,
      path: x.path,
      requestHeaders: x.requestHeaders,
      ...(x.requestBody !== undefined ? { requestBody: x.requestBody } : {}),
      ...(x.agent !== undefined ? { agent: x.agent } : {}),
      // A re-run's original is only linked when it is in this store too.
      ...(x.parentId !== undefined && store.get(x.parentId) ? { parentId: x.parentId } : {}),
      ...(x.target !== undefined ? { target: x.target } : {}),
      startedAt: x.startedAt,
    });
    if (x.status !== undefined) w.responseStarted(x.status, x.responseHeaders ?? {}, x.ttfbMs);
    for (const c of chunks) w.chunk(responseBody.subarray(c.offset, c.offset + c.length), c.t);
    const annotations = {
      ...(x.requestModel !== undefined ? { requestModel: x.requestModel } : {}),
      ...(x.generationId !== undefined ? { generationId: x.generationId } : {}),
      ...(x.servedProvider !== undefined ? { servedProvider: x.servedProvider } : {}),
      ...(x.pin !== undefined ? { pin: x.pin } : {}),
    };
    if (Object.keys(annotations).length > 0) w.annotate(annotations);
    out.push(
      await w.finish({
        ...(x.error !== undefined ? { error: x.error } : {}),
        incomplete: x.state === 'incomplete' || x.state === 'streaming',
        ...(x.endedAt !== undefined ? { endedAt: x.endedAt } : {}),
      }),
    );
  }
  return out;
}

/** Parses, validates, then imports a file's text. */
export async function importText(
  store: CaptureStore,
  text: string,
  name?: string,
): Promise<{ kind: ParsedImport['kind']; imported: CapturedExchange[]; skipped: ParsedImport['skipped'] }> {
  const parsed = parseImport(text, name);
  return { kind: parsed.kind, imported: await importCaptures(store, parsed.captures), skipped: parsed.skipped };
}
