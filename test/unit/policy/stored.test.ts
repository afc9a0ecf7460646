/**
 * Provider policies kept in the data dir (core/policy/stored.ts): written whole by rename under a lock (a stale lock
 * is broken, a live one waited for), followed live by `LivePolicies` at most every 250 ms, stored over file over
 * setting; and a variant (`:exacto`…) follows its base model's policy unless it has its own.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../../src/core/model';
import { baseModel, checkModelKey, checkSlug, policyFor, policyKeyFor, policyStage, type Policies } from '../../../src/core/policy/policy';
import { policySummary } from '../../../src/core/policy/describe';
import { LivePolicies, policyFilePath, readStoredPolicies, updateStoredPolicies } from '../../../src/core/policy/stored';
import { tempDir } from '../proxy/local-upstream';

const K2 = 'moonshotai/kimi-k2-0905';

test("a variant follows its base model's policy unless it has its own; a prefix comes after both", () => {
  assert.equal(baseModel(`${K2}:exacto`), K2);
  assert.equal(baseModel(`${K2}:thinking`), K2);
  assert.equal(baseModel(K2), K2);
  assert.equal(baseModel('meta-llama/llama-3.1-8b-instruct:free'), 'meta-llama/llama-3.1-8b-instruct');
  const p: Policies = { [K2]: { ignore: ['chutes'] }, 'moonshotai/*': { ignore: ['groq'] }, [`${K2}:nitro`]: { only: ['groq'] } };
  for (const v of ['exacto', 'floor', 'free', 'thinking', 'anything-else']) {
    assert.equal(policyKeyFor(p, `${K2}:${v}`), K2, v);
    assert.deepEqual(policyFor(p, `${K2}:${v}`), { ignore: ['chutes'] });
  }
  assert.deepEqual(policyFor(p, `${K2}:nitro`), { only: ['groq'] }, 'its own policy wins');
  assert.equal(policyKeyFor(p, 'moonshotai/kimi-k2.5:exacto'), 'moonshotai/*');
  assert.equal(policyKeyFor({ [K2]: {} }, 'moonshotai/kimi-k2-0905-other'), undefined, 'a longer id is not a variant');
});

test("the proxy stage gives a variant its base model's provider object and records which policy applied", () => {
  const stage = policyStage(() => ({ [K2]: { ignore: ['chutes'] } }));
  const init = { method: 'POST', route: 'openrouter', upstreamUrl: 'https://openrouter.ai/api' } as Parameters<typeof stage.wants>[0];
  assert.equal(stage.wants(init), true);
  const out = stage.apply(init, Buffer.from(JSON.stringify({ model: `${K2}:exacto`, messages: [] })));
  assert.ok(out && typeof out === 'object' && 'body' in out);
  const { body, annotate } = out as { body: Buffer; annotate: { policy: Parameters<typeof policySummary>[0] } };
  assert.deepEqual(JSON.parse(body.toString()).provider, { ignore: ['chutes'] });
  assert.equal(annotate.policy.key, K2);
  assert.match(
    policySummary(annotate.policy),
    /^moonshotai\/kimi-k2-0905:exacto \(the policy of moonshotai\/kimi-k2-0905\): provider \{"ignore":\["chutes"\]\}/,
  );
  const own = stage.apply(init, Buffer.from(JSON.stringify({ model: K2 }))) as { annotate: { policy: { key?: string } } };
  assert.equal(own.annotate.policy.key, undefined, "the model's own policy: no key recorded");
});

test('model ids and slugs are checked in one line', () => {
  assert.equal(checkModelKey(` ${K2}:exacto `), `${K2}:exacto`);
  assert.equal(checkModelKey('moonshotai/*'), 'moonshotai/*');
  assert.throws(
    () => checkModelKey('kimi'),
    (e: Error) => e instanceof UserError && /^kimi is not an OpenRouter model id/.test(e.message),
  );
  assert.throws(() => checkModelKey('moon*shot/*'), /a prefix key has one \*/);
  assert.equal(checkSlug('deepinfra/fp4', '--order'), 'deepinfra/fp4');
  assert.throws(
    () => checkSlug('Atlas Cloud', '--ignore'),
    (e: Error) => e.message === '--ignore "Atlas Cloud" is not a provider slug (a slug is lower case, without spaces: atlas-cloud?)',
  );
});

test('a change is written whole, 0600, sorted, and read back; a malformed file is refused and left as it is', async () => {
  const tmp = tempDir();
  const dir = join(tmp.dir, 'data');
  try {
    await updateStoredPolicies(dir, (p) => ({ ...p, 'z/model': { ignore: ['a'] } }));
    const { before, after } = await updateStoredPolicies(dir, (p) => ({ ...p, [K2]: { order: ['b'], allow_fallbacks: false } }));
    assert.deepEqual(before, { 'z/model': { ignore: ['a'] } });
    assert.deepEqual(Object.keys(after), ['z/model', K2]);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(policyFilePath(dir), 'utf8'))), [K2, 'z/model'], 'the file is sorted');
    assert.equal(statSync(policyFilePath(dir)).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(readStoredPolicies(dir), after);

    writeFileSync(policyFilePath(dir), '{"x/y": {"ignore": "chutes"}}');
    await assert.rejects(
      updateStoredPolicies(dir, (p) => ({ ...p, [K2]: {} })),
      (e: Error) => e instanceof UserError && e.message === `${policyFilePath(dir)}: x/y.ignore must be a list of provider names`,
    );
    assert.equal(readFileSync(policyFilePath(dir), 'utf8'), '{"x/y": {"ignore": "chutes"}}', 'nothing written');
  } finally {
    tmp.remove();
  }
});

test('a lock left by a process that is gone is broken; one a live process holds is waited for, then one line', async () => {
  const tmp = tempDir();
  const lock = `${policyFilePath(tmp.dir)}.lock`;
  try {
    // A pid that is not running: the highest pid is far above any real one in a test container.
    writeFileSync(lock, JSON.stringify({ pid: 2 ** 22 - 1, token: 'gone', at: Date.now() }));
    await updateStoredPolicies(tmp.dir, () => ({ [K2]: { ignore: ['a'] } }), 2000);
    assert.deepEqual(readStoredPolicies(tmp.dir), { [K2]: { ignore: ['a'] } });
    assert.throws(() => statSync(lock), /ENOENT/, 'the lock is released');

    writeFileSync(lock, JSON.stringify({ pid: process.ppid, token: 'alive', at: Date.now() }));
    const t0 = Date.now();
    await assert.rejects(
      updateStoredPolicies(tmp.dir, () => ({}), 300),
      (e: Error) =>
        e instanceof UserError &&
        new RegExp(
          `^the provider policies in .* were not changed: process ${process.ppid} has held their lock for over 0.3 s; try again$`,
        ).test(e.message),
    );
    assert.ok(Date.now() - t0 < 5000);
    assert.deepEqual(readStoredPolicies(tmp.dir), { [K2]: { ignore: ['a'] } }, 'nothing lost');
  } finally {
    tmp.remove();
  }
});

test('LivePolicies: a change is seen on the first get() 250 ms after the last look, not before; stored > file > setting', async () => {
  const tmp = tempDir();
  let now = 1000;
  const file = join(tmp.dir, 'policy.json');
  writeFileSync(file, JSON.stringify({ [K2]: { ignore: ['from-file'] }, 'a/b': { ignore: ['file-ab'] } }));
  const warnings: string[] = [];
  let changes = 0;
  const setting: Policies = { 'c/d': { ignore: ['setting-cd'] }, 'a/b': { ignore: ['setting-ab'] } };
  try {
    const live = new LivePolicies({
      dataDir: tmp.dir,
      file,
      base: () => setting,
      now: () => now,
      onWarning: (m) => warnings.push(m),
      onChange: () => changes++,
    });
    assert.deepEqual(live.get(), { 'c/d': { ignore: ['setting-cd'] }, 'a/b': { ignore: ['file-ab'] }, [K2]: { ignore: ['from-file'] } });
    const first = live.get();
    assert.equal(live.get(), first, 'the same object while nothing changed');

    await updateStoredPolicies(tmp.dir, () => ({ [K2]: { ignore: ['stored'] } }));
    now += 100;
    assert.deepEqual(live.get()[K2], { ignore: ['from-file'] }, 'not looked at again within 250 ms');
    now += 150;
    assert.deepEqual(live.get()[K2], { ignore: ['stored'] }, "the stored policy wins over the file's");
    assert.equal(changes, 1);
    assert.deepEqual(live.sources(), { 'c/d': 'setting', 'a/b': 'file', [K2]: 'stored' });

    // The file is edited in place: seen too.
    writeFileSync(file, JSON.stringify({ 'a/b': { ignore: ['file-ab-2'] } }));
    now += 250;
    assert.deepEqual(live.get()['a/b'], { ignore: ['file-ab-2'] });
    assert.equal(live.get()['c/d'] !== undefined, true);

    // A malformed stored file: one warning, the policies read before stay.
    writeFileSync(policyFilePath(tmp.dir), '{not json');
    now += 250;
    assert.deepEqual(live.get()[K2], { ignore: ['stored'] });
    now += 250;
    live.get();
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0], /policies\.json are not JSON: .*; the stored provider policies read before stay in force until it is fixed$/);

    // Removed: no stored policy any more.
    await updateStoredPolicies(tmp.dir, () => ({})).catch(() => undefined); // refused: the file is malformed
    writeFileSync(policyFilePath(tmp.dir), '{}');
    now += 250;
    assert.deepEqual(live.get()[K2], undefined);
  } finally {
    tmp.remove();
  }
});

test('LivePolicies with a bad --policy file stops at once, in one line', () => {
  assert.throws(
    () => new LivePolicies({ file: '/nonexistent/policy.json' }),
    (e: Error) => e instanceof UserError && e.message === 'cannot read the policy file /nonexistent/policy.json: no such file',
  );
});
