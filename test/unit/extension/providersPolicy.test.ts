/**
 * "Avoid This Provider for This Model" (the real ProvidersView, with the recorded stand-in for `vscode`) writes the
 * policies stored in the data dir, as `tokenscope policy set` does, starting from the policy in force: a setting's
 * policy for the model, or for a variant its base model's, is kept and added to.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { LivePolicies, readStoredPolicies, updateStoredPolicies } from '../../../src/core/policy/stored';
import { recordExchange } from '../../helpers/exchanges';
import * as stub from './vscode-stub';
import { tempDir } from '../proxy/local-upstream';

stub.install();
type ViewModule = typeof import('../../../src/extension/providersView');

const K2 = 'moonshotai/kimi-k2-0905';

test("Avoid… on an exchange stores the policy in the data dir, kept from the setting's and the base model's", async () => {
  const { ProvidersView } = (await import('../../../src/extension/providersView')) as ViewModule;
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  store.learnProviderSlugs([{ name: 'Chutes', slug: 'chutes', source: 'endpoints', at: 1 }]);
  const setting = { [K2]: { order: ['fireworks'] } };
  const live = new LivePolicies({ dataDir: tmp.dir, base: () => setting, checkEveryMs: 0 });
  let written = 0;
  const view = new ProvidersView(
    () => store,
    () => live.get(),
    async () => undefined,
    () => written++,
  );
  try {
    const response = (model: string) =>
      JSON.stringify({
        id: 'gen-1',
        object: 'chat.completion',
        model,
        provider: 'Chutes',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
      });
    const onBase = await recordExchange(store, {
      request: { model: K2, messages: [] },
      response: response(K2),
      annotate: { servedProvider: 'Chutes' },
    });
    const avoid = stub.ui.commands.get('tokenscope.avoidProvider')!;
    await store.idle(); // analysed: the exchange names its model
    await avoid(onBase);
    assert.deepEqual(
      readStoredPolicies(tmp.dir),
      { [K2]: { order: ['fireworks'], ignore: ['chutes'] } },
      "the setting's policy is kept and added to",
    );
    assert.equal(written, 1);

    await updateStoredPolicies(tmp.dir, () => ({ [K2]: { ignore: ['groq'] } }));
    const onVariant = await recordExchange(store, {
      request: { model: `${K2}:exacto`, messages: [] },
      response: response(`${K2}:exacto`),
      annotate: { servedProvider: 'Chutes' },
    });
    await store.idle();
    await avoid(onVariant);
    assert.deepEqual(
      readStoredPolicies(tmp.dir),
      { [K2]: { ignore: ['groq'] }, [`${K2}:exacto`]: { ignore: ['groq', 'chutes'] } },
      "the variant starts from its base model's policy",
    );
    assert.deepEqual(stub.ui.errors, []);
  } finally {
    view.dispose();
    await store.close();
    tmp.remove();
  }
});
