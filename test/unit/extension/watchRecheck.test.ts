// "Re-check Watched" as VS Code runs it, against the OpenRouter emulator: asked for, it says every case's verdict
// (a warning while one is broken, with a progress report per case); in the background, every intervalMinutes, it
// says nothing until a verdict changes, then only the changed case; an interval of 0 re-checks nothing.
import { after, before, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { OpenRouterClient } from '../../../src/core/upstream/openrouter';
import { parseTarget, runRequest } from '../../../src/core/upstream/run';
import { caseFromCapture } from '../../../src/core/watch/check';
import { openWatchList } from '../../../src/core/watch/list';
import { WatchRechecker, type RecheckUi } from '../../../src/extension/watchRecheck';
import { READ_TOOL, twoProviderEmulator } from '../../fixtures/openrouter-emulator';

const KEY = 'sk-or-v1-recheck000000000000000000000000000000000000000000000000000';
const REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  stream: true,
  messages: [{ role: 'user', content: 'Read the README' }],
  tools: [READ_TOOL],
};
const root = mkdtempSync(join(tmpdir(), 'tokenscope-recheck-'));
after(() => rmSync(root, { recursive: true, force: true }));

const emulator = twoProviderEmulator;

/** What the notifications and the log got. */
function ui() {
  const said: { kind: 'info' | 'warn' | 'error'; text: string }[] = [];
  const progress: string[] = [];
  const u: RecheckUi = {
    info: (text) => said.push({ kind: 'info', text }),
    warn: (text) => said.push({ kind: 'warn', text }),
    error: (text) => said.push({ kind: 'error', text }),
    progress: async (_title, work) => work((m) => progress.push(m)),
    log: { info: () => undefined, error: () => undefined },
  };
  return { u, said, progress };
}

let store: CaptureStore;
let emu: Awaited<ReturnType<typeof emulator>>;

before(async () => {
  // Two broken captures (Chutes leaks markup, Novita cuts arguments), each watched.
  store = await openStore(join(root, 'data'));
  const broken = await emulator('leak-content', 'truncated-args');
  try {
    const openrouter = new OpenRouterClient({ baseUrl: broken.url, apiKey: KEY });
    const a = await runRequest(parseTarget('openrouter:chutes'), REQUEST, { store, openrouter });
    const b = await runRequest(parseTarget('openrouter:novita'), REQUEST, { store, openrouter });
    await store.idle();
    const list = openWatchList(store.dataDir);
    list.add(caseFromCapture(store, a.exchangeId!));
    list.add(caseFromCapture(store, b.exchangeId!));
  } finally {
    await broken.close();
  }
});
after(async () => {
  await emu?.close();
  await store?.close();
});

function rechecker(out: ReturnType<typeof ui>) {
  return new WatchRechecker({
    store: () => store,
    openrouter: async () => new OpenRouterClient({ baseUrl: emu.url, apiKey: KEY }),
    samples: () => 1,
    ui: out.u,
  });
}

test('asked for: every verdict is said, as a warning while a case is broken', async () => {
  emu = await emulator('leak-content', 'truncated-args');
  const out = ui();
  await rechecker(out).recheck(false);
  assert.equal(out.said.length, 1);
  assert.equal(out.said[0].kind, 'warn');
  assert.match(
    out.said[0].text,
    /^Tokenscope watch: w1 .* on openrouter:chutes: still broken \(1\/1 samples broke\); w2 .* on openrouter:novita: still broken/,
  );
  assert.equal(out.progress.length, 2, 'one progress line per case');
});

test('in the background: silent while nothing changes, then only the case whose verdict changed; interval 0 stops it', async (t) => {
  const out = ui();
  const r = rechecker(out);
  t.after(() => r.dispose());
  mock.timers.enable({ apis: ['setInterval'] });
  t.after(() => mock.timers.reset());
  r.schedule(5);

  // Nothing changed since the last check: no notification.
  mock.timers.tick(5 * 60_000);
  await r.recheck(true); // joins the run the interval started
  assert.equal(out.said.length, 0, out.said.map((s) => s.text).join('; '));
  assert.equal(openWatchList(store.dataDir).get('w1')!.history.length, 2, 'the interval did re-check');

  // Chutes is fixed: one notification, for w1 only, saying what it was.
  await emu.close();
  emu = await emulator('correct', 'truncated-args');
  mock.timers.tick(5 * 60_000);
  await r.recheck(true);
  assert.equal(out.said.length, 1);
  assert.equal(out.said[0].kind, 'info');
  assert.match(out.said[0].text, /^Tokenscope watch: w1 .*: fixed \(0\/1 samples broke\) \(was still broken\)$/);

  // Still the same verdicts: silent again.
  mock.timers.tick(5 * 60_000);
  await r.recheck(true);
  assert.equal(out.said.length, 1);

  // Interval 0: the timer is gone, nothing more is sent.
  r.schedule(0);
  const before = emu.requests.length;
  mock.timers.tick(60 * 60_000);
  await new Promise((res) => setImmediate(res));
  assert.equal(emu.requests.length, before);
  assert.equal(openWatchList(store.dataDir).get('w1')!.history.length, 4);
});
