/**
 * The HTTP request a WebSocket exchange stands for. Over the Responses API's WebSocket mode a response is asked for
 * with a `response.create` message: the body of `POST /v1/responses` with a `"type": "response.create"` field, and
 * always streamed. Replays (curl, HAR, re-runs) send it as that POST: the same fields without `type`, `stream: true`.
 */
import type { CapturedExchange } from '../model';

/** The POST body a WebSocket exchange's `response.create` message stands for; undefined for any other exchange. */
export function httpEquivalent(x: Pick<CapturedExchange, 'websocket' | 'requestBody'>): { method: 'POST'; body: string } | undefined {
  if (!x.websocket || x.requestBody === undefined) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(x.requestBody);
  } catch {
    return undefined;
  }
  if (!message || typeof message !== 'object' || Array.isArray(message) || (message as { type?: unknown }).type !== 'response.create')
    return undefined;
  const { type: _type, ...fields } = message as Record<string, unknown>;
  return { method: 'POST', body: JSON.stringify({ ...fields, stream: true }) };
}
