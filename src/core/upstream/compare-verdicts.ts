/**
 * The verdict a `compare` run gives each provider, kept in the capture store (one row per model × provider slug, the
 * last run's: ../capture/provider-rows.ts), so the scorecard's "last comparison" is what the user last compared,
 * whichever process ran it.
 *
 * Per provider, over its samples that were not cancelled: `broken` when any sample has an error finding (its rules
 * are the error rules seen), else `clean` when any sample answered, else `failed` (no sample answered at all).
 */
import type { ComparisonVerdict, StoredComparison } from '../capture/provider-rows';
import type { CompareReport, ProviderResult } from './compare';

export function providerVerdict(model: string, p: ProviderResult, at: number, parentId?: string): StoredComparison | undefined {
  const judged = p.samples.filter((s) => !s.outcome.cancelled);
  if (judged.length === 0) return undefined;
  const errorRules = (s: (typeof judged)[number]) => s.findings.filter((f) => f.severity === 'error').map((f) => f.rule);
  const broken = judged.filter((s) => errorRules(s).length > 0);
  const failed = judged.filter((s) => !s.outcome.ok && errorRules(s).length === 0).length;
  const verdict: ComparisonVerdict = broken.length > 0 ? 'broken' : judged.length > failed ? 'clean' : 'failed';
  return {
    model,
    provider: p.slug,
    name: p.name,
    at,
    verdict,
    rules: [...new Set(broken.flatMap(errorRules))],
    samples: judged.length,
    broken: broken.length,
    failed,
    servedBy: p.servedBy,
    ...(parentId && { parentId }),
  };
}

/** One verdict per provider that had a sample judged. */
export function comparisonVerdicts(r: CompareReport, at = Date.now(), parentId?: string): StoredComparison[] {
  return r.providers.flatMap((p) => providerVerdict(r.model, p, at, parentId) ?? []);
}
