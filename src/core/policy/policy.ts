/**
 * Per-model provider policy: OpenRouter `provider` preferences the proxy adds to requests for one model, so a
 * provider that is bad for Kimi K2 can be avoided for Kimi K2 alone (OpenRouter's own Ignored Providers are
 * account-wide). Policies are kept in the data dir (`tokenscope policy set`, the Providers view; ./stored.ts), and may
 * also come from the setting `tokenscope.providerPolicy` or `serve --policy FILE`, keyed by model id
 * (`moonshotai/kimi-k2-0905`, or a prefix ending in `*`). A variant (`…:exacto`) follows its base model's policy
 * unless it has its own.
 *
 * Merge with the agent's own `provider` object: `ignore` is the union; `only` is the intersection when both name
 * providers (the policy's list when they share none); `order` puts the policy's providers first; `allow_fallbacks`
 * is the policy's when it sets one. Every other field the agent sent (`sort`, `quantizations`…) is kept.
 */
import { readFileSync } from 'node:fs';
import { UserError, type PolicyRecord } from '../model';
import type { RequestStage } from '../proxy/stage';
import { providerOfTag } from './slugs';
import { fsWhy } from '../fs-errors';

export interface ProviderPolicy {
  ignore?: string[];
  order?: string[];
  only?: string[];
  allow_fallbacks?: boolean;
}

export type Policies = Record<string, ProviderPolicy>;

const LIST_KEYS = ['ignore', 'order', 'only'] as const;

/** Checks a policies object (from settings or a file); `where` names it in the one-line error. */
export function checkPolicies(value: unknown, where: string): Policies {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new UserError(`${where}: expected an object of model id → provider policy`);
  const out: Policies = {};
  for (const [model, p] of Object.entries(value as Record<string, unknown>)) {
    if (!p || typeof p !== 'object' || Array.isArray(p)) throw new UserError(`${where}: the policy for ${model} must be an object`);
    const policy: ProviderPolicy = {};
    for (const [k, v] of Object.entries(p as Record<string, unknown>)) {
      if ((LIST_KEYS as readonly string[]).includes(k)) {
        if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' && s.length > 0))
          throw new UserError(`${where}: ${model}.${k} must be a list of provider names`);
        policy[k as (typeof LIST_KEYS)[number]] = v as string[];
      } else if (k === 'allow_fallbacks') {
        if (typeof v !== 'boolean') throw new UserError(`${where}: ${model}.allow_fallbacks must be true or false`);
        policy.allow_fallbacks = v;
      } else {
        throw new UserError(`${where}: ${model}.${k} is not a policy field (ignore, order, only, allow_fallbacks)`);
      }
    }
    out[model] = policy;
  }
  return out;
}

export function loadPolicyFile(path: string): Policies {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read the policy file ${path}: ${fsWhy(e)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UserError(`the policy file ${path} is not JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  return checkPolicies(value, path);
}

/**
 * The base model of a variant (`moonshotai/kimi-k2-0905` for `moonshotai/kimi-k2-0905:exacto`, `:nitro`, `:floor`,
 * `:free`, `:thinking`, any `:suffix`); the id itself when it has no variant suffix.
 */
export function baseModel(model: string): string {
  const slash = model.lastIndexOf('/');
  const colon = model.indexOf(':', slash + 1);
  return colon > 0 ? model.slice(0, colon) : model;
}

/**
 * The key of the policy that applies to a model id: its own exact key first, then (for a variant such as `:exacto`)
 * its base model's exact key, else the longest matching `prefix*` key.
 */
export function policyKeyFor(policies: Policies, model: string | undefined): string | undefined {
  if (!model) return undefined;
  const own = (k: string) => Object.hasOwn(policies, k);
  if (own(model)) return model;
  const base = baseModel(model);
  if (base !== model && own(base)) return base;
  let best: string | undefined;
  for (const k of Object.keys(policies))
    if (k.endsWith('*') && model.startsWith(k.slice(0, -1)) && (!best || k.length > best.length)) best = k;
  return best;
}

/** The policy for a model id (./policy.ts `policyKeyFor`: its own, its base model's for a variant, else a prefix's). */
export function policyFor(policies: Policies, model: string | undefined): ProviderPolicy | undefined {
  const key = policyKeyFor(policies, model);
  return key === undefined ? undefined : policies[key];
}

const lower = (xs: string[]) => xs.map((x) => x.toLowerCase());

/** The agent's `provider` object merged with a policy (see the header). */
export function mergeProvider(agent: Record<string, unknown> | undefined, policy: ProviderPolicy): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(agent ?? {}) };
  const list = (k: string): string[] | undefined =>
    Array.isArray(out[k]) ? (out[k] as unknown[]).filter((s): s is string => typeof s === 'string') : undefined;
  if (policy.ignore) {
    const have = list('ignore') ?? [];
    out.ignore = [...have, ...policy.ignore.filter((p) => !lower(have).includes(p.toLowerCase()))];
  }
  if (policy.only) {
    const have = list('only');
    const shared = have?.filter((p) => lower(policy.only!).includes(p.toLowerCase()));
    out.only = shared && shared.length > 0 ? shared : policy.only;
  }
  if (policy.order) {
    const have = list('order') ?? [];
    out.order = [...policy.order, ...have.filter((p) => !lower(policy.order!).includes(p.toLowerCase()))];
  }
  if (policy.allow_fallbacks !== undefined) out.allow_fallbacks = policy.allow_fallbacks;
  return out;
}

/** True when a route forwards to OpenRouter (its `provider` preferences mean nothing elsewhere). */
export function isOpenRouter(route: string, upstreamUrl: string): boolean {
  if (route === 'openrouter') return true;
  try {
    return new URL(upstreamUrl).hostname.endsWith('openrouter.ai');
  } catch {
    return false;
  }
}

/**
 * The proxy's request stage: requests for a model with a policy, on OpenRouter routes, get the merged `provider`
 * object (the body re-serialized; the proxy sets the new content-length). Every other request is sent untouched.
 */
export function policyStage(policies: () => Policies, extraOpenRouterRoutes: () => string[] = () => []): RequestStage {
  return {
    wants: (init) =>
      init.method === 'POST' &&
      Object.keys(policies()).length > 0 &&
      (isOpenRouter(init.route, init.upstreamUrl) || extraOpenRouterRoutes().includes(init.route)),
    apply: (_init, body) => {
      if (body[0] !== 0x7b) return undefined; // not a JSON object
      let req: Record<string, unknown>;
      try {
        req = JSON.parse(body.toString('utf8'));
      } catch {
        return undefined;
      }
      if (!req || typeof req !== 'object' || typeof req.model !== 'string') return undefined;
      const all = policies();
      const key = policyKeyFor(all, req.model);
      const policy = key === undefined ? undefined : all[key];
      if (!policy) return undefined;
      const agent =
        req.provider && typeof req.provider === 'object' && !Array.isArray(req.provider)
          ? (req.provider as Record<string, unknown>)
          : undefined;
      const sent = mergeProvider(agent, policy);
      req.provider = sent;
      const record: PolicyRecord = {
        model: req.model,
        ...(key !== req.model && { key }),
        policy: { ...policy },
        ...(agent && { agent }),
        sent,
      };
      return { body: Buffer.from(JSON.stringify(req)), annotate: { policy: record } };
    },
  };
}

/**
 * Whether the served provider (display name) honoured the policy sent: not ignored, and among `only` when set.
 * With the served name's slug known (`servedSlug`, from OpenRouter's listings) slugs are compared exactly; without,
 * names are matched loosely (`AtlasCloud` meets `atlas-cloud`), which `policySummary` says.
 */
export function policyHonoured(p: PolicyRecord, served: string | undefined, servedSlug?: string): boolean | undefined {
  if (!served) return undefined;
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const name = norm(served);
  const loose = (x: string) => norm(x) === name || name.startsWith(norm(x)) || norm(x).startsWith(name);
  const hit = (x: string) => (servedSlug ? providerOfTag(x.toLowerCase()) === servedSlug : loose(x));
  const hits = (xs: unknown) => Array.isArray(xs) && xs.some((x) => typeof x === 'string' && hit(x));
  if (hits(p.sent.ignore)) return false;
  if (Array.isArray(p.sent.only) && p.sent.only.length > 0 && !hits(p.sent.only)) return false;
  return true;
}

export type PolicyAction = 'avoid' | 'prefer' | 'only';

/**
 * The policies after one action on (model, provider slug): avoid adds it to `ignore` (and drops it from
 * `order`/`only`), prefer puts it first in `order` (and drops it from `ignore`), only makes it the one provider (no
 * fallbacks). The slug is OpenRouter's (./slugs.ts `resolveSlug`), never a lower-cased display name.
 */
export function withAction(policies: Policies, model: string, slug: string, action: PolicyAction): Policies {
  const same = (p: string) => p.toLowerCase() === slug.toLowerCase();
  const p: ProviderPolicy = { ...(policies[model] ?? {}) };
  const drop = (k: 'ignore' | 'order' | 'only') => {
    if (p[k]) p[k] = p[k]!.filter((x) => !same(x));
    if (p[k]?.length === 0) delete p[k];
  };
  if (action === 'avoid') {
    drop('order');
    drop('only');
    p.ignore = [...(p.ignore ?? []).filter((x) => !same(x)), slug];
  } else if (action === 'prefer') {
    drop('ignore');
    p.order = [slug, ...(p.order ?? []).filter((x) => !same(x))];
  } else {
    drop('ignore');
    p.only = [slug];
    p.allow_fallbacks = false;
  }
  return { ...policies, [model]: p };
}

/**
 * A model key as `policy set` takes it: an OpenRouter model id (`moonshotai/kimi-k2-0905`, a variant
 * `…:exacto`), or a prefix ending in `*` (`moonshotai/*`). A UserError in one line otherwise.
 */
export function checkModelKey(model: string): string {
  const m = model.trim();
  if (m === '') throw new UserError('the model id is empty');
  if (/[\u0000-\u0020\u007f-\u009f"]/.test(m))
    throw new UserError(`${JSON.stringify(model)} is not a model id: it holds spaces, quotes or control characters`);
  if (m.endsWith('*')) {
    if (m.indexOf('*') !== m.length - 1) throw new UserError(`${m}: a prefix key has one *, at its end (moonshotai/*)`);
    return m;
  }
  if (!/^[A-Za-z0-9][\w.~-]*\/[\w.~@+-]+(:[\w.-]+)?$/.test(m))
    throw new UserError(
      `${m} is not an OpenRouter model id (author/model, e.g. moonshotai/kimi-k2-0905, or a prefix such as moonshotai/*)`,
    );
  return m;
}

/**
 * A provider slug as `provider.ignore` / `order` / `only` take it (`deepinfra`, `atlas-cloud`, or a tag
 * `deepinfra/fp4`): lower case, digits, `-`, `.`, `_`. A UserError in one line otherwise (a display name such as
 * `Moonshot AI` says which slug it probably means).
 */
export function checkSlug(slug: string, flag: string): string {
  const s = slug.trim();
  if (/^[a-z0-9][a-z0-9._-]*(\/[a-z0-9._-]+)?$/.test(s)) return s;
  const hint =
    /^[\w .-]+$/.test(s) && s !== ''
      ? ` (a slug is lower case, without spaces: ${s
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-+|-+$/g, '')}?)`
      : '';
  throw new UserError(`${flag} ${JSON.stringify(slug)} is not a provider slug${hint}`);
}

/**
 * The stored policies after one action (./policy.ts `withAction`) on (model, slug), for a model whose policy in force
 * (`inForce`: stored, from a file or a setting, or its base model's for a variant) is not stored yet: that policy is
 * the start, so the action adds to what applied rather than replacing it.
 */
export function withStoredAction(stored: Policies, inForce: Policies, model: string, slug: string, action: PolicyAction): Policies {
  const seed = Object.hasOwn(stored, model) ? stored[model] : policyFor(inForce, model);
  return withAction(seed ? { ...stored, [model]: seed } : stored, model, slug, action);
}
