/**
 * OpenRouter facts the proxy records: which provider served a request, and whether a requested pin held.
 * OpenRouter may fall back or reorder providers silently, so the served provider must be recorded per exchange.
 */

/** What the proxy records from a request body: the model asked for and the provider pin (`provider.only`, else `provider.order`). */
export function requestInfo(body: string | undefined): { model?: string; pin?: string[] } {
  if (!body || body[0] !== '{') return {};
  let v: { model?: unknown; provider?: { only?: unknown; order?: unknown } } | null;
  try {
    v = JSON.parse(body);
  } catch {
    return {};
  }
  const p = v?.provider;
  const list = Array.isArray(p?.only) ? p.only : Array.isArray(p?.order) ? p.order : undefined;
  const pin = list?.filter((s): s is string => typeof s === 'string');
  return {
    ...(typeof v?.model === 'string' && { model: v.model }),
    ...(pin && pin.length > 0 && { pin }),
  };
}

/**
 * The served provider named in a response head (the first chunk of a stream, or a whole JSON body): the top-level
 * `"provider":"…"` OpenRouter adds. JSON escaping keeps model text from matching: a quote inside a string is `\"`.
 */
export function servedProvider(head: string): string | undefined {
  const m = /"provider"\s*:\s*"((?:[^"\\]|\\.){1,200})"/.exec(head);
  if (!m) return undefined;
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return undefined;
  }
}

/** Compares a display name (`Google AI Studio`) with slugs (`google-ai-studio`, `fireworks/fp8`). */
export function pinHonoured(requested: string[], served: string): boolean {
  const norm = (s: string) => s.split('/')[0].toLowerCase().replace(/[^a-z0-9]/g, '');
  const got = norm(served);
  return requested.some((slug) => norm(slug) === got);
}
