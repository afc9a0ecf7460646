import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checks, ruleInfo, INTERNAL_ERROR } from '../../../src/core/checks/index';
import { ACCOUNTING_RULE } from '../../../src/core/tokens/accounting';

test('rule ids are unique kebab-case, each with a title and a one-line why', () => {
  const ids = checks.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const c of checks) {
    assert.match(c.id, /^[a-z0-9]+(?:-[a-z0-9]+)*$/, c.id);
    assert.ok(c.title.length > 0 && c.title.length <= 60, `${c.id} title`);
    assert.ok(c.why.length > 20 && !c.why.includes('\n'), `${c.id} why`);
    assert.ok(['error', 'warning', 'info'].includes(c.severity));
  }
});

test('ruleInfo describes every rule and internal-error, and nothing else', () => {
  for (const c of checks) assert.deepEqual(ruleInfo(c.id), { id: c.id, severity: c.severity, title: c.title, why: c.why });
  assert.equal(ruleInfo('internal-error')?.title, INTERNAL_ERROR.title);
  assert.equal(ruleInfo('no-such-rule'), undefined);
});

test('every rule has a describe() block in a unit test', () => {
  const dir = __dirname;
  const sources = readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
  for (const c of checks) assert.ok(sources.includes(`describe('${c.id}'`), `no unit tests for ${c.id}`);
});

test('rules reported outside the checks (token accounting, the capture cap) have a title and a why in the registry', () => {
  for (const id of [ACCOUNTING_RULE, 'capture-truncated']) {
    const info = ruleInfo(id);
    assert.ok(info, `${id} is registered`);
    assert.equal(info.id, id);
    assert.ok(
      info.title.length > 0 && info.title.length <= 60 && info.why.length > 20 && !info.why.includes('\n'),
      `${id} has a title and a one-line why`,
    );
  }
  assert.equal(ruleInfo(ACCOUNTING_RULE)?.severity, 'warning');
});
