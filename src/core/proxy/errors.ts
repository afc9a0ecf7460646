/** Errors the proxy itself answers with, in the shape of the API the client speaks so its SDK can show them. */

/** True when the request speaks Anthropic Messages (its errors must be `{"type":"error",…}`). */
export function speaksAnthropic(route: string, path: string, headers: Record<string, string | string[] | undefined>): boolean {
  return route === 'anthropic' || headers['anthropic-version'] !== undefined || /\/v1\/messages(?:[/?]|$)/.test(path);
}

/** True for OpenAI Responses requests (`/responses`): their stream errors are `{"type":"error",…}` events. */
export function speaksResponses(path: string): boolean {
  return /\/responses(?:[/?]|$)/.test(path);
}

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  504: 'timeout_error',
};
const OPENAI_TYPES: Record<number, string> = { 400: 'invalid_request_error', 403: 'forbidden', 404: 'not_found', 504: 'timeout' };

export function errorBody(anthropic: boolean, status: number, message: string): string {
  if (anthropic) return JSON.stringify({ type: 'error', error: { type: ANTHROPIC_TYPES[status] ?? 'api_error', message } });
  return JSON.stringify({ error: { message, type: OPENAI_TYPES[status] ?? 'upstream_error', code: status } });
}

/**
 * A mid-stream error event, for an SSE response the proxy must end early (the upstream went silent): the client's
 * SDK reports it as an error instead of waiting or taking the cut for a finished turn.
 */
export function sseErrorEvent(shape: { anthropic: boolean; responses: boolean }, status: number, message: string): string {
  if (shape.anthropic) return `event: error\ndata: ${errorBody(true, status, message)}\n\n`;
  if (shape.responses)
    return `event: error\ndata: ${JSON.stringify({ type: 'error', code: OPENAI_TYPES[status] ?? 'upstream_error', message, param: null })}\n\n`;
  return `data: ${errorBody(false, status, message)}\n\n`;
}
