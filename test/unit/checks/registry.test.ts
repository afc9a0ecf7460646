import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ruleInfo } from '../../../src/core/checks/index';
import { ACCOUNTING_RULE } from '../../../src/core/tokens/accounting';

test('rules reported outside the checks have a title and an explanation in the registry', () => {
  for (const id of [ACCOUNTING_RULE, 'capture-truncated', 'internal-error']) {
    const info = ruleInfo(id);
    assert.ok(info, `${id} is registered`);
    assert.equal(info.id, id);
    assert.ok(info.title.length > 10 && info.why.length > 40, `${id} has a title and a why`);
  }
  assert.equal(ruleInfo(ACCOUNTING_RULE)?.severity, 'warning');
});
