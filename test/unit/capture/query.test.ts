/** `captures` filters: each flag narrows the list through the database's indexes; --json prints what matched. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import type { CapturedExchange } from '../../../src/core/model';
import { tempDir } from '../proxy/local-upstream';
import { seedExchanges } from './db-helpers';

async function ids(argv: string[]): Promise<string[]> {
  let out = '';
  const code = await main(['captures', '--json', ...argv], { out: (t) => (out += t), err: () => undefined });
  assert.equal(code, 0);
  return (JSON.parse(out) as CapturedExchange[]).map((x) => x.id);
}

test('captures --broken --model --provider --rule --agent --session --since --until --limit', async () => {
  const tmp = tempDir();
  try {
    await (await openStore(tmp.dir, { analyze: false })).close();
    const N = 700;
    const shape = (i: number): Partial<CapturedExchange> => ({
      requestModel: i % 2 ? 'moonshotai/kimi-k2-0905' : 'z-ai/glm-4.6',
      servedProvider: i % 5 === 0 ? 'Chutes' : 'Fireworks',
      ...(i % 7 === 0 && { summary: { model: 'moonshotai/kimi-k2-0905', provider: 'Chutes', counts: { error: 1, warning: 0, info: 0 }, rules: ['section-unclosed'] } }),
    });
    seedExchanges(tmp.dir, N, shape);
    const all = await openStore(tmp.dir, { readOnly: true });
    const list = all.list();
    await all.close();
    assert.equal(list.length, N);
    const want = (pred: (x: CapturedExchange) => boolean) => list.filter(pred).map((x) => x.id);
    const model = (x: CapturedExchange) => x.summary?.model ?? x.requestModel;
    const provider = (x: CapturedExchange) => x.summary?.provider ?? x.servedProvider;
    const d = ['--data-dir', tmp.dir];

    assert.deepEqual(await ids([...d, '--broken']), want((x) => x.summary?.counts.error === 1));
    assert.equal((await ids([...d, '--broken'])).length, 100);
    assert.deepEqual(await ids([...d, '--model', 'z-ai/glm-4.6']), want((x) => model(x) === 'z-ai/glm-4.6'));
    assert.deepEqual(await ids([...d, '--provider', 'chutes']), want((x) => provider(x) === 'Chutes'));
    assert.deepEqual(await ids([...d, '--rule', 'section-unclosed', '--provider', 'Chutes']), want((x) => x.summary?.rules.includes('section-unclosed') === true));
    assert.deepEqual(await ids([...d, '--agent', 'claude-code', '--limit', '5']), want((x) => x.agent === 'claude-code').slice(0, 5));
    assert.deepEqual(await ids([...d, '--session', list[3].sessionId]), want((x) => x.sessionId === list[3].sessionId));
    // Seeded one a second up to now: the last 100 seconds hold the newest ~100.
    const recent = await ids([...d, '--since', '100s']);
    assert.deepEqual(recent, want((x) => x.startedAt >= Date.now() - 100_000).slice(0, recent.length));
    assert.ok(recent.length >= 95 && recent.length <= 101, `${recent.length} in the last 100 s`);
    const until = new Date(list[N - 10].startedAt).toISOString();
    assert.deepEqual(await ids([...d, '--until', until]), list.slice(N - 10).map((x) => x.id));
    assert.deepEqual(await ids([...d, '--model', 'no/such-model']), []);

    let err = '';
    assert.equal(await main(['captures', ...d, '--since', 'yesterday-ish'], { out: () => undefined, err: (t) => (err += t) }), 2);
    assert.match(err, /--since expects a duration \(30m, 1h, 2d\) or a date/);
  } finally {
    tmp.remove();
  }
});
