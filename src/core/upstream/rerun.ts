/**
 * Re-run a captured exchange: the same request body sent to a chosen target through Tokenscope's own capture path,
 * so the answer becomes a new exchange (with its findings and tokens) linked to the original by `parentId`.
 */
import { findCapture, type CaptureStore } from '../capture/store';
import { UserError, type CaptureReader } from '../model';
import { normalizeRequest } from '../wire/index';
import { runRequest, type RunContext, type RunOutcome, type Target } from './run';

/** The capture `idOrPrefix` (full id) and its request body, checked to be a Chat Completions request (what the targets speak). */
export function capturedChatRequest(store: CaptureReader, idOrPrefix: string): { id: string; body: Record<string, unknown> } {
  const x = findCapture(store, idOrPrefix);
  if (!x.requestBody) throw new UserError(`capture ${x.id} (${x.method} ${x.path}) has no request body to re-run`);
  let body: unknown;
  try {
    body = JSON.parse(x.requestBody);
  } catch {
    throw new UserError(`the request body of capture ${x.id} is not JSON`);
  }
  const protocol = normalizeRequest(body, { path: x.path }).protocol;
  if (protocol !== 'openai-chat' || typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new UserError(
      `capture ${x.id} (${x.method} ${x.path}) is not a Chat Completions request${protocol === 'unknown' ? '' : ` but ${protocol}`}; re-runs replay Chat Completions requests`,
    );
  }
  return { id: x.id, body: body as Record<string, unknown> };
}

/** Re-runs capture `idOrPrefix` on `target`; the outcome's `exchangeId` is the new exchange, whose `parentId` is the original's id. */
export function rerun(
  store: CaptureStore,
  idOrPrefix: string,
  target: Target,
  ctx: Omit<RunContext, 'store' | 'parentId'> = {},
): Promise<RunOutcome> {
  const { id, body } = capturedChatRequest(store, idOrPrefix);
  return runRequest(target, body, { ...ctx, store, parentId: id });
}
