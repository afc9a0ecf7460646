/**
 * OpenRouter facts the proxy records: which provider served a request, and whether a requested pin held.
 * OpenRouter may fall back or reorder providers silently, so the served provider must be recorded per exchange.
 */

/** What the proxy records from a request body: the model asked for and the provider pin (`provider.only`, else `provider.order`). */
export function requestInfo(raw: string | Buffer | undefined): { model?: string; pin?: string[] } {
  if (!raw || raw.length === 0 || (typeof raw === 'string' ? raw[0] !== '{' : raw[0] !== 0x7b)) return {};
  if (raw.length > FULL_PARSE_MAX) return largeRequestInfo(raw);
  const body = typeof raw === 'string' ? raw : raw.toString('utf8');
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

/** Bodies up to this are parsed whole; a larger one (long contexts, images) would stall the event loop for tens of ms. */
const FULL_PARSE_MAX = 1024 * 1024;
/** Bytes decoded after a member name in a large body: enough for the members' patterns below. */
const MEMBER_WINDOW = 8 * 1024;

/**
 * The same for a large body, by a scan instead of a parse: an unescaped `"model":"…"` is a real member (inside a
 * JSON string a quote is escaped), and `"provider":{…}` is parsed alone when it is short.
 */
function largeRequestInfo(body: string | Buffer): { model?: string; pin?: string[] } {
  const model = memberValue(body, '"model"', /"model"\s*:\s*"((?:[^"\\]|\\.){1,200})"/y, (raw) => JSON.parse(`"${raw}"`) as string);
  const pin = memberValue(body, '"provider"', /"provider"\s*:\s*(\{[^{}]{0,2000}\})/y, (raw) => {
    const v = JSON.parse(raw) as { only?: unknown; order?: unknown };
    const list = Array.isArray(v.only) ? v.only : Array.isArray(v.order) ? v.order : undefined;
    return list?.filter((x): x is string => typeof x === 'string');
  });
  return { ...(model && { model }), ...(pin && pin.length > 0 && { pin }) };
}

/**
 * The first `name` member whose value `re` (sticky) reads; found with indexOf, which is native and fast on 16 MB (in
 * bytes too: only the few KB after a hit are decoded).
 */
function memberValue<T>(body: string | Buffer, name: string, re: RegExp, read: (raw: string) => T | undefined): T | undefined {
  for (let at = body.indexOf(name); at >= 0; at = body.indexOf(name, at + name.length)) {
    const text = typeof body === 'string' ? body : body.toString('utf8', at, at + MEMBER_WINDOW);
    re.lastIndex = typeof body === 'string' ? at : 0;
    const m = re.exec(text);
    if (!m) continue;
    try {
      return read(m[1]);
    } catch {
      return undefined;
    }
  }
  return undefined;
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
  const norm = (s: string) =>
    s
      .split('/')[0]
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '');
  const got = norm(served);
  return requested.some((slug) => norm(slug) === got);
}
