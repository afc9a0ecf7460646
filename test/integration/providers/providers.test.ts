/** `tokenscope providers`: the scorecard over real captures made through the proxy against the emulator. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import type { ScorecardRow } from '../../../src/core/providers/scorecard';
import { READ_TOOL, startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { rawRequest, startRig, tempDir } from '../../unit/proxy/local-upstream';
import { openStore } from '../../../src/core/capture/store';
import { recordExchange } from '../../helpers/exchanges';

async function cli(argv: string[]) {
  const out: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => out.push(t) });
  return { code, text: out.join('\n') };
}

test("per model × served provider: tool turns, share broken, top rules, TTFT, last seen, and the last compare run's verdict", async () => {
  const emu = await startOpenRouterEmulator({
    providers: [
      { slug: 'chutes', name: 'Chutes', personality: 'leak-content', ttftMs: 150 },
      { slug: 'fireworks', name: 'Fireworks', personality: 'correct', ttftMs: 5 },
    ],
  });
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  try {
    const send = (only: string, tools: boolean, model = 'moonshotai/kimi-k2-0905') =>
      rawRequest(`${rig.proxy.url}/openrouter/v1/chat/completions`, {
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-v1-x' },
        body: JSON.stringify({
          model,
          stream: true,
          messages: [{ role: 'user', content: 'read it' }],
          ...(tools && { tools: [READ_TOOL] }),
          provider: { only: [only] },
        }),
      });
    for (const [only, tools] of [
      ['chutes', true],
      ['chutes', true],
      ['chutes', true],
      ['fireworks', true],
      ['fireworks', true],
      ['fireworks', false],
    ] as const) {
      assert.equal((await send(only, tools)).status, 200);
    }
    assert.equal((await send('chutes', true, 'moonshotai/kimi-k2.5')).status, 200);
    await rig.store.idle();
    // The last comparison is the last `compare` run's verdict (stored by compare), never a re-run sample.
    const leaky = rig.store.list().find((x) => x.servedProvider === 'Chutes' && x.requestModel === 'moonshotai/kimi-k2-0905')!;
    const orUrl = ['--openrouter-url', `${emu.url}/api`, '--data-dir', rig.dataDir];
    const saved = process.env.OPENROUTER_API_KEY;
    process.env.OPENROUTER_API_KEY = 'sk-or-v1-x';
    try {
      const rerun = await cli(['rerun', leaky.id, '--target', 'openrouter:chutes', ...orUrl]);
      assert.equal(rerun.code, 0, rerun.text);
      assert.match(rerun.text, /error section-unclosed/, 'the re-run on Chutes is broken');
      let rows: ScorecardRow[] = JSON.parse((await cli(['providers', '--data-dir', rig.dataDir, '--json'])).text);
      assert.equal(
        rows.find((r) => r.provider === 'Chutes' && r.model === 'moonshotai/kimi-k2-0905')!.lastComparison,
        undefined,
        'a re-run is not a comparison',
      );
      const compared = await cli(['compare', leaky.id, '--providers', 'chutes,fireworks', '--samples', '2', ...orUrl, '--json']);
      assert.equal(compared.code, 0, compared.text);
      rows = JSON.parse((await cli(['providers', '--data-dir', rig.dataDir, '--json'])).text);
      assert.equal(rows.find((r) => r.provider === 'Fireworks' && r.model === 'moonshotai/kimi-k2-0905')!.lastComparison?.verdict, 'clean');
      // A later comparison of Fireworks alone replaces Fireworks' verdict and leaves Chutes' alone.
      assert.equal((await cli(['compare', leaky.id, '--providers', 'fireworks', '--samples', '1', ...orUrl, '--json'])).code, 0);
    } finally {
      if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
      else process.env.OPENROUTER_API_KEY = saved;
    }

    const { code, text } = await cli(['providers', '--data-dir', rig.dataDir, '--json']);
    assert.equal(code, 0, text);
    const rows: ScorecardRow[] = JSON.parse(text);
    const k2 = rows.filter((r) => r.model === 'moonshotai/kimi-k2-0905');
    assert.deepEqual(
      k2.map((r) => r.provider),
      ['Chutes', 'Fireworks'],
      'the broken provider first',
    );
    assert.deepEqual(
      k2.map((r) => [r.slug, r.slugKnown]),
      [
        ['chutes', true],
        ['fireworks', true],
      ],
      'slugs from the endpoint listing compare stored',
    );
    const [chutes, fireworks] = k2;
    assert.deepEqual(
      [chutes.exchanges, chutes.toolTurns, chutes.brokenTurns, chutes.brokenShare],
      [3, 3, 3, 1],
      're-runs and comparison samples are not agent turns',
    );
    assert.ok(
      chutes.topRules.some((t) => t.rule === 'section-unclosed' && t.turns === 3),
      JSON.stringify(chutes.topRules),
    );
    assert.equal(chutes.lastComparison?.verdict, 'broken');
    assert.ok(chutes.lastComparison!.rules.includes('section-unclosed'));
    assert.deepEqual(
      [chutes.lastComparison!.slug, chutes.lastComparison!.samples, chutes.lastComparison!.broken, chutes.lastComparison!.parentId],
      ['chutes', 2, 2, leaky.id],
    );
    assert.deepEqual(
      [fireworks.exchanges, fireworks.toolTurns, fireworks.brokenTurns, fireworks.brokenShare, fireworks.topRules],
      [3, 2, 0, 0, []],
    );
    assert.deepEqual(
      [fireworks.lastComparison?.verdict, fireworks.lastComparison?.samples, fireworks.lastComparison?.rules],
      ['clean', 1, []],
      'the later run',
    );
    assert.ok(fireworks.lastComparison!.at > chutes.lastComparison!.at);
    assert.ok(chutes.ttftMsP50! >= 140 && fireworks.ttftMsP50! < chutes.ttftMsP50!, `${chutes.ttftMsP50} vs ${fireworks.ttftMsP50}`);
    assert.ok(Math.abs(chutes.lastSeen - Date.now()) < 60_000);

    const table = await cli(['providers', '--data-dir', rig.dataDir, '--model', 'moonshotai/kimi-k2.5']);
    assert.match(table.text, /^MODEL +PROVIDER +SLUG +TOOL TURNS +BROKEN +TOP RULES +TTFT p50 +LAST SEEN +LAST COMPARISON$/m);
    assert.match(table.text, /moonshotai\/kimi-k2\.5 +Chutes +chutes +1 +100% \(1\) +.*section-unclosed ×1/);
    assert.doesNotMatch(table.text, /derived from the provider's name/, 'compare read the listing: no slug is a guess');
    assert.doesNotMatch(table.text, /kimi-k2-0905/);
    assert.match(
      (await cli(['providers', '--data-dir', rig.dataDir, '--since', '2999-01-01'])).text,
      /^no captured exchanges since 2999-01-01 in /,
    );
    assert.equal((await cli(['providers', '--data-dir', rig.dataDir, '--since', 'soon'])).code, 2);
  } finally {
    await rig.close();
    await emu.close();
  }
});

test('a provider no listing has named: its slug derived from the name, marked with ? and said under the table', async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  const response = JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: 'moonshotai/kimi-k2-0905',
    provider: 'NovitaAI',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
  });
  await recordExchange(store, {
    request: { model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: 'hi' }], tools: [READ_TOOL] },
    response,
    annotate: { servedProvider: 'NovitaAI' },
  });
  await store.close();
  try {
    const table = await cli(['providers', '--data-dir', tmp.dir]);
    assert.equal(table.code, 0, table.text);
    assert.match(table.text, /moonshotai\/kimi-k2-0905 +NovitaAI +novitaai\? +1 /);
    assert.match(table.text, /^\? a slug derived from the provider's name/m);
    const rows: ScorecardRow[] = JSON.parse((await cli(['providers', '--data-dir', tmp.dir, '--json'])).text);
    assert.deepEqual(
      rows.map((r) => [r.provider, r.slug, r.slugKnown]),
      [['NovitaAI', 'novitaai', false]],
    );
  } finally {
    tmp.remove();
  }
});
