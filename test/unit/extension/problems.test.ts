/**
 * The Problems panel lists the findings of the newest broken captures, opened or not, and follows the store: a new
 * broken capture appears once analysed, a deleted one goes, a closed panel's entries stay while its capture is
 * broken. The real Exchanges class, with a recorded stand-in for `vscode`, over a real capture store.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import type { ExchangeQuery } from '../../../src/core/capture/database';
import type { CapturedExchange } from '../../../src/core/model';
import { PROBLEM_CAPTURES, problemCaptures, problemRecords } from '../../../src/extension/problems';
import { READ_TOOL } from '../../fixtures/openrouter-emulator';
import { openRouterExchange, recordExchange } from '../../helpers/exchanges';
import * as stub from './vscode-stub';
import { tempDir } from '../proxy/local-upstream';

stub.install();
type ExchangesModule = typeof import('../../../src/extension/exchanges');

const K2 = 'moonshotai/kimi-k2-0905';
/** A Kimi K2 section that never ends, leaked into content: error findings. */
const LEAKED =
  'I\'ll read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "a.md"}<|tool_call_end|>';

function record(store: CaptureStore, content: string): Promise<string> {
  const response = JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: K2,
    provider: 'Chutes',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });
  return recordExchange(store, {
    request: { model: K2, messages: [{ role: 'user', content: 'Read a.md.' }], tools: [READ_TOOL] },
    response,
    annotate: { servedProvider: 'Chutes' },
  });
}

/** Ids with Problems entries, and the rules of each. */
function problems(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [uri, diags] of stub.ui.diagnostics)
    out.set(
      uri.split('/')[1],
      diags.map((d) => String(d.code)),
    );
  return out;
}

const log = { info() {}, warn() {}, error() {}, debug() {}, trace() {} } as never;

describe('the captures the Problems panel lists', () => {
  it('takes the newest captures with an error finding, at most PROBLEM_CAPTURES, reading broken pages until enough', () => {
    // 1000 broken captures, newest first; only every third has an error finding (the others were cut off).
    const all: CapturedExchange[] = Array.from({ length: 1000 }, (_, i) =>
      openRouterExchange({
        id: `x${i}`,
        startedAt: 1000 - i,
        state: i % 3 ? 'incomplete' : 'complete',
        summary: { counts: { error: i % 3 ? 0 : 1, warning: 0, info: 0 }, rules: [] } as never,
      }),
    );
    const asked: ExchangeQuery[] = [];
    const query = (q: ExchangeQuery) => (asked.push(q), all.slice(0, q.limit));
    const picked = problemCaptures(query);
    assert.equal(picked.length, PROBLEM_CAPTURES);
    assert.deepEqual(
      picked.slice(0, 3).map((x) => x.id),
      ['x0', 'x3', 'x6'],
    );
    assert.ok(asked.every((q) => q.broken === true));
    assert.ok(asked.length > 1, 'a first page of 200 broken captures held too few with an error finding');
    assert.equal(problemCaptures((q) => all.slice(0, Math.min(q.limit!, 10))).length, 4, 'fewer exist: all of them');
  });

  it('places findings on the native text, and says when repair rewrote the response', () => {
    const text = 'line one\nline two <|x|>';
    const records = problemRecords(
      [{ rule: 'r', severity: 'error', message: 'bad', start: 18, end: 23, expectedMarker: '<|end|>' }],
      text,
      '1 call delivered as tool_calls',
    );
    assert.deepEqual(records[0], {
      start: { line: 1, character: 9 },
      end: { line: 1, character: 14 },
      message: 'bad (expected <|end|> here)',
      severity: 'error',
      code: 'r',
    });
    assert.equal(records[1].code, 'repaired');
  });
});

describe('the Problems panel follows the capture store', () => {
  it('lists broken captures that were never opened, drops deleted ones, keeps a listed one when its panel closes', async () => {
    const { Exchanges } = (await import('../../../src/extension/exchanges')) as ExchangesModule;
    const tmp = tempDir();
    const store = await openStore(tmp.dir);
    stub.ui.diagnostics.clear();
    const exchanges = new Exchanges(() => store, log);
    const unsubscribe = store.onDidChange((e) => exchanges.storeChanged(e.kind, e.exchange.id));
    try {
      const broken = await record(store, LEAKED);
      const healthy = await record(store, 'Done.');
      await store.idle();
      await exchanges.syncProblems();
      // Nothing was opened: the broken capture's findings are listed anyway, the healthy one has none.
      assert.deepEqual([...problems().keys()], [broken]);
      assert.ok(problems().get(broken)!.includes('section-unclosed'), problems().get(broken)!.join(', '));
      assert.ok(stub.ui.diagnostics.keys().next().value!.startsWith(`tokenscope:/${broken}/moonshotai_kimi-k2-0905.txt`));

      // A new broken capture arrives: listed once analysed, without a call from the test (the store's change events).
      const second = await record(store, LEAKED);
      await store.idle();
      const until = Date.now() + 10_000;
      while (!problems().has(second) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.ok(problems().has(second), 'the new broken capture is listed');

      // Opened and closed: the entries of a listed capture stay; a healthy one's go.
      await exchanges.open(broken);
      await exchanges.open(healthy);
      exchanges.clearDiagnostics(broken);
      exchanges.clearDiagnostics(healthy);
      assert.ok(problems().has(broken));
      assert.ok(!problems().has(healthy));

      // Deleted: gone.
      await store.delete(broken);
      await exchanges.syncProblems();
      assert.deepEqual([...problems().keys()], [second]);
    } finally {
      unsubscribe();
      exchanges.dispose();
      await store.close();
      tmp.remove();
    }
  });
});
