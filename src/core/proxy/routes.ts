/**
 * Which upstream a proxied path goes to. The agent's base URL carries the route as its first path segment:
 *
 *   /openrouter/v1/chat/completions  → https://openrouter.ai/api/v1/chat/completions
 *   /sglang/v1/chat/completions      → <SGLang server>/v1/chat/completions
 *   /anthropic/v1/messages           → https://api.anthropic.com/v1/messages
 *   /openai/v1/responses             → https://api.openai.com/v1/responses
 *   /u/<name>/v1/…                   → <custom upstream <name>>/v1/…
 *   /v1/…                            → the default upstream (OpenRouter unless configured)
 *
 * A path outside all of them (`/`, `/health`, `/favicon.ico`) is no route: the proxy answers it itself (server.ts).
 */
import { redactUrl } from '../redact';

export interface Upstreams {
  openrouter?: string;
  sglang?: string;
  anthropic?: string;
  openai?: string;
  /** Where paths without a route prefix go. */
  default?: string;
  /** Named upstreams, reached under `/u/<name>/`. */
  custom?: Record<string, string>;
}

export const DEFAULT_UPSTREAMS = {
  openrouter: 'https://openrouter.ai/api',
  sglang: 'http://127.0.0.1:30000',
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com',
} as const;

export type NamedRoute = keyof typeof DEFAULT_UPSTREAMS;
const NAMED = Object.keys(DEFAULT_UPSTREAMS) as NamedRoute[];

export interface ResolvedRoute {
  /** `openrouter`, `sglang`, `anthropic`, `openai`, a custom name, or `default`. */
  route: string;
  /** The upstream base URL as configured. It may hold a credential (`?key=`, `user:pass@`): never put it in text. */
  base: string;
  /** The base URL as text may show it (errors, logs, banners): its credentials redacted (../redact.ts redactUrl). */
  shownBase: string;
  /** `scheme://host:port` of the upstream. */
  origin: string;
  /** Path and query to request on the upstream. */
  upstreamPath: string;
  /** `origin + upstreamPath`. */
  upstreamUrl: string;
}

const effective = new WeakMap<Upstreams, Required<Upstreams>>();

/** The upstream base URL of each route, defaults filled in. A custom upstream named like a built-in route replaces it. */
export function effectiveUpstreams(u: Upstreams = {}): Required<Upstreams> {
  // Worked out once per configuration (the proxy asks on every request).
  let all = effective.get(u);
  if (!all) effective.set(u, (all = computeUpstreams(u)));
  return all;
}

function computeUpstreams(u: Upstreams): Required<Upstreams> {
  const custom: Record<string, string> = Object.create(null);
  const overrides: Partial<Record<NamedRoute, string>> = {};
  for (const [name, url] of Object.entries(u.custom ?? {})) {
    if ((NAMED as string[]).includes(name)) overrides[name as NamedRoute] = url;
    else custom[name] = url;
  }
  const named = Object.fromEntries(NAMED.map((n) => [n, overrides[n] ?? u[n] ?? DEFAULT_UPSTREAMS[n]])) as Record<NamedRoute, string>;
  return { ...named, default: u.default ?? named.openrouter, custom };
}

/** A request path the proxy refuses to forward (400): a malformed escape, or `.`/`..` segments that would climb out of the route. */
export class BadPathError extends Error {}

/**
 * Resolves a request path (with query); undefined for a path outside every route (`/`, `/health`, `/u/<name>/…` when
 * no such upstream is configured). Throws BadPathError for a path that cannot be forwarded safely.
 */
export function resolveRoute(path: string, upstreams: Upstreams = NO_UPSTREAMS): ResolvedRoute | undefined {
  // An agent asks for the same few paths all day: each is worked out once per configuration (a refused one each time).
  let byPath = resolved.get(upstreams);
  if (!byPath) resolved.set(upstreams, (byPath = new Map()));
  const known = byPath.get(path);
  if (known !== undefined || byPath.has(path)) return known;
  const route = resolveNow(path, upstreams);
  if (byPath.size >= 256) byPath.clear();
  byPath.set(path, route && Object.freeze(route));
  return route;
}

const NO_UPSTREAMS: Upstreams = Object.freeze({});
const resolved = new WeakMap<Upstreams, Map<string, ResolvedRoute | undefined>>();

function resolveNow(path: string, upstreams: Upstreams): ResolvedRoute | undefined {
  checkPath(path);
  const all = effectiveUpstreams(upstreams);
  const seg = firstSegment(path);
  if (seg && (NAMED as string[]).includes(seg.name)) return join(seg.name, all[seg.name as NamedRoute], seg.rest);
  if (seg?.name === 'u') {
    const inner = firstSegment(seg.rest);
    const base = inner && Object.hasOwn(all.custom, inner.name) ? all.custom[inner.name] : undefined;
    return inner && base ? join(inner.name, base, inner.rest) : undefined;
  }
  return seg?.name === 'v1' ? join('default', all.default, path) : undefined;
}

/** The path prefixes the proxy forwards, as a local answer lists them (`/openrouter/`, …, `/u/lab/`, `/v1/`). */
export function routePrefixes(upstreams: Upstreams = NO_UPSTREAMS): string[] {
  const all = effectiveUpstreams(upstreams);
  return [...NAMED, ...Object.keys(all.custom), 'default'].map((r) => (r === 'default' ? '/v1/' : `${routePrefix(r)}/`));
}

/** The base URL path prefix an agent should use for a route (`/openrouter`, `/u/name`, or `` for default). */
export function routePrefix(route: string): string {
  if (route === 'default') return '';
  if ((NAMED as string[]).includes(route)) return `/${route}`;
  return `/u/${encodeURIComponent(route)}`;
}

/** A custom upstream name: letters, digits, `.`, `_`, `-`, starting with a letter or digit (no `__proto__`, no `/`). */
export function checkRouteName(name: string, what: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new Error(
      `${what}: "${name}" is not a usable upstream name (letters, digits, ".", "_" and "-", starting with a letter or digit)`,
    );
  }
  return name;
}

/** Percent-decodings of a path segment checked for a climb out of the route (`%252e%252e%252f` is `../` twice decoded). */
const DECODE_DEPTH = 3;

function checkPath(path: string): void {
  if (!path.startsWith('/')) throw new BadPathError(`the request path "${path}" does not start with /`);
  const q = path.search(/[?#]/);
  const pathname = q < 0 ? path : path.slice(0, q);
  for (const raw of pathname.split('/')) {
    let seg = raw;
    for (let depth = 0; depth < DECODE_DEPTH; depth++) {
      try {
        seg = decodeURIComponent(seg);
      } catch {
        if (depth === 0) throw new BadPathError(`the request path holds a malformed %-escape ("${raw}")`);
        break;
      }
      // An encoded `/` or `\` (`..%2f`, `%2e%2e%5c`) splits the segment for a server that decodes it; `..;x` is `..`
      // to servers that drop path parameters.
      if (seg.split(/[\\/]/).some((part) => part === '.' || part === '..' || /^\.\.?;/.test(part))) {
        throw new BadPathError(
          raw === seg
            ? `the request path holds a "${seg}" segment, which could leave the route`
            : `the request path holds "${raw}", an encoded "${seg}" that could leave the route`,
        );
      }
      if (!seg.includes('%')) break;
    }
  }
}

function firstSegment(path: string): { name: string; rest: string } | undefined {
  const m = /^\/([^/?#]+)(.*)$/s.exec(path);
  if (!m) return undefined;
  const rest = m[2] === '' ? '/' : m[2].startsWith('?') ? `/${m[2]}` : m[2];
  return { name: decodeURIComponent(m[1]), rest };
}

/** Base path + the request's rest; a query in the base URL (`?key=…`) is kept, after the request's own. */
function join(route: string, base: string, rest: string): ResolvedRoute {
  let u = parsedBases.get(base);
  if (!u) {
    const url = new URL(base);
    u = { origin: url.origin, path: url.pathname.replace(/\/+$/, ''), search: url.search, shown: shownUrl(base) };
    if (parsedBases.size > 256) parsedBases.clear();
    parsedBases.set(base, u);
  }
  let upstreamPath = u.path + (rest.startsWith('/') ? rest : `/${rest}`);
  if (u.search.length > 1) upstreamPath += (upstreamPath.includes('?') ? '&' : '?') + u.search.slice(1);
  return { route, base, shownBase: u.shown, origin: u.origin, upstreamPath, upstreamUrl: u.origin + upstreamPath };
}

/** An upstream URL as text may show it: userinfo and credential query parameters redacted. */
export function shownUrl(url: string): string {
  return redactUrl(url, {}, { readable: true });
}

/** Base URLs as parsed (a handful per configuration; parsing one on every request costs more than the rest). */
const parsedBases = new Map<string, { origin: string; path: string; search: string; shown: string }>();

/** Checks an upstream URL given on the command line or in settings; returns it without a trailing slash. */
export function checkUpstreamUrl(url: string, what: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`${what} "${shownUrl(url)}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${what} "${shownUrl(url)}" must be http:// or https://`);
  // Only the path loses its trailing slash: `http://x/api/?k=1` keeps its query.
  return u.search ? url.replace(/\/+(\?)/, '$1') : url.replace(/\/+$/, '');
}
