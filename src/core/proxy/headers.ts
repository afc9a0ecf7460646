/** Which headers cross the proxy: hop-by-hop headers (RFC 9110 §7.6.1) never do; `host` and `expect` are the proxy's own. */
import type { IncomingMessage } from 'node:http';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate', 'proxy-authorization']);

function hopByHop(connection: string | string[] | undefined): Set<string> {
  const extra = (Array.isArray(connection) ? connection.join(',') : (connection ?? '')).split(',').map((s) => s.trim().toLowerCase());
  return new Set([...HOP_BY_HOP, ...extra.filter(Boolean)]);
}

/** Request headers for the upstream, from the raw list so order and repeated headers survive. */
export function upstreamRequestHeaders(req: IncomingMessage): string[] {
  const drop = hopByHop(req.headers.connection);
  drop.add('host');
  drop.add('expect');
  const out: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (!drop.has(req.rawHeaders[i].toLowerCase())) out.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  return out;
}

export function clientResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const drop = hopByHop(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !drop.has(k)) out[k] = v;
  return out;
}

/** The first value of a header. */
export function headerText(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
