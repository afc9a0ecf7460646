/** Wording of the Providers view. Pure (no `vscode` import). */
import { policyFor, providerSlug, type Policies } from '../core/policy/policy';
import type { ScorecardRow } from '../core/providers/scorecard';

/** How the current policy treats a provider, in a word. */
export function policyWord(policies: Policies, model: string, provider: string): string | undefined {
  const p = policyFor(policies, model);
  if (!p) return undefined;
  const slug = providerSlug(provider);
  const has = (xs?: string[]) => xs?.some((x) => providerSlug(x) === slug);
  if (has(p.ignore)) return 'avoided';
  if (has(p.only)) return 'only';
  if (p.order?.[0] && providerSlug(p.order[0]) === slug) return 'preferred';
  if (p.only?.length) return 'excluded by only';
  return undefined;
}

export function providerDescription(r: ScorecardRow, word?: string): string {
  const parts = [
    `${r.toolTurns} tool turn${r.toolTurns === 1 ? '' : 's'}`,
    r.toolTurns ? `${Math.round(r.brokenShare * 100)}% broken` : undefined,
    r.topRules[0] && `${r.topRules[0].rule} ×${r.topRules[0].turns}`,
    r.ttftMsP50 !== undefined ? `TTFT ${r.ttftMsP50} ms` : undefined,
    r.lastComparison && `last comparison ${r.lastComparison.verdict}`,
    word && `policy: ${word}`,
  ];
  return parts.filter(Boolean).join(' · ');
}
