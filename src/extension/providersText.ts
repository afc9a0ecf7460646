/** Wording of the Providers view. Pure (no `vscode` import). */
import { policyFor, type Policies } from '../core/policy/policy';
import { ProviderDirectory } from '../core/policy/slugs';
import type { ScorecardRow } from '../core/providers/scorecard';

/** How the current policy treats a provider, in a word. */
export function policyWord(policies: Policies, model: string, provider: string, dir = new ProviderDirectory()): string | undefined {
  const p = policyFor(policies, model);
  if (!p) return undefined;
  const slug = dir.slugOf(provider).slug;
  const same = (x: string) => x.toLowerCase().split('/')[0] === slug;
  const has = (xs?: string[]) => xs?.some(same);
  if (has(p.ignore)) return 'avoided';
  if (has(p.only)) return 'only';
  if (p.order?.[0] && same(p.order[0])) return 'preferred';
  if (p.only?.length) return 'excluded by only';
  return undefined;
}

export function providerDescription(r: ScorecardRow, word?: string): string {
  const parts = [
    `${r.toolTurns} tool turn${r.toolTurns === 1 ? '' : 's'}`,
    r.toolTurns ? `${Math.round(r.brokenShare * 100)}% broken` : undefined,
    r.topRules[0] && `${r.topRules[0].rule} ×${r.topRules[0].turns}`,
    r.ttftMsP50 !== undefined ? `TTFT ${r.ttftMsP50} ms` : undefined,
    r.lastComparison && `last comparison ${r.lastComparison.verdict}${r.lastComparison.rules[0] ? ` (${r.lastComparison.rules[0]})` : ''}`,
    word && `policy: ${word}`,
  ];
  return parts.filter(Boolean).join(' · ');
}
