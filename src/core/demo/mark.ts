/**
 * How a demo capture is told apart, by fields every capture keeps whatever the store: the route it came through
 * (`/u/demo/…`) or the provider the demo upstream names in every answer.
 */
import type { CapturedExchange } from '../model';

export const DEMO_ROUTE = 'demo';
export const DEMO_PROVIDER = 'Demo (local)';

export function isDemoCapture(x: Pick<CapturedExchange, 'route' | 'servedProvider'>): boolean {
  return x.route === DEMO_ROUTE || x.servedProvider === DEMO_PROVIDER;
}
