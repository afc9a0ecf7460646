/** The provider scorecard over a real capture store: the slug beside the name, and turns a pin was not honoured on. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { scorecard } from '../../../src/core/providers/scorecard';
import { READ_TOOL } from '../../fixtures/openrouter-emulator';
import { recordExchange } from '../../helpers/exchanges';
import { tempDir } from '../proxy/local-upstream';

const K2 = 'moonshotai/kimi-k2-0905';

function answer(served: string): string {
  return JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: K2,
    provider: served,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
  });
}

test("each row carries the slug a policy takes: from the store's listing, else derived from the name and marked", async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    await recordExchange(store, {
      request: { model: K2, messages: [{ role: 'user', content: 'hi' }], tools: [READ_TOOL] },
      response: answer('NovitaAI'),
      annotate: { servedProvider: 'NovitaAI' },
    });
    await recordExchange(store, {
      request: { model: K2, messages: [{ role: 'user', content: 'hi' }], tools: [READ_TOOL] },
      response: answer('AtlasCloud'),
      annotate: { servedProvider: 'AtlasCloud' },
    });
    await store.idle();
    const slugs = () =>
      scorecard(store)
        .map((r) => [r.provider, r.slug, r.slugKnown])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    assert.deepEqual(slugs(), [
      ['AtlasCloud', 'atlascloud', false],
      ['NovitaAI', 'novitaai', false],
    ]);
    store.learnProviderSlugs([
      { name: 'NovitaAI', slug: 'novita', source: 'endpoints', at: Date.now() },
      { name: 'AtlasCloud', slug: 'atlas-cloud', source: 'providers', at: Date.now() },
    ]);
    assert.deepEqual(slugs(), [
      ['AtlasCloud', 'atlas-cloud', true],
      ['NovitaAI', 'novita', true],
    ]);
  } finally {
    await store.close();
    tmp.remove();
  }
});

test('a turn whose only error is pin-not-honoured does not count against the provider that served it', async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    const pinned = {
      model: K2,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [READ_TOOL],
      provider: { only: ['novita'], allow_fallbacks: false },
    };
    const id = await recordExchange(store, { request: pinned, response: answer('Chutes'), annotate: { servedProvider: 'Chutes' } });
    await store.idle();
    assert.deepEqual(store.get(id)!.summary!.rules, ['pin-not-honoured'], 'the capture has the finding');
    const [row] = scorecard(store);
    assert.deepEqual([row.provider, row.toolTurns, row.brokenTurns, row.topRules], ['Chutes', 1, 0, []]);
  } finally {
    await store.close();
    tmp.remove();
  }
});

test('a row for exchanges no provider answered (an upstream error) offers no slug: there is none a policy could take', async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    const error = JSON.stringify({ error: { code: 404, message: 'Not found: POST /api/v1/v1/chat/completions' } });
    await recordExchange(store, {
      request: { model: K2, messages: [{ role: 'user', content: 'hi' }], tools: [READ_TOOL] },
      response: error,
    });
    await store.idle();
    const [row] = scorecard(store);
    assert.equal(row.provider, '(not named)');
    assert.deepEqual([row.slug, row.slugKnown], ['', false], 'no slug derived from "(not named)"');
  } finally {
    await store.close();
    tmp.remove();
  }
});
