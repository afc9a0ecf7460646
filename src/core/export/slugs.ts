/**
 * The provider slug an export pins its replay to, made real before the export is written: a served provider's
 * display name (`NovitaAI`) is not its routing slug (`novita`), and a replay pinned to a slug derived from the name
 * gets OpenRouter's `404 No allowed providers`. When the capture store's listing does not name the served provider,
 * the model's endpoint listing (then `/providers`) is read and kept in the store (../policy/slugs.ts). When no
 * listing can be read (no key, offline, OpenRouter down) the input says why, and every format says the slug is a guess.
 */
import { ProviderDirectory, resolveSlug, type SlugCache, type SlugEntry } from '../policy/slugs';
import type { OpenRouterClient } from '../upstream/openrouter';
import type { CaptureInput } from './redaction';
import { isOpenRouter } from './repro';

/** The model a capture asked for: the recorded one, else the request body's. */
function modelOf(input: CaptureInput): string | undefined {
  const x = input.exchange;
  if (x.requestModel) return x.requestModel;
  if (input.stored?.summary.model) return input.stored.summary.model;
  try {
    const body = JSON.parse(x.requestBody ?? '') as { model?: unknown };
    return typeof body?.model === 'string' ? body.model : undefined;
  } catch {
    return undefined;
  }
}

/** The served provider as the capture names it (display name). */
function servedOf(input: CaptureInput): string | undefined {
  return input.exchange.servedProvider ?? input.stored?.summary.provider;
}

/**
 * The input with the served provider's slug among its `providerSlugs` (read from OpenRouter when the store did not
 * have it), or with `slugGuess` saying why it could not be. Inputs that pin nothing (not OpenRouter, no served
 * provider) come back as they are, and so does one whose slug the store already knew: no request is made.
 * `client` undefined: no listing can be read (`why` says so, e.g. no API key).
 */
export async function withReplaySlug(
  input: CaptureInput,
  cache: SlugCache | undefined,
  client: Pick<OpenRouterClient, 'endpoints' | 'providers'> | undefined,
  opts: { why?: string; signal?: AbortSignal } = {},
): Promise<CaptureInput> {
  const served = servedOf(input);
  if (!served || !isOpenRouter(input.exchange)) return input;
  if (new ProviderDirectory(input.providerSlugs ?? []).slugOf(served).known) return input;
  const r = await resolveSlug(cache, client, modelOf(input), served, opts.signal);
  if (!r.known)
    return {
      ...input,
      slugGuess: client ? (r.why ?? 'no OpenRouter listing names it') : (opts.why ?? r.why ?? 'no OpenRouter listing could be read'),
    };
  // A read-only store keeps nothing: the input carries what was learnt either way.
  const learnt: SlugEntry = { name: served, slug: r.slug, source: 'endpoints', at: Date.now() };
  return { ...input, providerSlugs: [...(input.providerSlugs ?? []), learnt] };
}
