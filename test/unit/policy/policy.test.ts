import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkPolicies, loadPolicyFile, mergeProvider, policyFor, policyHonoured } from '../../../src/core/policy/policy';

test('merge: ignore is the union, order puts the policy first, only intersects, other agent fields stay', () => {
  const agent = { ignore: ['Groq'], order: ['chutes', 'fireworks'], only: ['fireworks', 'novita'], sort: 'price', quantizations: ['fp8'] };
  assert.deepEqual(
    mergeProvider(agent, { ignore: ['chutes', 'groq'], order: ['novita'], only: ['novita', 'together'], allow_fallbacks: false }),
    {
      ignore: ['Groq', 'chutes'],
      order: ['novita', 'chutes', 'fireworks'],
      only: ['novita'],
      sort: 'price',
      quantizations: ['fp8'],
      allow_fallbacks: false,
    },
  );
  assert.deepEqual(
    mergeProvider({ only: ['chutes'] }, { only: ['fireworks'] }),
    { only: ['fireworks'] },
    'no shared provider: the policy decides',
  );
  assert.deepEqual(mergeProvider(undefined, { ignore: ['chutes'] }), { ignore: ['chutes'] });
});

test('lookup: the exact model id first, else the longest prefix*', () => {
  const p = checkPolicies(
    { 'moonshotai/*': { ignore: ['a'] }, 'moonshotai/kimi-k2*': { ignore: ['b'] }, 'moonshotai/kimi-k2-0905': { ignore: ['c'] } },
    'test',
  );
  assert.deepEqual(policyFor(p, 'moonshotai/kimi-k2-0905'), { ignore: ['c'] });
  assert.deepEqual(policyFor(p, 'moonshotai/kimi-k2.5'), { ignore: ['b'] });
  assert.deepEqual(policyFor(p, 'moonshotai/other'), { ignore: ['a'] });
  assert.equal(policyFor(p, 'qwen/qwen3-coder'), undefined);
});

test('bad policies are one clear line naming the file and the field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-policy-'));
  try {
    const file = join(dir, 'p.json');
    writeFileSync(file, '{"m": {"ignore": "chutes"}}');
    assert.throws(() => loadPolicyFile(file), { message: `${file}: m.ignore must be a list of provider names` });
    writeFileSync(file, '{"m": {"avoid": ["x"]}}');
    assert.throws(() => loadPolicyFile(file), /m\.avoid is not a policy field/);
    writeFileSync(file, '{nope');
    assert.throws(() => loadPolicyFile(file), /is not JSON/);
    assert.throws(() => loadPolicyFile(join(dir, 'missing.json')), /cannot read the policy file .*: no such file$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('honoured: the served provider is not ignored and is among only', () => {
  const rec = (sent: Record<string, unknown>) => ({ model: 'm', policy: {}, sent });
  assert.equal(policyHonoured(rec({ ignore: ['chutes'] }), 'Chutes'), false);
  assert.equal(policyHonoured(rec({ ignore: ['chutes'] }), 'Fireworks'), true);
  assert.equal(policyHonoured(rec({ only: ['atlas-cloud'] }), 'AtlasCloud'), true);
  assert.equal(policyHonoured(rec({ only: ['fireworks'] }), 'Novita'), false);
  assert.equal(policyHonoured(rec({ ignore: ['x'] }), undefined), undefined);
  // With the served name's slug known, slugs are compared exactly: a name-alike is not a match, a variant tag is.
  assert.equal(policyHonoured(rec({ ignore: ['moonshotai'] }), 'Moonshot AI', 'moonshotai'), false);
  assert.equal(policyHonoured(rec({ ignore: ['deepinfra/fp4'] }), 'DeepInfra', 'deepinfra'), false);
  assert.equal(policyHonoured(rec({ only: ['together'] }), 'Together AI', 'together'), true);
  assert.equal(
    policyHonoured(rec({ ignore: ['google'] }), 'Google Vertex', 'google-vertex'),
    true,
    'loose matching would have called this ignored',
  );
  assert.equal(policyHonoured(rec({ ignore: ['google'] }), 'Google Vertex'), false, 'without the slug, names are matched loosely');
});

test('actions from the Providers view: avoid, prefer and only, per model, other models kept', async () => {
  const { withAction } = await import('../../../src/core/policy/policy');
  let p = withAction({ 'qwen/qwen3-coder': { order: ['novita'] } }, 'moonshotai/kimi-k2-0905', 'chutes', 'avoid');
  assert.deepEqual(p, { 'qwen/qwen3-coder': { order: ['novita'] }, 'moonshotai/kimi-k2-0905': { ignore: ['chutes'] } });
  p = withAction(p, 'moonshotai/kimi-k2-0905', 'fireworks', 'prefer');
  assert.deepEqual(p['moonshotai/kimi-k2-0905'], { ignore: ['chutes'], order: ['fireworks'] });
  p = withAction(p, 'moonshotai/kimi-k2-0905', 'chutes', 'prefer');
  assert.deepEqual(p['moonshotai/kimi-k2-0905'], { order: ['chutes', 'fireworks'] }, 'preferring an avoided provider un-avoids it');
  p = withAction(p, 'moonshotai/kimi-k2-0905', 'chutes', 'avoid');
  assert.deepEqual(p['moonshotai/kimi-k2-0905'], { order: ['fireworks'], ignore: ['chutes'] });
  p = withAction(p, 'moonshotai/kimi-k2-0905', 'novita', 'only');
  assert.deepEqual(p['moonshotai/kimi-k2-0905'], { order: ['fireworks'], ignore: ['chutes'], only: ['novita'], allow_fallbacks: false });
});
