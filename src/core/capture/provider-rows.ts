/**
 * The rows the capture store keeps about OpenRouter's providers, shared by every process on the data dir: the
 * provider slugs learned from OpenRouter's listings (read and used by ../policy/slugs.ts) and the verdict of the last
 * `compare` run per model × provider (made by ../upstream/compare-verdicts.ts, shown by ../providers/scorecard.ts).
 * Only their shapes live here, with the store that keeps them.
 */

export interface SlugEntry {
  /** Display name, as responses and generation stats carry it. */
  name: string;
  /** Routing slug (the provider part of an endpoint's `tag`: `deepinfra` for `deepinfra/fp4`). */
  slug: string;
  source: 'endpoints' | 'providers';
  /** Epoch ms it was learned. */
  at: number;
}

/** A display name's lookup key: case, spaces and punctuation do not matter (`AtlasCloud`, `Atlas Cloud`). */
export function nameKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** What stores the mapping (the capture store); a read-only store keeps nothing. */
export interface SlugCache {
  providerSlugs(): SlugEntry[];
  learnProviderSlugs(entries: readonly SlugEntry[]): void;
}

export type ComparisonVerdict = 'clean' | 'broken' | 'failed';

export interface StoredComparison {
  model: string;
  /** Provider slug as compared (`chutes`). */
  provider: string;
  /** Display name from the endpoint listing (`Chutes`). */
  name: string;
  /** Epoch ms the comparison ended. */
  at: number;
  verdict: ComparisonVerdict;
  /** Error rules seen in the provider's samples. */
  rules: string[];
  /** Samples judged (cancelled ones do not count), how many broke and how many got no answer. */
  samples: number;
  broken: number;
  failed: number;
  /** Who really served the samples (display names). */
  servedBy: string[];
  /** The capture the comparison re-sent, when it was one. */
  parentId?: string;
}
