/**
 * Provider slugs for policies, as a user gets them: an exchange served by a provider whose display name is not its
 * slug ("Moonshot AI" → `moonshotai`, "DeepInfra" → `deepinfra`, "AtlasCloud" → `atlas-cloud`) is avoided with
 * OpenRouter's slug (from the model's endpoint listing, else `/providers`), kept in the capture store, and the next
 * request carries exactly that slug in `provider.ignore`, so the emulator (which routes by slug only) skips it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import { policyStage, withAction, type Policies } from '../../../src/core/policy/policy';
import { derivedSlug, resolveSlug } from '../../../src/core/policy/slugs';
import { startProxy } from '../../../src/core/proxy/server';
import { OpenRouterClient } from '../../../src/core/upstream/openrouter';
import { READ_TOOL, startOpenRouterEmulator, type ProviderSpec } from '../../fixtures/openrouter-emulator';
import { rawRequest, tempDir } from '../../unit/proxy/local-upstream';

const K2 = 'moonshotai/kimi-k2-0905';
const PROVIDERS: ProviderSpec[] = [
  { slug: 'moonshotai', name: 'Moonshot AI', personality: 'leak-content' },
  { slug: 'deepinfra/fp4', name: 'DeepInfra', personality: 'correct', quantization: 'fp4' },
  { slug: 'atlas-cloud', name: 'AtlasCloud', personality: 'correct' },
  { slug: 'together', name: 'Together', personality: 'correct' },
  { slug: 'gmicloud', name: 'GMICloud', personality: 'correct', models: ['moonshotai/kimi-k2.5'] },
];

test('avoiding "Moonshot AI", then "DeepInfra", then "AtlasCloud" sends their OpenRouter slugs in provider.ignore', async () => {
  const emu = await startOpenRouterEmulator({ providers: PROVIDERS });
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  let policies: Policies = {};
  const proxy = await startProxy({
    port: 0,
    store,
    upstreams: { openrouter: `${emu.url}/api` },
    requestStage: policyStage(() => policies),
  });
  const client = new OpenRouterClient({ baseUrl: `${emu.url}/api`, apiKey: 'sk-or-v1-slugs' });
  const ask = async () => {
    const body = JSON.stringify({ model: K2, messages: [{ role: 'user', content: 'read a' }], tools: [READ_TOOL] });
    const res = await rawRequest(`${proxy.url}/openrouter/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-v1-slugs' },
      body,
    });
    assert.equal(res.status, 200, res.body.toString());
    await store.idle();
    const x = store.list()[0];
    return { x, sent: emu.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body };
  };
  const listings = () => emu.requests.filter((r) => r.method === 'GET').length;
  try {
    const first = await ask();
    assert.equal(first.x.servedProvider, 'Moonshot AI');
    assert.equal(first.sent.provider, undefined, 'no policy yet: nothing added');

    const moonshot = await resolveSlug(store, client, K2, 'Moonshot AI');
    assert.deepEqual(moonshot, { slug: 'moonshotai', known: true });
    assert.notEqual(derivedSlug('Moonshot AI'), 'moonshotai', 'the lower-cased name would have been wrong');
    policies = withAction(policies, K2, moonshot.slug, 'avoid');
    const second = await ask();
    assert.deepEqual(second.sent.provider, { ignore: ['moonshotai'] });
    assert.equal(second.x.servedProvider, 'DeepInfra', 'the emulator skipped the avoided slug');

    const before = listings();
    const deepinfra = await resolveSlug(store, client, K2, 'DeepInfra');
    assert.deepEqual(deepinfra, { slug: 'deepinfra', known: true }, 'the provider part of the tag deepinfra/fp4');
    assert.equal(listings(), before, 'answered from the store, no second listing');
    policies = withAction(policies, K2, deepinfra.slug, 'avoid');
    const third = await ask();
    assert.deepEqual(third.sent.provider, { ignore: ['moonshotai', 'deepinfra'] });
    assert.equal(third.x.servedProvider, 'AtlasCloud');

    const atlas = await resolveSlug(store, client, K2, 'AtlasCloud');
    assert.deepEqual(atlas, { slug: 'atlas-cloud', known: true });
    policies = withAction(policies, K2, atlas.slug, 'avoid');
    const fourth = await ask();
    assert.deepEqual(fourth.sent.provider, { ignore: ['moonshotai', 'deepinfra', 'atlas-cloud'] });
    assert.equal(fourth.x.servedProvider, 'Together');
    assert.deepEqual(await resolveSlug(store, client, K2, 'Together'), { slug: 'together', known: true });

    // Not among this model's endpoints: found in /providers.
    assert.deepEqual(await resolveSlug(store, client, K2, 'GMICloud'), { slug: 'gmicloud', known: true });
    // Named by neither listing, or no key to read them: a derived slug, flagged, with the reason.
    const unknown = await resolveSlug(store, client, K2, 'Nebius AI Studio');
    assert.equal(unknown.known, false);
    assert.equal(unknown.slug, 'nebius-ai-studio');
    assert.match(
      unknown.why!,
      /"Nebius AI Studio" is not in moonshotai\/kimi-k2-0905's endpoints; "Nebius AI Studio" is not in the provider list/,
    );
    const noKey = await resolveSlug(store, undefined, K2, 'Parasail');
    assert.deepEqual(noKey, { slug: 'parasail', known: false, why: 'no OpenRouter API key to read its provider listing' });

    // `show` judges the policy by slug, and another process reads the slugs the store kept.
    const out: string[] = [];
    assert.equal(await main(['show', third.x.id, '--data-dir', tmp.dir], { out: (t) => out.push(t), err: (t) => out.push(t) }), 0);
    assert.match(
      out.join('\n'),
      /policy +moonshotai\/kimi-k2-0905: provider \{"ignore":\["moonshotai","deepinfra"\]\} \(the agent sent none\); served by AtlasCloud \(atlas-cloud\), honoured$/m,
    );
    out.length = 0;
    assert.equal(
      await main(['show', second.x.id, '--data-dir', tmp.dir, '--json'], { out: (t) => out.push(t), err: (t) => out.push(t) }),
      0,
    );
    assert.deepEqual(JSON.parse(out.join('\n')).policy, { honoured: true, slug: 'deepinfra', byName: false });
    const reader = await openStore(tmp.dir, { readOnly: true });
    try {
      assert.deepEqual(
        reader
          .providerSlugs()
          .map((e) => [e.name, e.slug])
          .sort(),
        [
          ['AtlasCloud', 'atlas-cloud'],
          ['DeepInfra', 'deepinfra'],
          ['GMICloud', 'gmicloud'],
          ['Moonshot AI', 'moonshotai'],
          ['Together', 'together'],
        ],
      );
    } finally {
      await reader.close();
    }
  } finally {
    await proxy.close();
    await store.close();
    await emu.close();
    tmp.remove();
  }
});
