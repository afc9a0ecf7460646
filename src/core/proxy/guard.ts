/**
 * Who may talk to the proxy. It listens on loopback only, but a web page can still reach loopback through the
 * browser: DNS rebinding (a foreign name resolving to 127.0.0.1, visible in `Host`) and cross-origin requests
 * (visible in `Origin`). Both are refused so no web page can spend the user's API credit or read captures.
 */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1).toLowerCase();
  return hostHeader.replace(/:\d+$/, '').toLowerCase();
}

export function isLoopbackHost(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  const name = hostName(hostHeader);
  return LOOPBACK_NAMES.has(name) || name.endsWith('.localhost') || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** The reason to refuse a request, or undefined when it may pass. */
export function refusal(headers: { host?: string; origin?: string | string[] }): string | undefined {
  if (!isLoopbackHost(headers.host)) return `Host "${headers.host ?? ''}" is not a loopback name`;
  const origin = Array.isArray(headers.origin) ? headers.origin[0] : headers.origin;
  if (origin === undefined) return undefined;
  let host: string;
  try {
    const u = new URL(origin);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return `Origin "${origin}" is not allowed`;
    host = u.host;
  } catch {
    return `Origin "${origin}" is not allowed`;
  }
  return isLoopbackHost(host) ? undefined : `Origin "${origin}" is not allowed`;
}
