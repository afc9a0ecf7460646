/** Errors the proxy itself answers with, in the shape of the API the client speaks so its SDK can show them. */

/** True when the request speaks Anthropic Messages (its errors must be `{"type":"error",…}`). */
export function speaksAnthropic(route: string, path: string, headers: Record<string, string | string[] | undefined>): boolean {
  return route === 'anthropic' || headers['anthropic-version'] !== undefined || /\/v1\/messages(?:[/?]|$)/.test(path);
}

export function errorBody(anthropic: boolean, status: number, message: string): string {
  if (anthropic) {
    const type = status === 403 ? 'permission_error' : status === 404 ? 'not_found_error' : 'api_error';
    return JSON.stringify({ type: 'error', error: { type, message } });
  }
  const type = status === 403 ? 'forbidden' : status === 404 ? 'not_found' : 'upstream_error';
  return JSON.stringify({ error: { message, type, code: status } });
}
