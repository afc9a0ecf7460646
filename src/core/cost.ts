/**
 * Money and usage as people read them, shared by the CLI and the extension. Upstreams report `usage.cost` as a
 * float in USD (OpenRouter: `0.00010229999999999999`): shown with three significant digits, in plain decimals
 * (`$0.000102`, never `1.02e-4`), cents from a dollar up (`$1.25`).
 */
import type { Usage } from './model';

/** Below this a cost is shown as "less than" it: a billion requests would not make a dollar. */
const SMALLEST = 1e-9;

/** `$0.000102`, `$0.0015`, `$0.25`, `$12.50`; `$0` for zero. Undefined or not a number: `fallback`. */
export function formatCost(usd: number | undefined, fallback = '—'): string {
  if (usd === undefined || typeof usd !== 'number' || !Number.isFinite(usd)) return fallback;
  if (usd === 0) return '$0';
  const sign = usd < 0 ? '-' : '';
  const v = Math.abs(usd);
  if (v >= 1) return `${sign}$${v.toFixed(2)}`;
  if (v < SMALLEST) return `${sign}<$${SMALLEST.toFixed(9)}`;
  // Three significant digits: as many decimals as the leading zeros after the point, plus three.
  const decimals = Math.min(12, 2 - Math.floor(Math.log10(v)));
  let text = v.toFixed(decimals);
  // Trailing zeros carry nothing (rounding up may have added a digit: 0.0009996 → 0.001000), but cents keep two.
  text = text.replace(/0+$/, '');
  const [whole, frac = ''] = text.split('.');
  return `${sign}$${whole}.${frac.padEnd(2, '0')}`;
}

/** `1200 prompt (800 cached) · 27 completion (12 reasoning) · $0.000102`: what a response's usage reports. */
export function usageText(u: Usage | undefined): string | undefined {
  if (!u) return undefined;
  const parts = [
    u.promptTokens !== undefined && `${u.promptTokens} prompt${u.cachedTokens ? ` (${u.cachedTokens} cached)` : ''}`,
    u.completionTokens !== undefined && `${u.completionTokens} completion${u.reasoningTokens ? ` (${u.reasoningTokens} reasoning)` : ''}`,
    u.promptTokens === undefined && u.completionTokens === undefined && u.totalTokens !== undefined && `${u.totalTokens} tokens`,
    u.cost !== undefined && formatCost(u.cost),
  ].filter((p): p is string => typeof p === 'string');
  return parts.length ? parts.join(' · ') : undefined;
}
