import type { Check } from './types';

/**
 * A request that pinned OpenRouter to some providers (`provider.only`, or `provider.order` with `allow_fallbacks:
 * false`: what a re-run, a comparison sample or a policy's "only" sends) answered by a provider outside the pin.
 * An error, so the capture is listed as broken (Problems, `lint`'s exit status): what was asked for did not happen.
 * The provider scorecard does not count it against the provider that served (its answer may be fine).
 *
 * The response names its provider by display name (`"provider": "NovitaAI"`) and the pin by slug (`novita`), and a
 * check sees no slug listing, so they meet loosely: case and punctuation aside, equal or one the start of the other
 * (`atlas-cloud` meets `AtlasCloud`, `novita` meets `NovitaAI`, `deepinfra/fp4` meets `DeepInfra`).
 */
function key(s: string): string {
  return s
    .split('/')[0]
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

export function servedBy(slugs: readonly string[], served: string): boolean {
  const name = key(served);
  return slugs.some((s) => {
    const k = key(s);
    return k.length > 0 && (k === name || name.startsWith(k) || k.startsWith(name));
  });
}

const check: Check = {
  id: 'pin-not-honoured',
  severity: 'error',
  title: 'Answered by a provider outside the pin',
  why: 'The request pinned its providers with no fallbacks, yet another provider served it: the answer says nothing about the pinned provider, and a comparison or repro built on it blames the wrong one.',
  run: (ctx) => {
    const pref = ctx.request?.provider;
    const served = ctx.response?.provider;
    if (!pref || !served) return [];
    const only = pref.only?.length ? pref.only : undefined;
    const order = pref.allowFallbacks === false && pref.order?.length ? pref.order : undefined;
    const pins = [
      only && { field: 'provider.only', slugs: only },
      order && { field: 'provider.order with allow_fallbacks false', slugs: order },
    ].filter((p) => !!p);
    const broken = pins.find((p) => !servedBy(p.slugs, served));
    if (!broken) return [];
    const list = broken.slugs.map((s) => JSON.stringify(s)).join(', ');
    return [
      {
        rule: check.id,
        severity: check.severity,
        message: `The request allowed only ${list} (${broken.field}) but ${JSON.stringify(served)} served it: the pin was not honoured, so this answer is not the pinned provider's.`,
        location: 'provider',
      },
    ];
  },
};

export default check;
