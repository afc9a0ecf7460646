/**
 * OpenRouter provider slugs: what `provider.ignore` / `order` / `only` take (`moonshotai`, `deepinfra`, `atlas-cloud`),
 * learned where OpenRouter gives them (wire-formats.md §1.8): each endpoint of `GET /models/{author}/{slug}/endpoints`
 * (`tag`, `provider_name`) and `GET /providers` (`slug`, `name`). A response names its provider by display name only
 * (`"provider": "Moonshot AI"`, §1.4), so the mapping is kept in the capture store and shared by every process.
 *
 * A display name neither listing has named yet gets a slug derived from it (`Moonshot AI` → `moonshot-ai`), marked as
 * a guess (`known: false`) so every caller can say so: OpenRouter's slugs are not the lower-cased names.
 */
import { nameKey, type SlugCache, type SlugEntry } from '../capture/provider-rows';
import { entriesFromEndpoints, providerOfTag, type OpenRouterClient } from '../upstream/openrouter';

// The store's row shapes and OpenRouter's tag grammar, named here too: this module is where callers look for slugs.
export { entriesFromEndpoints, nameKey, providerOfTag, type SlugCache, type SlugEntry };

export interface SlugResolution {
  slug: string;
  /** True when an OpenRouter listing gave it; false when it is derived from the display name. */
  known: boolean;
}

/** The guess for a display name no listing has named: lower case, runs of other characters as `-`. */
export function derivedSlug(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export class ProviderDirectory {
  private readonly byName = new Map<string, SlugEntry>();
  private readonly bySlug = new Map<string, SlugEntry>();

  constructor(entries: Iterable<SlugEntry> = []) {
    this.learn(entries);
  }

  learn(entries: Iterable<SlugEntry>): void {
    for (const e of entries) {
      this.byName.set(nameKey(e.name), e);
      this.bySlug.set(e.slug, e);
    }
  }

  /** The slug for a served provider's display name (or for a slug given as is). */
  slugOf(name: string): SlugResolution {
    const hit = this.byName.get(nameKey(name)) ?? this.bySlug.get(name.trim().toLowerCase());
    return hit ? { slug: hit.slug, known: true } : { slug: derivedSlug(name), known: false };
  }

  /** The display name of a slug, when a listing named it. */
  nameOf(slug: string): string | undefined {
    return this.bySlug.get(providerOfTag(slug))?.name;
  }

  /** True when a listing named this slug (or the provider of this tag). */
  knows(slug: string): boolean {
    return this.bySlug.has(providerOfTag(slug.toLowerCase()));
  }

  get size(): number {
    return this.byName.size;
  }
}

/**
 * The slug of `name` (a served provider of `model`): from the cache, else from the model's endpoint listing, else
 * from `/providers`, each listing kept in the cache. `why` says why it is a guess when no listing could be read.
 */
export async function resolveSlug(
  cache: SlugCache | undefined,
  client: Pick<OpenRouterClient, 'endpoints' | 'providers'> | undefined,
  model: string | undefined,
  name: string,
  signal?: AbortSignal,
): Promise<SlugResolution & { why?: string }> {
  const dir = new ProviderDirectory(cache?.providerSlugs() ?? []);
  const cached = dir.slugOf(name);
  if (cached.known) return cached;
  if (!client) return { ...cached, why: 'no OpenRouter API key to read its provider listing' };
  const problems: string[] = [];
  const lists: [string, () => Promise<SlugEntry[]>][] = [
    ...(model
      ? [
          [`${model}'s endpoints`, async () => entriesFromEndpoints(await client.endpoints(model, signal))] as [
            string,
            () => Promise<SlugEntry[]>,
          ],
        ]
      : []),
    ['the provider list', () => client.providers(signal)],
  ];
  for (const [what, list] of lists) {
    try {
      const entries = await list();
      cache?.learnProviderSlugs(entries);
      dir.learn(entries);
      const r = dir.slugOf(name);
      if (r.known) return r;
      problems.push(`"${name}" is not in ${what}`);
    } catch (e) {
      problems.push(`${what} could not be read (${(e as Error).message.split('\n')[0]})`);
    }
  }
  return { ...cached, why: problems.join('; ') };
}
