/** A new exchange's record: what `begin` knows, credentials in its URL and headers redacted before anything touches disk. */
import type { CapturedExchange } from '../model';
import { redactHeaders, redactUrl, type RedactOptions } from '../redact';
import type { BeginInit } from './types';

export function startExchange(init: BeginInit, id: string, sessionId: string, startedAt: number, redact: RedactOptions): CapturedExchange {
  return {
    id,
    sessionId,
    startedAt,
    state: 'streaming',
    route: init.route,
    upstreamUrl: redactUrl(init.upstreamUrl, redact),
    method: init.method,
    path: redactUrl(init.path, redact),
    requestHeaders: redactHeaders(init.requestHeaders, redact),
    ...(init.agent !== undefined && { agent: init.agent }),
    ...(init.parentId !== undefined && { parentId: init.parentId }),
    ...(init.target !== undefined && { target: init.target }),
  };
}
