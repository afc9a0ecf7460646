/**
 * The webview panel base (src/extension/webviewPanel.ts) as the exchange view uses it (the real ExchangePanels and
 * Exchanges, with a recorded stand-in for `vscode`, over a real store), and on its own with a small panel: the guard
 * checks every field before the host acts (a `command` message without its command runs nothing), nothing is posted
 * before the webview's `ready`, a request is answered under its seq, and what a handler throws is shown in the panel.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { UserError } from '../../../src/core/model';
import { Command } from '../../../src/extension/contributions';
import { isCompareWebviewMessage } from '../../../webview/compare/protocol';
import { messageGuard, type PanelErrorMessage } from '../../../webview/panel/protocol';
import { isWebviewMessage } from '../../../webview/protocol';
import { recordExchange } from '../../helpers/exchanges';
import * as stub from './vscode-stub';
import { tempDir } from '../proxy/local-upstream';

stub.install();
// Loaded after the stub is installed: they `require` vscode.
type PanelModule = typeof import('../../../src/extension/exchangePanel');
type ExchangesModule = typeof import('../../../src/extension/exchanges');
type BaseModule = typeof import('../../../src/extension/webviewPanel');

const tick = () => new Promise((r) => setImmediate(r));

/** Waits (up to 10 s) for the panel to have posted a message `pick` accepts. */
async function posted(panel: stub.FakePanel, what: string, pick: (m: any) => boolean): Promise<any> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 5))) {
    const m = panel.posted.find(pick);
    if (m) return m;
  }
  throw new Error(`the panel posted no ${what} within 10 s`);
}

function recordingLog() {
  const log = {
    errors: [] as string[],
    warnings: [] as string[],
    error: (m: string) => log.errors.push(m),
    warn: (m: string) => log.warnings.push(m),
    info() {},
  };
  return log;
}

describe('the exchange view’s messages are checked field by field', () => {
  it('accepts what the webview sends', () => {
    for (const m of [
      { type: 'ready' },
      { type: 'openRaw' },
      { type: 'openRaw', offset: 12 },
      { type: 'command', command: 'rerun' },
      { type: 'command', command: 'compare' },
      { type: 'command', command: 'export' },
      { type: 'command', command: 'diffDelivered' },
      { type: 'wirePage', seq: 1, from: 5000 },
      { type: 'getTokenizer', how: 'download' },
      { type: 'getTokenizer', how: 'folder' },
    ]) {
      assert.equal(isWebviewMessage(m), true, JSON.stringify(m));
    }
  });

  it('rejects a message whose fields are missing or wrong', () => {
    for (const m of [
      null,
      [],
      'ready',
      {},
      { type: 'command' },
      { type: 'command', command: undefined },
      { type: 'command', command: 'workbench.action.terminal.new' },
      { type: 'command', command: 'toString' },
      { type: 'openRaw', offset: -1 },
      { type: 'openRaw', offset: '3' },
      { type: 'wirePage', seq: 1 },
      { type: 'getTokenizer', how: 'curl' },
      { type: 'toString' },
      { type: '__proto__' },
    ]) {
      assert.equal(isWebviewMessage(m), false, JSON.stringify(m));
    }
    assert.equal(isCompareWebviewMessage({ type: 'diff', kind: 'raw', left: '', right: 'b' }), false, 'an empty sample id');
  });

  it('a guard built with messageGuard knows only the types it was given', () => {
    const g = messageGuard<{ type: 'a'; n: number } | { type: 'b' }>({ a: (m) => typeof m.n === 'number', b: () => true });
    assert.deepEqual(
      [g({ type: 'a', n: 1 }), g({ type: 'a' }), g({ type: 'b' }), g({ type: 'c' }), g({ type: 'hasOwnProperty' })],
      [true, false, true, false, false],
    );
  });
});

describe('the exchange panel on the panel base', () => {
  const { ExchangePanels } = require('../../../src/extension/exchangePanel') as PanelModule;
  const { Exchanges } = require('../../../src/extension/exchanges') as ExchangesModule;
  let tmp: ReturnType<typeof tempDir>;
  let store: CaptureStore;
  let id: string;

  before(async () => {
    tmp = tempDir();
    store = await openStore(tmp.dir);
    id = await recordExchange(store, {
      request: { model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: 'hi' }] },
      response: JSON.stringify({
        id: 'c',
        model: 'moonshotai/kimi-k2-0905',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
      }),
      contentType: 'application/json',
    });
    await store.idle();
  });
  after(async () => {
    await store.close();
    tmp.remove();
  });
  beforeEach(() => Object.assign(stub.ui, { panels: [], executed: [] }));

  async function open() {
    const log = recordingLog();
    const exchanges = new Exchanges(() => store, log as never);
    const panels = new ExchangePanels(
      stub.Uri.file('/ext') as never,
      exchanges,
      async () => ({ reason: 'no tokenizer in this test' }),
      log as never,
    );
    await panels.show(id);
    const panel = stub.ui.panels.at(-1)!;
    return { log, panel, close: () => (panels.dispose(), exchanges.dispose()) };
  }

  it('runs nothing for a `command` message without its command, and the command named for a well-formed one', async () => {
    const { log, panel, close } = await open();
    try {
      panel.send({ type: 'ready' });
      await posted(panel, 'snapshot', (m) => m.type === 'exchange');
      panel.send({ type: 'command' });
      panel.send({ type: 'command', command: 'workbench.action.terminal.new' });
      await tick();
      assert.deepEqual(stub.ui.executed, [], 'no command ran (before, executeCommand(undefined, id) did)');
      assert.equal(log.warnings.length, 2, 'each malformed message is logged');
      assert.match(log.warnings[0], /malformed message.*"type":"command"/);

      panel.send({ type: 'command', command: 'rerun' });
      panel.send({ type: 'command', command: 'diffDelivered' });
      await tick();
      assert.deepEqual(stub.ui.executed, [
        [Command.Rerun, id],
        [Command.DiffDelivered, id],
      ]);
    } finally {
      close();
    }
  });

  it('posts nothing before the webview is ready, then the whole snapshot on each ready', async () => {
    const { panel, close } = await open();
    try {
      assert.match(panel.webview.html, /webview\.js/);
      assert.match(panel.webview.html, /default-src 'none'/);
      assert.equal(panel.viewType, 'tokenscope.exchange');
      await tick();
      assert.equal(panel.posted.length, 0, 'nobody listens yet');
      panel.send({ type: 'ready' });
      await posted(panel, 'tokens', (m) => m.type === 'tokens');
      assert.deepEqual(
        panel.posted.map((m) => m.type),
        ['exchange', 'tokens'],
      );
      // Shown again after being hidden: the webview reloads and asks again.
      panel.send({ type: 'ready' });
      for (const end = Date.now() + 10_000; panel.posted.length < 4 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(
        panel.posted.map((m) => m.type),
        ['exchange', 'tokens', 'exchange', 'tokens'],
      );
    } finally {
      close();
    }
  });

  it('shows in the panel an action that failed on the host, and logs it', async () => {
    const { log, panel, close } = await open();
    const ws = stub.workspace as Record<string, unknown>;
    ws.openTextDocument = async () => {
      throw new Error('the raw stream document could not be opened\nsecond line');
    };
    try {
      panel.send({ type: 'ready' });
      panel.send({ type: 'openRaw', offset: 3 });
      const e: PanelErrorMessage = await posted(panel, 'error', (m) => m.type === 'error');
      assert.equal(e.message, 'the raw stream document could not be opened', 'one line');
      assert.deepEqual(log.errors, ['tokenscope.exchange openRaw failed']);
    } finally {
      delete ws.openTextDocument;
      close();
    }
  });
});

describe('the panel base on its own', () => {
  type Host = { type: 'hello'; n: number } | { type: 'page'; seq: number; text: string } | PanelErrorMessage;
  type View = { type: 'ready' } | { type: 'page'; seq: number } | { type: 'boom'; user?: boolean };
  const guard = messageGuard<View>({ ready: () => true, page: (m) => Number.isSafeInteger(m.seq), boom: () => true });

  function make() {
    const { WebviewPanel } = require('../../../src/extension/webviewPanel') as BaseModule;
    const log = recordingLog();
    let snapshots = 0;
    class Small extends WebviewPanel<Host, View> {
      closedCalls = 0;
      protected override snapshot(): void {
        snapshots++;
        void this.post({ type: 'hello', n: snapshots });
      }
      protected override async handle(m: Exclude<View, { type: 'ready' }>): Promise<void> {
        if (m.type === 'page') {
          await tick();
          await this.reply(m, { text: `page ${m.seq}` });
          return;
        }
        if (m.user) throw new UserError('nothing to compare: pick two samples');
        throw new TypeError('undefined is not a function');
      }
      protected override onClosed(): void {
        this.closedCalls++;
      }
    }
    const p = new Small({
      viewType: 'tokenscope.test',
      title: 'Test',
      extensionUri: stub.Uri.file('/ext') as never,
      script: 'test.js',
      styles: ['test.css'],
      accepts: guard,
      log,
    });
    return { p, log, panel: stub.ui.panels.at(-1)! };
  }

  it('answers a request under its seq, synchronously snapshots on ready, and drops posts once closed', async () => {
    const { p, panel } = make();
    assert.equal(await p.post({ type: 'hello', n: 0 }), false, 'not ready: dropped');
    panel.send({ type: 'ready' });
    assert.deepEqual(panel.posted, [{ type: 'hello', n: 1 }], 'the snapshot is posted before send returns');
    panel.send({ type: 'page', seq: 7 });
    panel.send({ type: 'page', seq: 8 });
    await posted(panel, 'reply 8', (m) => m.seq === 8);
    assert.deepEqual(panel.posted.slice(1), [
      { text: 'page 7', type: 'page', seq: 7 },
      { text: 'page 8', type: 'page', seq: 8 },
    ]);
    p.dispose();
    assert.equal(p.closedCalls, 1);
    assert.equal(p.isClosed, true);
    assert.equal(await p.post({ type: 'hello', n: 9 }), false);
    assert.equal(panel.posted.length, 3);
  });

  it('shows a thrown error in the panel: the stack goes to the log, a user error only to the panel', async () => {
    const { log, panel } = make();
    panel.send({ type: 'ready' });
    panel.send({ type: 'boom' });
    panel.send({ type: 'boom', user: true });
    await tick();
    assert.deepEqual(
      panel.posted.filter((m) => m.type === 'error'),
      [
        { type: 'error', message: 'undefined is not a function' },
        { type: 'error', message: 'nothing to compare: pick two samples' },
      ],
    );
    assert.deepEqual(log.errors, ['tokenscope.test boom failed']);
    panel.send({ type: 'page', seq: -1.5 });
    assert.equal(log.warnings.length, 1, 'a malformed request is logged and dropped');
  });
});
