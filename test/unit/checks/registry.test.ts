import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checks, ruleInfo, INTERNAL_ERROR } from '../../../src/core/checks/index';

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
