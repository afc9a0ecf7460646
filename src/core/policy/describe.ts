/**
 * Provider policies in words: per exchange (`show`, the exchange view, the Captures tree) which policy applied and
 * whether the served provider honoured it, and the short form the status bar shows (`kimi-k2-0905: avoid Chutes`).
 * Providers are named by display name where OpenRouter's listings gave one (./slugs.ts), else by slug. Network text
 * is made terminal-safe.
 */
import type { CapturedExchange, PolicyRecord } from '../model';
import { policyFor, policyHonoured, type Policies, type ProviderPolicy } from './policy';
import type { ProviderDirectory } from './slugs';

/** Control characters (C0, DEL, C1) shown as escapes, so network text cannot drive a terminal. */
function safe(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The served provider's honouring of the exchange's policy, with how the served name was matched. */
export function policyVerdict(
  p: PolicyRecord,
  served: string | undefined,
  dir?: ProviderDirectory,
): { honoured?: boolean; slug?: string; byName: boolean } {
  if (!served) return { byName: false };
  const r = dir?.slugOf(served);
  const slug = r?.known ? r.slug : undefined;
  return { honoured: policyHonoured(p, served, slug), slug, byName: !slug };
}

/** One line: the policy sent, the merge with the agent's own preferences, and whether it was honoured. */
export function policySummary(p: PolicyRecord, served?: string, dir?: ProviderDirectory): string {
  const merged = p.agent ? `merged with the agent's ${safe(JSON.stringify(p.agent))}` : 'the agent sent none';
  const v = policyVerdict(p, served, dir);
  const who = served && `served by ${safe(served)}${v.slug ? ` (${safe(v.slug)})` : ''}`;
  const how = v.byName ? " (matched by name: OpenRouter's listings Tokenscope has read do not name this provider's slug)" : '';
  const verdict = v.honoured === undefined ? '' : `; ${who}, ${v.honoured ? 'honoured' : 'NOT honoured'}${how}`;
  const from = p.key ? ` (the policy of ${safe(p.key)})` : '';
  return `${safe(p.model)}${from}: provider ${safe(JSON.stringify(p.sent))} (${merged})${verdict}`;
}

/** How an exchange's provider policy fared: the one judgement every surface shows (tree row and tooltip, exchange view, `show`). */
export interface ExchangePolicy {
  /** The served provider's display name, when a response named one. */
  served?: string;
  honoured?: boolean;
  /** The served provider's OpenRouter slug, when a listing Tokenscope has read named it (then judged by slug). */
  slug?: string;
  /** Judged by loosely matched names: no listing named the served provider's slug. */
  byName: boolean;
  /** `policy honoured` / `policy NOT honoured` / `policy applied` (nobody named as served): for a tree row or title. */
  word: string;
  /** One line: the policy sent, the merge with the agent's own, and the verdict (./describe.ts `policySummary`). */
  summary: string;
}

/**
 * The exchange's policy verdict, judged by slug with OpenRouter's listings kept in the store (`dir`, a
 * `ProviderDirectory` of `store.providerSlugs()`), else by name and said so; undefined when no policy applied.
 */
export function exchangePolicy(x: CapturedExchange, dir: ProviderDirectory | undefined): ExchangePolicy | undefined {
  if (!x.policy) return undefined;
  const served = x.servedProvider ?? x.summary?.provider;
  const v = policyVerdict(x.policy, served, dir);
  const word = v.honoured === undefined ? 'policy applied' : v.honoured ? 'policy honoured' : 'policy NOT honoured';
  return { ...(served !== undefined && { served }), ...v, word, summary: policySummary(x.policy, served, dir) };
}

/** `policy honoured` / `policy NOT honoured` / `policy applied` (nobody named as served): for a tree row. */
export function policyWordFor(x: CapturedExchange, dir?: ProviderDirectory): string | undefined {
  return exchangePolicy(x, dir)?.word;
}

/** `kimi-k2-0905` for `moonshotai/kimi-k2-0905`; a `prefix*` key stays as written. */
export function shortModel(model: string): string {
  return model.endsWith('*') ? model : (model.split('/').pop() ?? model);
}

/** `avoid Chutes, Groq · prefer Fireworks · only Novita (no fallbacks)`. */
export function policyText(p: ProviderPolicy, dir?: ProviderDirectory): string {
  const names = (xs: string[]) => xs.map((s) => safe(dir?.nameOf(s) ?? s)).join(', ');
  const parts = [
    p.ignore?.length && `avoid ${names(p.ignore)}`,
    p.order?.length && `prefer ${names(p.order)}`,
    p.only?.length && `only ${names(p.only)}`,
    p.allow_fallbacks === false && !p.only?.length && 'no fallbacks',
  ].filter((s): s is string => !!s);
  return parts.join(' · ') || 'no preferences';
}

/**
 * The status bar's policy part: the policy of the latest exchange's model (`kimi-k2-0905: avoid Chutes`), else how
 * many policies are set (`2 provider policies`); undefined when none is.
 */
export function policyStatus(policies: Policies, latestModel: string | undefined, dir?: ProviderDirectory): string | undefined {
  const keys = Object.keys(policies);
  if (keys.length === 0) return undefined;
  const p = policyFor(policies, latestModel);
  if (p && latestModel) return `${safe(shortModel(latestModel))}: ${policyText(p, dir)}`;
  return `${keys.length} provider polic${keys.length === 1 ? 'y' : 'ies'}`;
}

/** The model of the newest exchange that names one (what the status bar's policy part is about). */
export function latestModel(exchanges: readonly CapturedExchange[]): string | undefined {
  let best: CapturedExchange | undefined;
  for (const x of exchanges) if ((x.summary?.model ?? x.requestModel) && (!best || x.startedAt > best.startedAt)) best = x;
  return best && (best.summary?.model ?? best.requestModel);
}

/** A policy's slugs that no listing Tokenscope has read names (judged only once some listing was read). */
export function unlistedSlugs(p: ProviderPolicy, dir?: ProviderDirectory): string[] {
  if (!dir || dir.size === 0) return [];
  return [...new Set([...(p.ignore ?? []), ...(p.order ?? []), ...(p.only ?? [])])].filter((s) => !dir.knows(s));
}

/** One line per model key (the status bar tooltip, `serve`), flagging slugs OpenRouter's listings do not name. */
export function policyLines(policies: Policies, dir?: ProviderDirectory): string[] {
  return Object.entries(policies).map(([model, p]) => {
    const unlisted = unlistedSlugs(p, dir);
    const note = unlisted.length ? `; not a slug in OpenRouter's listings Tokenscope has read: ${unlisted.map(safe).join(', ')}` : '';
    return `${safe(model)}: ${policyText(p, dir)} (OpenRouter routes${note})`;
  });
}
