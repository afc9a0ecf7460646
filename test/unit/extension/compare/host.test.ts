/**
 * The host side of "Compare Providers…" driven end to end in Node, with a recorded stand-in for the `vscode` API
 * (../vscode-stub.ts), the real core, a real capture store and the OpenRouter emulator: what the user is asked,
 * what runs, what the panel receives, and what its messages do.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openStore, type CaptureStore } from '../../../../src/core/capture/store';
import { UserError } from '../../../../src/core/model';
import { OpenRouterClient } from '../../../../src/core/upstream/openrouter';
import { runRequest } from '../../../../src/core/upstream/run';
import type { CompareHostMessage, CompareView } from '../../../../webview/compare/protocol';
import type { TokenStreamView } from '../../../../webview/protocol';
import { startOpenRouterEmulator, type OpenRouterEmulator } from '../../../fixtures/openrouter-emulator';
import { COMPARE_PROVIDERS, COMPARE_REQUEST } from '../../../helpers/compare';
import * as stub from '../vscode-stub';
import { Command } from '../../../../src/extension/contributions';

stub.install();
// Loaded after the stub is installed: these modules `require('vscode')`.
type CompareModule = typeof import('../../../../src/extension/compare/index');
let compare: CompareModule;

const log = { info() {}, warn() {}, error() {}, debug() {}, trace() {} };
const snapshots = (p: stub.FakePanel): CompareView[] =>
  p.posted.filter((m: CompareHostMessage) => m.type === 'snapshot').map((m) => m.view);
const lastSnapshot = (p: stub.FakePanel) => snapshots(p).at(-1)!;

/** Two tokens every capture shares, then one of its own (the same id for the same capture, never for another). */
const ownToken = new Map<string, number>();
function tokens(id: string): Promise<{ stream?: TokenStreamView; reason?: string }> {
  if (!ownToken.has(id)) ownToken.set(id, 1000 + ownToken.size);
  const ids = [1, 2, ownToken.get(id)!];
  return Promise.resolve({
    stream: {
      tokenizer: 't',
      source: 'text',
      ids,
      texts: ids.map(String),
      starts: [0, 1, 2],
      ends: [1, 2, 3],
      kinds: [0, 0, 0],
      segments: [0, 0, 0],
      accounting: [],
      findings: [],
    },
  });
}

describe('Compare Providers… (host side)', () => {
  let emu: OpenRouterEmulator;
  let dir: string;
  let store: CaptureStore;
  let client: OpenRouterClient;
  let sourceId: string;
  const opened: string[] = [];
  let commands: import('../../../../src/extension/compare/index').CompareCommands;

  /** A second registration of the commands on the same store, with its own OpenRouter client lookup. */
  const register = (openrouter: () => Promise<OpenRouterClient>) =>
    compare.registerCompare({ extensionUri: stub.Uri.file('/ext'), subscriptions: [] } as never, {
      store: () => store,
      openrouter,
      openExchange: () => {},
      log: log as never,
    });

  /** Commands aimed at an emulator that answers after 5 s, so a comparison is still running when the test stops it. */
  async function slowCompare(): Promise<{ slow: OpenRouterEmulator; cmds: ReturnType<typeof register> }> {
    const slow = await startOpenRouterEmulator({ latencyMs: 5000 });
    const slowClient = new OpenRouterClient({ baseUrl: slow.url, apiKey: 'sk-or-v1-test' });
    return { slow, cmds: register(async () => slowClient) };
  }

  before(async () => {
    compare = await import('../../../../src/extension/compare/index');
    emu = await startOpenRouterEmulator({ chunkDelayMs: 1 });
    dir = mkdtempSync(join(tmpdir(), 'tokenscope-compare-host-'));
    store = await openStore(dir);
    client = new OpenRouterClient({ baseUrl: emu.url, apiKey: 'sk-or-v1-test' });
    // The capture the user starts from: the same request, pinned to Chutes (the leaky provider).
    const source = await runRequest({ kind: 'openrouter', provider: 'chutes' }, COMPARE_REQUEST, { openrouter: client, store });
    sourceId = source.exchangeId!;
    const context = { extensionUri: stub.Uri.file('/ext'), subscriptions: [] as { dispose(): void }[] };
    commands = compare.registerCompare(context as never, {
      store: () => store,
      openrouter: async () => client,
      openExchange: (id) => opened.push(id),
      log: log as never,
      tokens,
    });
  });

  after(async () => {
    await store?.close();
    await emu?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    Object.assign(stub.ui, {
      quickPicks: [],
      inputBoxes: [],
      errors: [],
      progress: [],
      panels: [],
      executed: [],
      cancelProgressAfterMs: undefined,
      cancelProgressWhen: undefined,
    });
    stub.ui.quickPick = (items) => items.filter((i: { endpoint: { slug: string } }) => COMPARE_PROVIDERS.includes(i.endpoint.slug));
    stub.ui.inputBox = () => '2';
  });

  it('registers its commands and the wire-document scheme', () => {
    assert.ok(stub.ui.commands.has(Command.CompareProviders));
    assert.ok(stub.ui.commands.has(Command.DiffExchanges));
    assert.ok(stub.ui.contentProviders.has('tokenscope-wire'));
  });

  it('asks with every provider pre-selected, runs with progress, and fills the matrix', async () => {
    await commands.runCompare(sourceId);
    assert.deepEqual(stub.ui.errors, []);

    const pick = stub.ui.quickPicks[0];
    assert.equal(pick.opts.canPickMany, true);
    assert.equal(pick.items.length, 10, 'every provider the endpoint list names');
    assert.ok(pick.items.every((i) => i.picked === true));
    assert.match(pick.items.find((i) => i.endpoint.slug === 'fireworks').detail, /per M tokens · uptime/);
    assert.equal(stub.ui.inputBoxes[0].value, '3', 'samples default to 3');

    const run = stub.ui.progress.find((p) => p.title.includes('comparing 4 providers'))!;
    assert.ok(run, 'a progress notification for the run');
    const total = run.reports.reduce((n, r) => n + (r.increment ?? 0), 0);
    assert.ok(Math.abs(total - 100) < 1e-6, `progress adds up to 100% (${total})`);
    assert.match(run.reports.at(-1)!.message!, /^8\/8 done/);

    const panel = stub.ui.panels[0];
    assert.match(panel.webview.html, /default-src 'none'/);
    assert.match(panel.webview.html, /compare\.js/);
    panel.send({ type: 'ready' });
    const v = lastSnapshot(panel);
    assert.equal(v.state, 'done');
    assert.equal(v.reference, 'chutes', 'the provider that served the original capture is the reference');
    assert.deepEqual(
      v.rows.map((r) => r.slug),
      COMPARE_PROVIDERS,
    );
    assert.ok(v.rows.every((r) => r.samples.length === 2 && r.samples.every((c) => c.exchangeId)));
    assert.equal(v.rows.find((r) => r.slug === 'atlas-cloud')!.failed, 2);
    assert.equal(store.list().filter((x) => x.parentId === sourceId).length, 8, 'every sample is a capture linked to the original');
  });

  it('acts on the panel’s messages: open, reference, raw and wire diffs, token diff', async () => {
    await commands.runCompare(sourceId);
    const panel = stub.ui.panels[0];
    panel.send({ type: 'ready' });
    const fw = lastSnapshot(panel)
      .rows.find((r) => r.slug === 'fireworks')!
      .samples.map((c) => c.exchangeId!);
    const down = lastSnapshot(panel).rows.find((r) => r.slug === 'atlas-cloud')!.samples[0].exchangeId!;

    panel.send({ type: 'openExchange', id: fw[0] });
    assert.equal(opened.at(-1), fw[0]);

    panel.send({ type: 'setReference', slug: 'fireworks' });
    assert.equal(lastSnapshot(panel).reference, 'fireworks');
    assert.equal(lastSnapshot(panel).rows.find((r) => r.slug === 'groq')!.trigger.f1, 1);
    const before = panel.posted.length;
    panel.send({ type: 'setReference', slug: 'not-compared' });
    panel.send({ type: 'openExchange' });
    assert.equal(panel.posted.length, before, 'unknown providers and malformed messages are ignored');

    panel.send({ type: 'diff', kind: 'raw', left: fw[0], right: down });
    await new Promise((r) => setImmediate(r));
    const [cmd, left, right, title] = stub.ui.executed.at(-1)! as [string, stub.Uri, stub.Uri, string];
    assert.equal(cmd, 'vscode.diff');
    assert.deepEqual([left.scheme, left.path], ['tokenscope', `/${fw[0]}/fireworks-1.txt`]);
    assert.deepEqual([right.scheme, right.path], ['tokenscope', `/${down}/atlas-cloud-1.txt`]);
    assert.equal(title, 'fireworks #1 ↔ atlas-cloud #1 (raw stream)');

    panel.send({ type: 'diff', kind: 'wire', left: fw[0], right: down });
    await new Promise((r) => setImmediate(r));
    const [, wl, wr] = stub.ui.executed.at(-1)! as [string, stub.Uri, stub.Uri];
    const wire = stub.ui.contentProviders.get('tokenscope-wire')!;
    assert.match(await wire.provideTextDocumentContent(wl), /^HTTP 200 from .*\n\n[\s\S]*data: /);
    assert.match(await wire.provideTextDocumentContent(wr), /^HTTP 502/);
    assert.match(
      await wire.provideTextDocumentContent(stub.Uri.from({ scheme: 'tokenscope-wire', path: '/gone/x.sse' })),
      /not in the capture store/,
    );

    panel.send({ type: 'diff', kind: 'tokens', left: fw[0], right: fw[1] });
    type TokenDiffMessage = Extract<CompareHostMessage, { type: 'tokenDiff' }>;
    const diffs = () => panel.posted.filter((m: CompareHostMessage): m is TokenDiffMessage => m.type === 'tokenDiff');
    for (const end = Date.now() + 20_000; diffs().length < 2 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
    const [pending, done] = diffs();
    assert.equal(pending.pending, true, 'the view shows that tokenizing is under way');
    assert.deepEqual([done.diff?.left.label, done.diff?.right.label, done.diff?.same], ['fireworks #1', 'fireworks #2', 2]);
    // The webview reloads (hidden, shown): the host sends the matrix and the token diff again.
    const n = panel.posted.length;
    panel.send({ type: 'ready' });
    assert.deepEqual(
      panel.posted.slice(n).map((m: CompareHostMessage) => m.type),
      ['snapshot', 'tokenDiff'],
    );
  });

  it('stops on Cancel: in-flight samples come back cancelled, nothing is reported as an error', async () => {
    const { slow, cmds } = await slowCompare();
    try {
      // Cancel once the down provider's two samples have failed and the other six are in flight at the emulator (a
      // fixed delay raced the down provider's answers on a loaded machine).
      const chats = () => slow.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
      // Timed from the Cancel: reaching the emulator can take seconds on a loaded machine, the answers take 5 s from there.
      let t0 = 0;
      stub.ui.cancelProgressWhen = (reports) => {
        const now = chats() === 8 && reports.some((r) => /· 2 failed/.test(r.message ?? ''));
        if (now) t0 = Date.now();
        return now;
      };
      await cmds.runCompare(sourceId);
      assert.ok(t0 > 0, 'cancelled once the samples were in flight');
      assert.ok(Date.now() - t0 < 4000, `stopped well before the 5 s answers (${Date.now() - t0} ms)`);
      const panel = stub.ui.panels[0];
      panel.send({ type: 'ready' });
      const v = lastSnapshot(panel);
      assert.equal(v.state, 'cancelled');
      // The down provider fails at once; every other sample was in flight and comes back cancelled.
      for (const r of v.rows)
        assert.deepEqual(
          r.samples.map((c) => c.state),
          r.slug === 'atlas-cloud' ? ['failed', 'failed'] : ['cancelled', 'cancelled'],
          r.slug,
        );
      assert.deepEqual(stub.ui.errors, []);
    } finally {
      await slow.close();
    }
  });

  it('closing the panel stops a running comparison', async () => {
    const { slow, cmds } = await slowCompare();
    try {
      const running = cmds.runCompare(sourceId);
      while (!stub.ui.panels.length) await new Promise((r) => setTimeout(r, 20));
      // Closed once every sample's request has reached the emulator (a fixed 200 ms, later a 3 s cap, was too short on
      // a loaded machine); timed from the close, as the answers take 5 s from each request's arrival.
      const sent = () => slow.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
      for (const end = Date.now() + 20_000; sent() < 8 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
      const t0 = Date.now();
      stub.ui.panels[0].dispose();
      await running;
      assert.ok(Date.now() - t0 < 4000, `stopped when the panel closed (${Date.now() - t0} ms)`);
      const chats = slow.requests.filter((r) => r.path.endsWith('/chat/completions') && r.body.provider.only[0] !== 'atlas-cloud');
      assert.equal(chats.length, 6);
      // The emulator learns of a dropped connection on its own schedule: give it a moment.
      for (const end = Date.now() + 20_000; !chats.every((r) => r.aborted) && Date.now() < end; )
        await new Promise((r) => setTimeout(r, 20));
      assert.ok(
        chats.every((r) => r.aborted),
        'requests in flight were aborted',
      );
    } finally {
      await slow.close();
    }
  });

  it('explains a missing API key with a way to set it, and opens nothing', async () => {
    const cmds = register(() => Promise.reject(new UserError('no OpenRouter API key: set OPENROUTER_API_KEY')));
    await cmds.runCompare(sourceId);
    assert.deepEqual(stub.ui.errors, ['Tokenscope: no OpenRouter API key: set OPENROUTER_API_KEY']);
    assert.equal(stub.ui.panels.length, 0);
  });

  it('reports an unknown capture in one line', async () => {
    await commands.runCompare('no-such-capture');
    assert.equal(stub.ui.errors.length, 1);
    assert.match(stub.ui.errors[0], /^Tokenscope: no capture with id "no-such-capture"/);
    assert.equal(stub.ui.panels.length, 0);
  });
});
