/**
 * Whether the served provider honoured the exchange's provider policy is judged once (core/policy/describe.ts
 * `exchangePolicy`), by OpenRouter slug from the listings the store keeps: the Captures tree row (the real
 * CapturesTree, with a recorded stand-in for `vscode`), `tokenscope show` (text and --json) and the exchange view say
 * the same for providers whose display name is not their slug ("Moonshot AI" / `moonshotai`, "AtlasCloud" /
 * `atlas-cloud`), including policies where matching names loosely would have said the opposite.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import type { PolicyRecord } from '../../../src/core/model';
import { policyVerdict } from '../../../src/core/policy/describe';
import { entriesFromEndpoints, ProviderDirectory } from '../../../src/core/policy/slugs';
import { openExchange } from '../../../src/extension/openExchange';
import { recordExchange } from '../../helpers/exchanges';
import { sourceMatches } from '../../helpers/source';
import * as stub from './vscode-stub';
import { tempDir } from '../proxy/local-upstream';

stub.install();
// Loaded after the stub is installed: it `require`s vscode.
type TreeModule = typeof import('../../../src/extension/capturesTree');

const K2 = 'moonshotai/kimi-k2-0905';
const SLUGS = entriesFromEndpoints([
  { slug: 'moonshotai', name: 'Moonshot AI' },
  { slug: 'atlas-cloud', name: 'AtlasCloud' },
  { slug: 'deepinfra/fp4', name: 'DeepInfra' },
]);

/** [served display name, provider sent upstream, honoured judged by slug]. */
const CASES: [string, Record<string, unknown>, boolean][] = [
  ['Moonshot AI', { ignore: ['moonshotai'] }, false],
  ['AtlasCloud', { ignore: ['atlas-cloud'] }, false],
  ['AtlasCloud', { only: ['atlas-cloud', 'deepinfra'] }, true],
  // Not their slugs: a loose name match ("atlas" is a prefix of "AtlasCloud") would judge these the other way.
  ['AtlasCloud', { only: ['atlas'] }, false],
  ['Moonshot AI', { ignore: ['moonshot'] }, true],
];

function record(store: CaptureStore, served: string, sent: Record<string, unknown>): Promise<string> {
  const policy: PolicyRecord = { model: K2, policy: sent, sent };
  const response = JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: K2,
    provider: served,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
  });
  return recordExchange(store, {
    request: { model: K2, messages: [{ role: 'user', content: 'hi' }], provider: sent },
    response,
    annotate: { servedProvider: served, policy },
  });
}

async function show(...argv: string[]) {
  const out: string[] = [];
  const code = await main(['show', ...argv], { out: (t) => out.push(t), err: (t) => out.push(t) });
  return { code, out: out.join('\n') };
}

const word = (honoured: boolean) => (honoured ? 'policy honoured' : 'policy NOT honoured');

test('policy honoured: the Captures tree, show and the exchange view judge a provider by its OpenRouter slug, all alike', async () => {
  const { CapturesTree } = (await import('../../../src/extension/capturesTree')) as TreeModule;
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    store.learnProviderSlugs(SLUGS);
    const ids: string[] = [];
    for (const [served, sent] of CASES) ids.push(await record(store, served, sent));
    await store.idle();
    const tree = new CapturesTree(
      () => store.list(),
      () => undefined,
      () => [],
      () => new ProviderDirectory(store.providerSlugs()),
    );
    const rows = tree.getChildren().flatMap((s) => tree.getChildren(s));
    for (const [i, [served, sent, honoured]] of CASES.entries()) {
      const what = `${served} with ${JSON.stringify(sent)}`;
      const id = ids[i];
      const x = store.get(id)!;
      // The cases discriminate: for the last two, judging by name alone says the opposite.
      if (i >= 3) assert.equal(policyVerdict(x.policy!, served).honoured, !honoured, `${what}: by name it would differ`);

      const node = rows.find((n) => n.kind === 'exchange' && n.exchange.id === id)!;
      const item = tree.getTreeItem(node);
      assert.match(String(item.label), new RegExp(`^${served} · `), `tree row, ${what}`);
      assert.match(String(item.description), new RegExp(`(^|· )${word(honoured)}( ·|$)`), `tree row, ${what}`);
      assert.match(String(item.tooltip), new RegExp(`${honoured ? 'honoured' : 'NOT honoured'}$`, 'm'), `tree tooltip, ${what}`);

      const json = JSON.parse((await show(id, '--json', '--data-dir', tmp.dir)).out);
      assert.equal(json.policy.honoured, honoured, `show --json, ${what}`);
      assert.equal(json.policy.byName, false, `show --json judged by slug, ${what}`);
      const text = (await show(id, '--data-dir', tmp.dir)).out;
      assert.match(
        text,
        new RegExp(`^policy .*; served by ${served} \\(\\S+\\), ${honoured ? 'honoured' : 'NOT honoured'}$`, 'm'),
        `show, ${what}`,
      );

      const opened = (await openExchange(store, id, () => undefined))!;
      assert.ok(opened.view.title.endsWith(` · ${word(honoured)}`), `exchange view title, ${what}: ${opened.view.title}`);
      const meta = opened.view.meta.find((m) => m.label === 'Policy')!.value;
      assert.match(meta, new RegExp(`, ${honoured ? 'honoured' : 'NOT honoured'}$`), `exchange view, ${what}`);
    }
    tree.dispose();
  } finally {
    await store.close();
    tmp.remove();
  }
});

test('one judgement: outside core/policy nothing calls policyHonoured, policyVerdict or policySummary on its own', () => {
  const callers = sourceMatches(/\b(policyHonoured|policyVerdict|policySummary|policyWordFor)\s*\(/, (f) =>
    f.startsWith(join('core', 'policy')),
  );
  assert.deepEqual(callers, [], 'they call exchangePolicy');
});
