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
      ...(i % 7 === 0 && {
        summary: {
          model: 'moonshotai/kimi-k2-0905',
          provider: 'Chutes',
          counts: { error: 1, warning: 0, info: 0 },
          rules: ['section-unclosed'],
        },
      }),
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

    assert.deepEqual(
      await ids([...d, '--broken']),
      want((x) => x.summary?.counts.error === 1),
    );
    assert.equal((await ids([...d, '--broken'])).length, 100);
    assert.deepEqual(
      await ids([...d, '--model', 'z-ai/glm-4.6']),
      want((x) => model(x) === 'z-ai/glm-4.6'),
    );
    assert.deepEqual(
      await ids([...d, '--provider', 'chutes']),
      want((x) => provider(x) === 'Chutes'),
    );
    assert.deepEqual(
      await ids([...d, '--rule', 'section-unclosed', '--provider', 'Chutes']),
      want((x) => x.summary?.rules.includes('section-unclosed') === true),
    );
    assert.deepEqual(await ids([...d, '--agent', 'claude-code', '--limit', '5']), want((x) => x.agent === 'claude-code').slice(0, 5));
    assert.deepEqual(
      await ids([...d, '--session', list[3].sessionId]),
      want((x) => x.sessionId === list[3].sessionId),
    );
    // Seeded one a second up to the seeding: the last 100 seconds of the command's clock. Its clock is read somewhere
    // between these two readings of ours, so the answer is every exchange since `after` - 100 s and some, newest
    // first, of those since `before` - 100 s (which of those it holds depends on the moment: seconds on a loaded machine).
    const before = Date.now();
    const recent = await ids([...d, '--since', '100s']);
    const after = Date.now();
    const surely = want((x) => x.startedAt >= after - 100_000);
    const atMost = want((x) => x.startedAt >= before - 100_000);
    assert.ok(
      recent.length >= surely.length && recent.length <= atMost.length,
      `${recent.length} in the last 100 s, between ${surely.length} and ${atMost.length}`,
    );
    assert.deepEqual(recent, atMost.slice(0, recent.length), 'the newest ones');
    assert.ok(recent.length > 0 && recent.length <= 100, `${recent.length} of ${N} (one a second)`);
    const until = new Date(list[N - 10].startedAt).toISOString();
    assert.deepEqual(
      await ids([...d, '--until', until]),
      list.slice(N - 10).map((x) => x.id),
    );
    assert.deepEqual(await ids([...d, '--model', 'no/such-model']), []);

    let err = '';
    assert.equal(await main(['captures', ...d, '--since', 'yesterday-ish'], { out: () => undefined, err: (t) => (err += t) }), 2);
    assert.match(err, /--since expects a duration \(30m, 1h, 2d\) or a date/);
  } finally {
    tmp.remove();
  }
});
