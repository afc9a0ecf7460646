/**
 * `tokenscope policy set|list|rm`: what a user types and reads. Bad input (a display name for a slug, a model id that
 * is not one, contradicting or misplaced flags, removing a policy that is not stored) is one line and exit 2, and
 * writes nothing; a slug OpenRouter's stored listings do not name is a warning, and without a listing the warning says
 * the slugs could not be checked.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { main } from '../../../../src/cli/main';
import { openStore } from '../../../../src/core/capture/store';
import { policyFilePath } from '../../../../src/core/policy/stored';
import { tempDir } from '../../proxy/local-upstream';

const K2 = 'moonshotai/kimi-k2-0905';

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n'), errLines: err };
}

test('set, list, list --json and rm, as a user runs them; a variant is pointed at its base model', async () => {
  const tmp = tempDir();
  const d = ['--data-dir', tmp.dir];
  try {
    let r = await run([
      'policy',
      'set',
      K2,
      '--ignore',
      'chutes,groq',
      '--ignore',
      'chutes',
      '--order',
      'fireworks',
      '--no-fallbacks',
      ...d,
    ]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.split('\n')[0], `${K2}: ignore chutes, groq · order fireworks · no fallbacks`);
    assert.match(r.out, /its variants \(moonshotai\/kimi-k2-0905:exacto, :nitro, :free…\) follow it unless they have their own/);
    assert.deepEqual(r.errLines, [
      `tokenscope policy: warning: the slugs could not be checked: no OpenRouter provider listing is stored in ${tmp.dir} yet (\`tokenscope compare --list --model MODEL\` reads one, with OPENROUTER_API_KEY set)`,
    ]);
    assert.deepEqual(JSON.parse(readFileSync(policyFilePath(tmp.dir), 'utf8')), {
      [K2]: { ignore: ['chutes', 'groq'], order: ['fireworks'], allow_fallbacks: false },
    });

    r = await run(['policy', 'set', K2, '--only', 'deepinfra/fp4', ...d]);
    assert.equal(
      r.out.split('\n')[0],
      `${K2}: only deepinfra/fp4 (was: ignore chutes, groq · order fireworks · no fallbacks)`,
      'set replaces the policy',
    );
    r = await run(['policy', 'set', `${K2}:nitro`, '--only', 'groq', ...d]);
    assert.match(
      r.out,
      /^ {2}a variant: requests for moonshotai\/kimi-k2-0905:nitro use this policy, not the one of moonshotai\/kimi-k2-0905$/m,
    );
    r = await run(['policy', 'rm', `${K2}:nitro`, ...d]);
    assert.equal(r.code, 0);
    r = await run(['policy', 'set', 'qwen/*', '--allow-fallbacks', ...d]);
    assert.equal(r.code, 0);

    r = await run(['policy', 'list', ...d]);
    assert.equal(r.code, 0);
    assert.deepEqual(r.out.split('\n').slice(0, 2), [`${K2}  only deepinfra/fp4`, 'qwen/*                   fallbacks allowed']);
    r = await run(['policy', 'list', '--json', ...d]);
    assert.deepEqual(JSON.parse(r.out), { [K2]: { only: ['deepinfra/fp4'] }, 'qwen/*': { allow_fallbacks: true } });

    r = await run(['policy', 'rm', `${K2}:exacto`, ...d]);
    assert.equal(r.code, 2);
    assert.deepEqual(r.errLines, [`tokenscope policy: no stored provider policy for "${K2}:exacto": it follows the policy of ${K2}`]);
    r = await run(['policy', 'rm', K2, ...d]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^moonshotai\/kimi-k2-0905: policy removed \(was: only deepinfra\/fp4\)/);
    r = await run(['policy', 'rm', K2, ...d]);
    assert.deepEqual([r.code, r.errLines], [2, [`tokenscope policy: no stored provider policy for "${K2}" (stored: qwen/*)`]]);
    r = await run(['policy', 'list', '--json', ...d]);
    assert.deepEqual(JSON.parse(r.out), { 'qwen/*': { allow_fallbacks: true } });
  } finally {
    tmp.remove();
  }
});

test('bad slugs, model ids and flags: one line, exit 2, nothing written', async () => {
  const tmp = tempDir();
  const d = ['--data-dir', tmp.dir];
  try {
    const cases: [string[], string][] = [
      [
        ['set', K2, '--ignore', 'Moonshot AI'],
        '--ignore "Moonshot AI" is not a provider slug (a slug is lower case, without spaces: moonshot-ai?)',
      ],
      [['set', K2, '--order', 'a,,b'], '--order has an empty slug in "a,,b"'],
      [
        ['set', 'kimi-k2', '--ignore', 'chutes'],
        'kimi-k2 is not an OpenRouter model id (author/model, e.g. moonshotai/kimi-k2-0905, or a prefix such as moonshotai/*)',
      ],
      [
        ['set', K2],
        'policy set needs at least one of --ignore, --order, --only, --allow-fallbacks, --no-fallbacks (`tokenscope policy rm MODEL` removes a policy)',
      ],
      [['set'], 'policy set needs a MODEL (an OpenRouter model id such as moonshotai/kimi-k2-0905); see --help'],
      [
        ['set', K2, '--ignore', 'chutes', 'groq'],
        'unexpected argument "groq": give several slugs comma-separated (--ignore a,b) or repeat the flag; see --help',
      ],
      [['set', K2, '--allow-fallbacks', '--no-fallbacks'], '--allow-fallbacks and --no-fallbacks contradict each other: give one'],
      [['set', K2, '--ignore', 'chutes', '--only', 'chutes'], 'chutes is both ignored and in --only: give it to one'],
      [['set', K2, '--ignroe', 'chutes'], 'unknown option --ignroe (did you mean --ignore?); see --help'],
      [['set', K2, '--ignore'], '--ignore needs a value'],
      [['list', '--ignore', 'chutes'], '--ignore belongs to `policy set`; see --help'],
      [['rm', K2, '--json'], '--json belongs to `policy list`; see --help'],
      [['rm', 'no/such-model'], `no stored provider policy for "no/such-model" (none is stored in ${tmp.dir})`],
      [['frobnicate'], 'unknown policy command "frobnicate" (set, list or rm); see --help'],
      [[], 'policy needs set, list or rm; see --help'],
    ];
    for (const [argv, message] of cases) {
      const r = await run(['policy', ...argv, ...d]);
      assert.deepEqual([r.code, r.errLines], [2, [`tokenscope policy: ${message}`]], argv.join(' '));
      assert.equal(r.out, '');
    }
    assert.equal(existsSync(policyFilePath(tmp.dir)), false, 'nothing was written');
  } finally {
    tmp.remove();
  }
});

test('slugs are checked against the listings the store keeps: an unknown one is a warning, and set anyway', async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  store.learnProviderSlugs([
    { name: 'Chutes', slug: 'chutes', source: 'endpoints', at: 1 },
    { name: 'DeepInfra', slug: 'deepinfra', source: 'endpoints', at: 1 },
  ]);
  await store.close();
  const d = ['--data-dir', tmp.dir];
  try {
    let r = await run(['policy', 'set', K2, '--ignore', 'chutes', '--order', 'deepinfra/fp4', ...d]);
    assert.equal(r.code, 0);
    assert.equal(r.err, '', 'known slugs: no warning');
    assert.equal(r.out.split('\n')[0], `${K2}: ignore chutes · order deepinfra/fp4 (DeepInfra)`);
    r = await run(['policy', 'set', K2, '--ignore', 'chutez', ...d]);
    assert.equal(r.code, 0);
    assert.deepEqual(r.errLines, [
      `tokenscope policy: warning: chutez is not a provider slug in OpenRouter's listings stored in ${tmp.dir}; it was set anyway (OpenRouter ignores a slug it does not know)`,
    ]);
    r = await run(['policy', 'list', ...d]);
    assert.equal(r.out, `${K2}  ignore chutez  (not in OpenRouter's listings: chutez)`);
  } finally {
    tmp.remove();
  }
});

test('policy --help says where policies are kept and how variants and slugs work', async () => {
  const r = await run(['policy', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.out, /^usage: tokenscope policy set MODEL/);
  assert.match(r.out, /DIR\/policies\.json/);
  assert.match(r.out, /follows its base model's policy unless it has\nits own/);
  assert.match(r.out, /Exit status: 0 done, 2 bad usage/);
});
