// `tokenscope watch` end to end against the OpenRouter emulator: a broken capture on a pinned provider becomes a
// case; when the emulated provider is fixed the case flips to "fixed" (and `watch run` exits 0), while a provider
// that still breaks keeps its case "still broken" with exit 1; a different error is "broken differently". Each
// re-check is a capture linked to the case's capture, and the history keeps first/last broken and fixed-since.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import { exportCaptures } from '../../../src/core/export/index';
import { OpenRouterClient } from '../../../src/core/upstream/openrouter';
import { parseTarget, runRequest } from '../../../src/core/upstream/run';
import { verdictOf } from '../../../src/core/watch/check';
import { openWatchList } from '../../../src/core/watch/list';
import { READ_TOOL, startOpenRouterEmulator, twoProviderEmulator } from '../../fixtures/openrouter-emulator';
import { rawRequest, startRig } from '../../unit/proxy/local-upstream';

const root = mkdtempSync(join(tmpdir(), 'tokenscope-watch-'));
const KEY = 'sk-or-v1-watchtest0000000000000000000000000000000000000000000000000';
const prevKey = process.env.OPENROUTER_API_KEY;
before(() => (process.env.OPENROUTER_API_KEY = KEY));
after(() => {
  rmSync(root, { recursive: true, force: true });
  if (prevKey === undefined) delete process.env.OPENROUTER_API_KEY;
  else process.env.OPENROUTER_API_KEY = prevKey;
});

const REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  stream: true,
  messages: [{ role: 'user', content: 'Read the README' }],
  tools: [READ_TOOL],
};

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const emulator = twoProviderEmulator;

/** Captures of the request on each provider while both are broken, as a re-run records them. */
async function brokenCaptures(dataDir: string): Promise<{ chutes: string; novita: string }> {
  const emu = await emulator('leak-content', 'truncated-args');
  const store = await openStore(dataDir);
  try {
    const openrouter = new OpenRouterClient({ baseUrl: emu.url, apiKey: KEY });
    const a = await runRequest(parseTarget('openrouter:chutes'), REQUEST, { store, openrouter });
    const b = await runRequest(parseTarget('openrouter:novita'), REQUEST, { store, openrouter });
    await store.idle();
    return { chutes: a.exchangeId!, novita: b.exchangeId! };
  } finally {
    await store.close();
    await emu.close();
  }
}

test('a case fixed on the emulator flips to fixed; a still-broken one makes watch run exit 1', async () => {
  const dataDir = join(root, 'a');
  const ids = await brokenCaptures(dataDir);
  const a = await cli('watch', 'add', ids.chutes, '--data-dir', dataDir);
  assert.equal(a.code, 0, a.err);
  assert.match(a.out, /^watching w1: moonshotai\/kimi-k2-0905 on openrouter:chutes, rules .*section-unclosed/);
  const b = await cli('watch', 'add', ids.novita, '--data-dir', dataDir);
  assert.equal(b.code, 0, b.err);
  assert.ok(!existsSync(join(dataDir, 'watch.json')), 'the list is in the capture database, not a file');
  assert.equal(statSync(join(dataDir, 'captures.db')).mode & 0o777, 0o600);

  // The provider behind w1 is fixed; w2's still cuts its arguments short.
  let emu = await emulator('correct', 'truncated-args');
  try {
    const r = await cli('watch', 'run', '--samples', '2', '--openrouter-url', emu.url, '--data-dir', dataDir);
    assert.equal(r.code, 1, r.err);
    assert.match(r.out, /^w1 {2}fixed .*0\/2 samples broke/m);
    assert.match(r.out, /^w2 {2}still broken .*2\/2 samples broke: .*args/m);
    assert.equal(emu.requests.filter((q) => q.path.endsWith('/chat/completions')).length, 4, '2 cases × 2 samples');
    for (const q of emu.requests) if (q.body?.provider) assert.equal(q.body.provider.allow_fallbacks, false, 'pinned, no fallbacks');
  } finally {
    await emu.close();
  }

  const list = openWatchList(dataDir);
  const w1 = list.get('w1')!;
  assert.equal(w1.history.at(-1)!.verdict, 'fixed');
  assert.ok(w1.fixedSince !== undefined && w1.fixedSince >= w1.lastBrokenAt);
  const w2 = list.get('w2')!;
  assert.equal(w2.history.at(-1)!.verdict, 'still-broken');
  assert.equal(w2.fixedSince, undefined);
  assert.ok(w2.lastBrokenAt > w2.firstBrokenAt);

  // Each sample is a capture linked to the case's capture.
  const store = await openStore(dataDir, { analyze: false });
  try {
    const linked = store.list().filter((x) => x.parentId === ids.chutes);
    assert.equal(linked.length, 2);
    assert.deepEqual(new Set(linked.map((x) => x.id)), new Set(w1.history[0].samples.map((s) => s.exchangeId)));
    assert.ok(linked.every((x) => x.target === 'openrouter:chutes' && x.servedProvider === 'Chutes'));
    assert.ok(!JSON.stringify(store.list()).includes(KEY), 'no key in the captures');
  } finally {
    await store.close();
  }

  const shown = await cli('watch', 'list', '--data-dir', dataDir);
  assert.match(shown.out, /^w1 .* fixed {2}\(first broken .*, last broken .*, fixed since /m);
  assert.match(shown.out, /^w2 .* still broken {2}\(/m);

  // Both fixed: exit 0, and w2's change of verdict is said. Then w1 breaks differently: exit 1, fixed-since cleared.
  emu = await emulator('bad-id', 'correct');
  try {
    const only2 = await cli('watch', 'run', 'w2', '--openrouter-url', emu.url, '--data-dir', dataDir, '--json');
    assert.equal(only2.code, 0, only2.err);
    const json = JSON.parse(only2.out) as { case: string; verdict: string; previous: string }[];
    assert.deepEqual(
      json.map((x) => [x.case, x.verdict, x.previous]),
      [['w2', 'fixed', 'still-broken']],
    );
    const again = await cli('watch', 'run', 'w1', '--openrouter-url', emu.url, '--data-dir', dataDir);
    assert.equal(again.code, 1);
    assert.match(again.out, /^w1 {2}broken differently .*kimi-call-id.*\(was fixed\)$/m);
    assert.equal(openWatchList(dataDir).get('w1')!.fixedSince, undefined);
  } finally {
    await emu.close();
  }
});

test('watch a repro bundle; bad input is one line and changes nothing', async () => {
  const dataDir = join(root, 'b');
  const ids = await brokenCaptures(dataDir);
  const store = await openStore(dataDir, { analyze: false });
  const bundle = join(root, 'case.tokenscope.json');
  try {
    writeFileSync(bundle, exportCaptures(store, [ids.chutes], 'bundle').text);
  } finally {
    await store.close();
  }
  const other = join(root, 'other');
  const r = await cli('watch', 'add', bundle, '--data-dir', other);
  assert.equal(r.code, 0, r.err);
  const c = openWatchList(other).get('w1')!;
  assert.equal(c.source, 'case.tokenscope.json');
  assert.equal(c.target, 'openrouter:chutes');

  const none = await cli('watch', 'add', 'nosuchid', '--data-dir', other);
  assert.equal(none.code, 2);
  assert.match(none.err, /^tokenscope watch: no capture with id "nosuchid"/);
  const unknown = await cli('watch', 'run', 'w9', '--data-dir', other);
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /no watched case "w9"/);
  assert.equal(openWatchList(other).list().length, 1);
});

test('verdicts: the same rule again, a different one, none', () => {
  const s = (errorRules: string[], ok = true) => ({ ok, errorRules });
  assert.equal(verdictOf(['section-unclosed'], [s([]), s(['section-unclosed'])]), 'still-broken');
  assert.equal(verdictOf(['section-unclosed'], [s(['args-json'])]), 'broken-differently');
  assert.equal(verdictOf(['section-unclosed'], [s([], false)]), 'broken-differently');
  assert.equal(verdictOf(['section-unclosed'], [s([]), s([])]), 'fixed');
  assert.equal(verdictOf(['section-unclosed'], []), 'unchecked');
});

test('an agent capture with no pin is watched on the provider that served it, by its OpenRouter slug', async () => {
  // NovitaAI's slug is "novita" (the emulator lists it so); the agent asked for no provider at all.
  const emu = await startOpenRouterEmulator({
    latencyMs: 0,
    chunkDelayMs: 0,
    providers: [{ slug: 'novita', name: 'NovitaAI', personality: 'leak-content' }],
  });
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  try {
    const sent = await rawRequest(`${rig.proxy.url}/openrouter/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(REQUEST),
    });
    assert.equal(sent.status, 200);
    await rig.store.idle();
    const agent = rig.store.list()[0];
    assert.equal(agent.servedProvider, 'NovitaAI');
    assert.equal(agent.pin, undefined, 'the agent pinned nothing');

    // The slug from the model's endpoint listing (the store did not know it yet).
    const a = await cli('watch', 'add', agent.id, '--data-dir', rig.dataDir, '--openrouter-url', emu.url);
    assert.equal(a.code, 0, a.err);
    assert.match(a.out, /^watching w1: moonshotai\/kimi-k2-0905 on openrouter:novita, rules .*section-unclosed/);
    assert.doesNotMatch(a.err, /guess/);
    assert.ok(emu.requests.some((q) => q.path.endsWith('/models/moonshotai/kimi-k2-0905/endpoints')));
    const r = await cli('watch', 'run', 'w1', '--openrouter-url', emu.url, '--data-dir', rig.dataDir);
    assert.equal(r.code, 1, `the pinned provider answered and is still broken: ${r.out} ${r.err}`);
    assert.match(r.out, /^w1 {2}still broken .*1\/1 sample broke/m);

    // No key to read the listing: the slug derived from the name, said to be a guess.
    delete process.env.OPENROUTER_API_KEY;
    try {
      const b = await cli('watch', 'add', agent.id, '--data-dir', join(rig.dataDir), '--openrouter-url', emu.url);
      assert.equal(b.code, 2, 'an --openrouter-url without a key is an error');
      const c = await cli('watch', 'add', agent.id, '--data-dir', rig.dataDir);
      assert.equal(c.code, 0, c.err);
      assert.match(c.out, /^watching w2: moonshotai\/kimi-k2-0905 on openrouter:novitaai,/);
      assert.match(c.err, /the slug in openrouter:novitaai is a guess, derived from the served provider's name "NovitaAI"/);
    } finally {
      process.env.OPENROUTER_API_KEY = KEY;
    }
  } finally {
    await rig.close();
    await emu.close();
  }
});
