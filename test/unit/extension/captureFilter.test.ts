/** The Captures tree's filter: the `captures` flags parsed, shown, and run as the very query the CLI runs. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import type { CapturedExchange } from '../../../src/core/model';
import { filterDescription, filterQuery, filterText, parseFilter } from '../../../src/extension/captureFilter';
import { Command, ContextKey } from '../../../src/extension/contributions';
import { seedExchanges } from '../capture/db-helpers';
import { tempDir } from '../proxy/local-upstream';

const NOW = Date.parse('2026-12-01T12:00:00Z');

test('every flag of `captures` parses into the store query; relative times move with the clock', () => {
  const f = parseFilter(
    '--broken --model moonshotai/kimi-k2-0905 --provider=chutes --rule section-unclosed --agent opencode --session s12 --since 1h --until 2026-12-01T11:30:00Z --limit 20',
    NOW,
  )!;
  assert.deepEqual(filterQuery(f, NOW), {
    broken: true,
    model: 'moonshotai/kimi-k2-0905',
    provider: 'chutes',
    rule: 'section-unclosed',
    agent: 'opencode',
    session: 's12',
    since: NOW - 3_600_000,
    until: Date.parse('2026-12-01T11:30:00Z'),
    limit: 20,
  });
  assert.equal(filterQuery(f, NOW + 60_000).since, NOW - 3_600_000 + 60_000, '--since 1h is an hour before each refresh');
  assert.equal(parseFilter('   '), undefined, 'an empty filter clears it');
  assert.deepEqual(filterQuery(parseFilter('--agent "my agent"')!), { agent: 'my agent' }, 'quotes keep spaces');
});

test('a bad filter says what is wrong in one line', () => {
  const err = (s: string) => {
    try {
      parseFilter(s, NOW);
    } catch (e) {
      return (e as Error).message;
    }
    return assert.fail(`"${s}" was accepted`);
  };
  assert.match(err('--colour red'), /^unknown filter --colour; use --broken --model M/);
  assert.match(err('kimi'), /^"kimi" is not a filter/);
  assert.equal(err('--model'), '--model needs a value');
  assert.equal(err('--model --broken'), '--model needs a value');
  assert.match(err('--since yesterday'), /^--since expects a duration \(30m, 1h, 2d\) or a date/);
  assert.match(err('--limit 0'), /^--limit expects a whole number of at least 1/);
  assert.equal(err('--broken=yes'), '--broken takes no value');
});

test('the active filter is shown in the view description, and given back as flags to edit', () => {
  const f = parseFilter("--broken --agent 'claude code' --since 2h --limit 5", NOW)!;
  assert.equal(filterDescription(f), 'broken · agent claude code · since 2h · newest 5');
  assert.equal(filterText(f), '--broken --agent "claude code" --since 2h --limit 5');
  assert.deepEqual(parseFilter(filterText(f), NOW), f, 'round trip');
  assert.equal(filterDescription(undefined), undefined);
});

test('the tree filter returns what `captures` with the same flags prints', async () => {
  const tmp = tempDir();
  try {
    await (await openStore(tmp.dir, { analyze: false })).close();
    seedExchanges(
      tmp.dir,
      300,
      (i): Partial<CapturedExchange> => ({
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
      }),
    );
    const store = await openStore(tmp.dir, { readOnly: true });
    try {
      for (const flags of [
        '--broken',
        '--model z-ai/glm-4.6 --provider chutes',
        '--rule section-unclosed --agent opencode',
        '--since 2m',
        '--since 4m --until 2m --limit 7',
        '--session s2',
      ]) {
        let out = '';
        assert.equal(
          await main(['captures', '--json', '--data-dir', tmp.dir, ...flags.split(' ')], { out: (t) => (out += t), err: () => undefined }),
          0,
        );
        const cli = (JSON.parse(out) as CapturedExchange[]).map((x) => x.id);
        const tree = store.query(filterQuery(parseFilter(flags)!)).map((x) => x.id);
        assert.ok(cli.length > 0, `${flags} matches something`);
        assert.deepEqual(tree, cli, flags);
      }
    } finally {
      await store.close();
    }
  } finally {
    tmp.remove();
  }
});

test('package.json contributes the filter commands, in the view title and the palette', () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
  const commands = new Set((pkg.contributes.commands as { command: string }[]).map((c) => c.command));
  const title = pkg.contributes.menus['view/title'] as { command: string; when: string }[];
  for (const id of [Command.FilterCaptures, Command.ClearCaptureFilter]) {
    assert.ok(commands.has(id), `${id} is a command`);
    assert.ok(
      title.some((m) => m.command === id && m.when.includes('view == tokenscope.captures')),
      `${id} is in the Captures view title`,
    );
  }
  assert.match(
    title.find((m) => m.command === Command.ClearCaptureFilter)!.when,
    new RegExp(ContextKey.Filtered.replace('.', '\\.')),
    'Clear shows only while filtered',
  );
  const src = readFileSync(join(__dirname, '..', '..', '..', 'src', 'extension', 'extension.ts'), 'utf8');
  for (const key of ['FilterCaptures', 'ClearCaptureFilter'])
    assert.match(src, new RegExp(`reg\\(Command\\.${key},`), `${key} is registered`);
});
