/**
 * What the proxy answers itself, for a path outside every route (./routes.ts): nothing here is forwarded or captured.
 * - `GET /` and `GET /health` (and HEAD): 200 with `{"tokenscope": version, "routes": [...]}`, for a health check or a
 *   person opening the base URL in a browser;
 * - any other path: a 404 whose message lists the routes, in the API shape the client speaks (server.ts).
 */
import { VERSION } from '../version';
import { routePrefixes, type Upstreams } from './routes';

const STATUS_PATHS = new Set(['/', '/health']);

/** The JSON body of the status answer for this request, or undefined when it is not a status request. */
export function statusBody(method: string | undefined, path: string, upstreams?: Upstreams): string | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  if (!STATUS_PATHS.has(path.replace(/[?#].*$/s, ''))) return undefined;
  return JSON.stringify({ tokenscope: VERSION, routes: routePrefixes(upstreams) });
}

/** The message of the 404 for a path outside every route. */
export function noRouteMessage(path: string, upstreams?: Upstreams): string {
  const shown = path.replace(/[?#].*$/s, '');
  return `Tokenscope has no route for ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}: point the base URL at one of ${routePrefixes(upstreams).join(', ')} (GET /health lists them)`;
}
