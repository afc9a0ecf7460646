/**
 * The Providers view (the real ProvidersView, with a recorded stand-in for `vscode`) follows the capture store: drawn
 * before the store was open (VS Code restoring the sidebar at startup), it redraws once the store opens with the
 * user's earlier captures, and again when a new exchange is recorded, as the Captures view does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { READ_TOOL } from '../../fixtures/openrouter-emulator';
import { recordExchange } from '../../helpers/exchanges';
import * as stub from './vscode-stub';
import { tempDir } from '../proxy/local-upstream';

stub.install();
// Loaded after the stub is installed: it `require`s vscode.
type ViewModule = typeof import('../../../src/extension/providersView');

const K2 = 'moonshotai/kimi-k2-0905';

function record(store: CaptureStore, served: string): Promise<string> {
  const response = JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: K2,
    provider: served,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
  });
  return recordExchange(store, {
    request: { model: K2, messages: [{ role: 'user', content: 'Read README.md.' }], tools: [READ_TOOL] },
    response,
    annotate: { servedProvider: served },
  });
}

/** The view's next redraw (VS Code then asks for its rows again); rejects after `ms` without one. */
function redraw(view: { onDidChangeTreeData: (l: () => void) => { dispose(): void } }, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`the Providers view did not redraw within ${ms} ms`));
    }, ms);
    const sub = view.onDidChangeTreeData(() => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

test('the Providers view redraws when the store opens with earlier captures and when an exchange is recorded', async () => {
  const { ProvidersView } = (await import('../../../src/extension/providersView')) as ViewModule;
  const tmp = tempDir();
  // Yesterday's capture: recorded, then the store closed with the editor.
  const earlier = await openStore(tmp.dir);
  await record(earlier, 'Chutes');
  await earlier.close();

  let store: CaptureStore | undefined;
  const view = new ProvidersView(
    () => store,
    () => ({}),
  );
  try {
    const providers = () =>
      view
        .getChildren()
        .flatMap((m) => view.getChildren(m))
        .map((n) => (n.kind === 'provider' ? n.row.provider : ''));
    // VS Code draws the restored view before the extension has opened its store: no rows, the welcome text shows.
    assert.deepEqual(providers(), []);

    const opened = redraw(view, 5000);
    store = await openStore(tmp.dir);
    assert.equal(store.list().length, 1, 'the store holds the earlier capture');
    view.watch(store);
    await opened;
    assert.deepEqual(providers(), ['Chutes']);

    // The agent's next exchange, served by another provider: the view redraws from the store's change events.
    const changed = redraw(view, 15_000);
    await record(store, 'Fireworks');
    await changed;
    await store.idle();
    assert.deepEqual(providers().sort(), ['Chutes', 'Fireworks']);
  } finally {
    view.dispose();
    await store?.close();
    tmp.remove();
  }
});

/** The view's root rows as text: providers by model, or its one message row. */
function rootText(view: InstanceType<ViewModule['ProvidersView']>): string[] {
  return view
    .getChildren()
    .flatMap((n) =>
      n.kind === 'message'
        ? [`message: ${n.text}`]
        : n.kind === 'model'
          ? view.getChildren(n).map((p) => (p.kind === 'provider' ? p.row.provider : ''))
          : [],
    );
}

test('the Providers view drops a provider when its captures are deleted, and says what captures it cannot score', async () => {
  const { ProvidersView } = (await import('../../../src/extension/providersView')) as ViewModule;
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  const view = new ProvidersView(
    () => store,
    () => ({}),
  );
  try {
    view.watch(store);
    const demo = [await record(store, 'Demo (local)'), await record(store, 'Demo (local)')];
    await store.idle();
    assert.deepEqual(rootText(view), ['Demo (local)']);
    const tree = (view as unknown as { view: { description?: string } }).view;
    assert.equal(tree.description, '2 captures with a model and a served provider');

    // Cleared (as "Clear Demo Captures" does): the view redraws from the deletions, and the provider is gone.
    const cleared = redraw(view, 15_000);
    for (const id of demo) await store.delete(id);
    await cleared;
    assert.deepEqual(rootText(view), []);

    // A re-run alone is no agent turn: instead of "nothing yet", the view says what the store holds.
    const w = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/openrouter/v1/chat/completions',
      requestHeaders: {},
      requestBody: JSON.stringify({ model: K2, messages: [] }),
      target: 'openrouter:fireworks',
    });
    w.annotate({ servedProvider: 'Fireworks' });
    w.responseStarted(200, { 'content-type': 'application/json' });
    w.chunk(Buffer.from('{"choices":[]}'));
    await w.finish();
    assert.deepEqual(rootText(view), [
      'message: No provider to score yet: 1 capture, 1 re-run or comparison sample (scored by their comparison).',
    ]);
    assert.equal(tree.description, undefined);
  } finally {
    view.dispose();
    await store.close();
    tmp.remove();
  }
});

test('a provider row shows the slug a policy takes beside the name: a guess marked until a listing names it', async () => {
  const { ProvidersView } = (await import('../../../src/extension/providersView')) as ViewModule;
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  const view = new ProvidersView(
    () => store,
    () => ({}),
  );
  try {
    await record(store, 'NovitaAI');
    await store.idle();
    const row = () => {
      const node = view.getChildren().flatMap((m) => view.getChildren(m))[0];
      const item = view.getTreeItem(node);
      return { label: String(item.label), tooltip: (item.tooltip as { value: string }).value };
    };
    // No listing read yet: the slug derived from the name, marked as a guess (OpenRouter's is `novita`).
    assert.equal(row().label, 'NovitaAI (novitaai?)');
    assert.match(row().tooltip, /OpenRouter slug: `novitaai`\? derived from the name "NovitaAI"/);
    store.learnProviderSlugs([{ name: 'NovitaAI', slug: 'novita', source: 'endpoints', at: Date.now() }]);
    assert.equal(row().label, 'NovitaAI (novita)');
    assert.match(row().tooltip, /OpenRouter slug: `novita` \(what provider\.only/);
  } finally {
    view.dispose();
    await store.close();
    tmp.remove();
  }
});
