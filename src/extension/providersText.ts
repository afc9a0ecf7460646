/** Wording of the Providers view. Pure (no `vscode` import). */
import { policyFor, type Policies } from '../core/policy/policy';
import { ProviderDirectory } from '../core/policy/slugs';
import type { ScorecardRow } from '../core/providers/scorecard';
import type { CapturedExchange } from '../core/model';

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

/** A provider row's label: its display name with the slug a policy takes beside it (`NovitaAI (novita)`); `?` marks a guess. */
export function providerLabel(r: Pick<ScorecardRow, 'provider' | 'slug' | 'slugKnown'>): string {
  return r.slug ? `${r.provider} (${r.slug}${r.slugKnown ? '' : '?'})` : r.provider;
}

/** The tooltip's line about the slug: where it came from. */
export function slugLine(r: Pick<ScorecardRow, 'provider' | 'slug' | 'slugKnown'>): string {
  if (!r.slug) return 'No provider is named for these exchanges (the upstream answered an error before any provider did), so no slug.';
  return r.slugKnown
    ? `OpenRouter slug: \`${r.slug}\` (what provider.only / ignore and a policy take)`
    : `OpenRouter slug: \`${r.slug}\`? derived from the name "${r.provider}": no OpenRouter listing read yet names it (a comparison reads the model's)`;
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

/** What the Providers view counts of the store's captures (the scorecard scores the first kind). */
export interface CaptureCounts {
  /** Agent captures, finished, with a model and a served provider. */
  scored: number;
  /** Re-runs and comparison samples: scored through their comparison's verdict, not as turns. */
  reruns: number;
  /** Finished agent captures with no model (`GET /models`…) or no provider named. */
  unnamed: number;
  /** Still streaming. */
  streaming: number;
}

export function captureCounts(list: readonly CapturedExchange[]): CaptureCounts {
  const c: CaptureCounts = { scored: 0, reruns: 0, unnamed: 0, streaming: 0 };
  for (const x of list) {
    if (x.state === 'streaming' || x.status === undefined) c.streaming++;
    else if (x.target) c.reruns++;
    else if ((x.summary?.model ?? x.requestModel) && (x.servedProvider ?? x.summary?.provider)) c.scored++;
    else c.unnamed++;
  }
  return c;
}

/** The view's description: how many captures its rows stand for. */
export function providersDescription(c: CaptureCounts): string | undefined {
  return c.scored ? `${c.scored} capture${c.scored === 1 ? '' : 's'} with a model and a served provider` : undefined;
}

/**
 * The one row of a view with no provider to score although there are captures: what they are instead. Undefined
 * when there is nothing captured (the welcome text says so).
 */
export function providersEmptyMessage(c: CaptureCounts): string | undefined {
  const total = c.scored + c.reruns + c.unnamed + c.streaming;
  if (total === 0) return undefined;
  const parts = [
    c.streaming && `${c.streaming} still streaming`,
    c.reruns &&
      `${c.reruns} re-run${c.reruns === 1 ? '' : 's'} or comparison sample${c.reruns === 1 ? '' : 's'} (scored by their comparison)`,
    c.unnamed && `${c.unnamed} without a model or a served provider`,
  ].filter(Boolean);
  return `No provider to score yet: ${total} capture${total === 1 ? '' : 's'}, ${parts.join(', ')}.`;
}
