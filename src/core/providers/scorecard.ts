/**
 * The provider scorecard over the user's own captures: per model × served provider, how many tool-call turns were
 * seen, the share that broke (an error finding), the rules that broke them most, the median time to first token,
 * when the pair was last seen, and the verdict of the last `compare` run on that provider for that model (stored by
 * compare in the capture store: ../upstream/compare-verdicts.ts).
 *
 * A tool-call turn is an agent exchange whose request offered tools. Re-runs and comparison samples (exchanges with
 * a `target`) are not agent traffic and are not counted. A comparison meets a row by the provider's display name
 * or by its slug (the served name's slug as OpenRouter's listings give it: ../policy/slugs.ts). A compared provider
 * that never served the agent gets a row of its own (no turns, its verdict), so the comparison is not lost.
 *
 * Each row carries the provider's slug beside its name (what `provider.only` / `ignore` and a policy take): the one
 * OpenRouter's listings gave, else one derived from the name and marked as a guess (`slugKnown: false`).
 *
 * A turn whose only error is `pin-not-honoured` (OpenRouter routed around a pin) is not counted as broken: it says
 * nothing against the provider that served it.
 */
import type { CaptureReader, CapturedExchange } from '../model';
import { nameKey, ProviderDirectory, providerOfTag, type SlugEntry } from '../policy/slugs';
import type { ComparisonVerdict, StoredComparison } from '../capture/provider-rows';

export interface ScorecardRow {
  model: string;
  /** The served provider's display name, as responses name it (`NovitaAI`). */
  provider: string;
  /** Its OpenRouter routing slug, what a policy or a pin takes (`novita`): from OpenRouter's listings when one named it; '' for the row of exchanges no provider is named for. */
  slug: string;
  /** False when no listing Tokenscope has read named the provider: `slug` is derived from the name, a guess. */
  slugKnown: boolean;
  /** Agent exchanges for the pair (with or without tools). */
  exchanges: number;
  toolTurns: number;
  brokenTurns: number;
  /** brokenTurns / toolTurns (0 when no tool turns). */
  brokenShare: number;
  /** Turns repair mode rewrote. */
  repairedTurns: number;
  /** Rule id → broken tool turns with it, most frequent first (at most 3). */
  topRules: { rule: string; turns: number }[];
  /** Median ms from the request to the first data event, over the pair's streamed exchanges. */
  ttftMsP50?: number;
  /** Epoch ms. */
  lastSeen: number;
  /** The last `compare` run's verdict on this provider for this model. */
  lastComparison?: {
    at: number;
    verdict: ComparisonVerdict;
    rules: string[];
    slug: string;
    samples: number;
    broken: number;
    failed: number;
    parentId?: string;
  };
}

export interface ScorecardOptions {
  model?: string;
  /** Epoch ms: only exchanges that started at or after it (and comparisons that ended after it). */
  since?: number;
  /** Stored comparison verdicts; default: the store's, when the reader is a capture store. */
  comparisons?: StoredComparison[];
  /** Known provider slugs; default: the store's. */
  slugs?: SlugEntry[];
}

type Stores = Partial<{ lastComparisons(model?: string): StoredComparison[]; providerSlugs(): SlugEntry[] }>;

const TOOLS = /"tools"\s*:\s*\[\s*\{/;
/** Rules about the routing, not the served provider's answer: they do not make a turn broken here. */
const ROUTING_RULES = new Set(['pin-not-honoured']);
const DATA = Buffer.from('data:');

function modelOf(x: CapturedExchange): string | undefined {
  return x.summary?.model ?? x.requestModel;
}

/** The row of exchanges no provider is named for (an upstream error before any answer): it has no slug. */
const NOT_NAMED = '(not named)';

function providerOf(x: CapturedExchange): string {
  return (
    x.servedProvider ??
    x.summary?.provider ??
    (x.target?.startsWith('openrouter:') ? x.target.slice('openrouter:'.length) : undefined) ??
    NOT_NAMED
  );
}

function lastOf(c: StoredComparison): NonNullable<ScorecardRow['lastComparison']> {
  return {
    at: c.at,
    verdict: c.verdict,
    rules: c.rules,
    slug: c.provider,
    samples: c.samples,
    broken: c.broken,
    failed: c.failed,
    ...(c.parentId && { parentId: c.parentId }),
  };
}

/** ms from the request to the first SSE data event (the first chunk for a whole body). */
function ttft(reader: CaptureReader, x: CapturedExchange): number | undefined {
  const res = reader.readResponse(x.id);
  if (!res || res.chunks.length === 0) return undefined;
  const bytes = Buffer.from(res.bytes.buffer, res.bytes.byteOffset, res.bytes.byteLength);
  if (!x.summary?.streamed) return res.chunks[0].t;
  const at = bytes.indexOf(DATA);
  if (at < 0) return undefined;
  return res.chunks.find((c) => c.offset + c.length > at)?.t;
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Normalized provider name, so `Chutes` (served) and `chutes` (a pin's slug) meet. */
export function providerKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

export function scorecard(reader: CaptureReader, opts: ScorecardOptions = {}): ScorecardRow[] {
  const rows = new Map<string, ScorecardRow & { ttfts: number[]; rules: Map<string, number> }>();
  for (const x of reader.list()) {
    if (x.state === 'streaming' || x.status === undefined) continue;
    if (opts.since !== undefined && x.startedAt < opts.since) continue;
    const model = modelOf(x);
    if (!model || (opts.model && model !== opts.model)) continue;
    if (x.target) continue;
    const provider = providerOf(x);
    const key = `${model}\0${providerKey(provider)}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        model,
        provider,
        slug: '',
        slugKnown: false,
        exchanges: 0,
        toolTurns: 0,
        brokenTurns: 0,
        brokenShare: 0,
        repairedTurns: 0,
        topRules: [],
        lastSeen: 0,
        ttfts: [],
        rules: new Map(),
      };
      rows.set(key, row);
    }
    row.exchanges++;
    row.lastSeen = Math.max(row.lastSeen, x.startedAt);
    if (x.repair) row.repairedTurns++;
    if (x.status === 200) {
      const t = ttft(reader, x);
      if (t !== undefined) row.ttfts.push(t);
    }
    const body = reader.get(x.id)?.requestBody ?? '';
    if (!TOOLS.test(body)) continue;
    row.toolTurns++;
    const routing = x.summary?.rules.filter((r) => ROUTING_RULES.has(r)).length ?? 0;
    if ((x.summary?.counts.error ?? 0) > routing) {
      row.brokenTurns++;
      for (const rule of new Set(x.summary!.rules)) if (!ROUTING_RULES.has(rule)) row.rules.set(rule, (row.rules.get(rule) ?? 0) + 1);
    }
  }
  const stored = opts.comparisons ?? (reader as Stores).lastComparisons?.(opts.model) ?? [];
  const dir = new ProviderDirectory(opts.slugs ?? (reader as Stores).providerSlugs?.() ?? []);
  const matched = new Set<StoredComparison>();
  for (const row of rows.values()) {
    const { slug, known } = row.provider === NOT_NAMED ? { slug: '', known: false } : dir.slugOf(row.provider);
    row.slug = slug;
    row.slugKnown = known;
    const key = nameKey(row.provider);
    for (const c of stored) {
      if (c.model !== row.model || (opts.since !== undefined && c.at < opts.since) || (c.provider !== slug && nameKey(c.name) !== key))
        continue;
      matched.add(c);
      if (row.lastComparison && row.lastComparison.at >= c.at) continue;
      row.lastComparison = lastOf(c);
    }
  }
  // A compared provider that never served the user's agent still gets its row: its verdict is the only evidence.
  for (const c of stored) {
    if (matched.has(c) || (opts.model && c.model !== opts.model) || (opts.since !== undefined && c.at < opts.since)) continue;
    const key = `${c.model}\0${providerKey(c.name)}`;
    const row = rows.get(key);
    if (row) {
      if (!row.lastComparison || row.lastComparison.at < c.at) row.lastComparison = lastOf(c);
      continue;
    }
    // The compared slug: a listing named it, or OpenRouter routed a sample to it.
    rows.set(key, {
      model: c.model,
      provider: c.name,
      slug: providerOfTag(c.provider),
      slugKnown: dir.knows(c.provider) || c.failed < c.samples,
      exchanges: 0,
      toolTurns: 0,
      brokenTurns: 0,
      brokenShare: 0,
      repairedTurns: 0,
      topRules: [],
      lastSeen: c.at,
      ttfts: [],
      rules: new Map(),
      lastComparison: lastOf(c),
    });
  }
  return [...rows.values()]
    .map(({ ttfts, rules, ...row }) => ({
      ...row,
      brokenShare: row.toolTurns ? row.brokenTurns / row.toolTurns : 0,
      topRules: [...rules]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, 3)
        .map(([rule, turns]) => ({ rule, turns })),
      ...(ttfts.length > 0 && { ttftMsP50: Math.round(median(ttfts)!) }),
    }))
    .sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : b.brokenShare - a.brokenShare || b.toolTurns - a.toolTurns));
}
