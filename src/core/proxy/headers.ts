/** Which headers cross the proxy: hop-by-hop headers (RFC 9110 §7.6.1) never do; `host` and `expect` are the proxy's own. */
import type { IncomingMessage } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
]);

function hopByHop(connection: string | string[] | undefined): Set<string> {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return HOP_BY_HOP_AND_OWN;
  const extra = (Array.isArray(connection) ? connection.join(',') : (connection ?? '')).split(',').map((s) => s.trim().toLowerCase());
  return new Set([...HOP_BY_HOP, ...extra.filter(Boolean)]);
}

/** HOP_BY_HOP with the headers the proxy sets itself; also named in `Connection` by most clients (no copy needed then). */
const HOP_BY_HOP_AND_OWN = new Set([...HOP_BY_HOP, 'keep-alive', 'close']);
const OWN = new Set(['host', 'expect']);

/** Request headers for the upstream, from the raw list so order and repeated headers survive. */
export function upstreamRequestHeaders(req: IncomingMessage): string[] {
  const hop = hopByHop(req.headers.connection);
  const drop = { has: (name: string) => hop.has(name) || OWN.has(name) };
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

/** True for a request asking to switch to WebSocket (`Upgrade: websocket`, any case, possibly among other tokens). */
export function isWebSocketUpgrade(headers: Record<string, string | string[] | undefined>): boolean {
  const up = headers.upgrade;
  return (Array.isArray(up) ? up.join(',') : (up ?? '')).split(',').some((t) => t.trim().toLowerCase() === 'websocket');
}

/**
 * Request headers for a WebSocket upgrade to the upstream: the request's own (order and repeats kept, the agent's key
 * among them), hop-by-hop ones replaced by `Connection: Upgrade` / `Upgrade: websocket`, and no
 * `Sec-WebSocket-Extensions`: without permessage-deflate both legs carry the same uncompressed frames, which pass
 * byte for byte and which the capture reads one message at a time (a compressed stream's messages can only be read
 * with the whole connection's history).
 */
export function upstreamUpgradeHeaders(req: IncomingMessage): string[] {
  const out = upstreamRequestHeaders(req).filter((_, i, all) =>
    i % 2 === 0 ? all[i].toLowerCase() !== 'sec-websocket-extensions' : all[i - 1].toLowerCase() !== 'sec-websocket-extensions',
  );
  return [...out, 'Connection', 'Upgrade', 'Upgrade', 'websocket'];
}
