/**
 * Re-run and compare say what repair mode would have delivered, computed by the proxy's own repair over the sample's
 * upstream bytes: a leaked Kimi call as a structured `read` call (finish `tool_calls`), a call cut short inside
 * leaked markup withheld (finish `length`, never a call), a healthy provider nothing. CLI text and `--json`, and the
 * compare view's rows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import { compareProviders } from '../../../src/core/upstream/compare';
import { OpenRouterClient } from '../../../src/core/upstream/openrouter';
import { compareView } from '../../../src/extension/compare/matrix';
import { READ_TOOL, startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { rawRequest, startRig, tempDir } from '../../unit/proxy/local-upstream';

const K2 = 'moonshotai/kimi-k2-0905';
const PROVIDERS = [
  { slug: 'chutes', name: 'Chutes', personality: 'leak-content' as const },
  { slug: 'novita', name: 'Novita', personality: 'leak-truncated' as const },
  { slug: 'fireworks', name: 'Fireworks', personality: 'correct' as const },
];

async function cli(argv: string[]) {
  const out: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => out.push(t) });
  return { code, text: out.join('\n') };
}

test('rerun and compare: what repair mode would have delivered, in text and --json', async () => {
  const emu = await startOpenRouterEmulator({ providers: PROVIDERS });
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = 'sk-or-v1-preview';
  try {
    const body = JSON.stringify({
      model: K2,
      stream: true,
      messages: [{ role: 'user', content: 'read a' }],
      tools: [READ_TOOL],
      provider: { only: ['chutes'] },
    });
    const res = await rawRequest(`${rig.proxy.url}/openrouter/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-v1-preview' },
      body,
    });
    assert.match(res.body.toString(), /tool_calls_section_begin/, 'without repair the agent got the markup');
    await rig.store.idle();
    const id = rig.store.list()[0].id;
    const flags = ['--openrouter-url', `${emu.url}/api`, '--data-dir', rig.dataDir];

    const leaky = await cli(['rerun', id, '--target', 'openrouter:chutes', ...flags]);
    assert.equal(leaky.code, 0, leaky.text);
    assert.match(
      leaky.text,
      /^repair mode \(serve --repair\) would have delivered: 1 call delivered as tool_calls, \d+ chars of markup removed from content, finish_reason stop → tool_calls; calls: read, finish_reason tool_calls$/m,
    );
    assert.match(leaky.text, /^ {2}tool call: read functions\.read:0 \{"path": ?"[^"]*"\}$/m);
    const json = JSON.parse((await cli(['rerun', id, '--target', 'openrouter:chutes', ...flags, '--json'])).text);
    assert.equal(json.repairWouldDeliver.finishReason, 'tool_calls');
    assert.deepEqual(
      json.repairWouldDeliver.calls.map((c: { id: string; name: string }) => [c.id, c.name]),
      [['functions.read:0', 'read']],
    );
    assert.ok(JSON.parse(json.repairWouldDeliver.calls[0].arguments).path !== undefined, 'whole JSON arguments');

    const cut = JSON.parse((await cli(['rerun', id, '--target', 'openrouter:novita', ...flags, '--json'])).text);
    assert.equal(cut.finishReason, 'length');
    assert.deepEqual(cut.repairWouldDeliver.calls, [], 'a truncated call is never delivered as a call');
    assert.equal(cut.repairWouldDeliver.record.calls[0].status, 'withheld');
    assert.match(cut.repairWouldDeliver.summary, /^1 truncated call withheld/);

    const healthy = await cli(['rerun', id, '--target', 'openrouter:fireworks', ...flags]);
    assert.doesNotMatch(healthy.text, /would have delivered/, 'nothing to repair on a healthy answer');
    assert.equal(
      JSON.parse((await cli(['rerun', id, '--target', 'openrouter:fireworks', ...flags, '--json'])).text).repairWouldDeliver,
      undefined,
    );

    const compared = await cli(['compare', id, '--samples', '2', ...flags]);
    assert.equal(compared.code, 0, compared.text);
    assert.match(
      compared.text,
      /^what repair mode \(serve --repair\) would have delivered:\n {2}chutes: 2 of 2 samples: 2 calls delivered as tool_calls \(read ×2\)\n {2}novita: 2 of 2 samples: 2 truncated calls withheld$/m,
    );
    const cj = JSON.parse((await cli(['compare', id, '--samples', '1', ...flags, '--json'])).text);
    const by = (slug: string) => cj.providers.find((p: { slug: string }) => p.slug === slug);
    assert.equal(by('chutes').repairWouldDeliver, '1 of 1 sample: 1 call delivered as tool_calls (read ×1)');
    assert.equal(by('chutes').samples[0].outcome.repairWouldDeliver.calls[0].name, 'read');
    assert.equal(by('fireworks').repairWouldDeliver, undefined);
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    await rig.close();
    await emu.close();
  }
});

test('the compare view shows what repair would have delivered per provider and per sample', async () => {
  const emu = await startOpenRouterEmulator({ providers: PROVIDERS });
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    const request = { model: K2, stream: true, messages: [{ role: 'user', content: 'read a' }], tools: [READ_TOOL] };
    const report = await compareProviders({
      request,
      client: new OpenRouterClient({ baseUrl: `${emu.url}/api`, apiKey: 'sk-or-v1-preview' }),
      samples: 1,
      store,
      generationStats: false,
    });
    const view = compareView({
      model: K2,
      reference: 'fireworks',
      samples: 1,
      concurrency: 4,
      state: 'done',
      progress: { done: 3, total: 3, running: 0, failed: 0 },
      providers: report.providers.map((p) => ({ slug: p.slug, endpoint: p.endpoint })),
      results: new Map(report.providers.map((p) => [p.slug, p])),
    });
    const row = (slug: string) => view.rows.find((r) => r.slug === slug)!;
    assert.equal(row('chutes').repair, '1 of 1 sample: 1 call delivered as tool_calls (read ×1)');
    assert.match(row('chutes').samples[0].repair!, /^1 call delivered as tool_calls, .*; calls: read$/);
    assert.equal(row('novita').repair, '1 of 1 sample: 1 truncated call withheld');
    assert.equal(row('fireworks').repair, undefined);
    assert.equal(row('fireworks').samples[0].repair, undefined);
  } finally {
    await store.close();
    await emu.close();
    tmp.remove();
  }
});
