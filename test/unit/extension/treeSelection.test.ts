import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settledSelection } from '../../../src/extension/treeSelection';

const wait = { settleMs: 200, pollMs: 5 };

describe('settledSelection: the clicked row survives a redraw of the Captures tree', () => {
  it('reads again while a redraw has just emptied the selection, and returns the row once the tree has it back', async () => {
    let reads = 0;
    const redrawnAt = Date.now();
    const id = await settledSelection(() => (++reads < 4 ? undefined : 'ex-1'), () => redrawnAt, wait);
    assert.equal(id, 'ex-1');
    assert.equal(reads, 4);
  });

  it('returns at once when nothing is selected and no redraw is recent (no wait for a selection that will not come)', async () => {
    let reads = 0;
    const started = Date.now();
    const id = await settledSelection(() => (reads++, undefined), () => 0, wait);
    assert.equal(id, undefined);
    assert.equal(reads, 1);
    assert.ok(Date.now() - started < 50);
  });

  it('gives up once the redraw is older than the settle time', async () => {
    let reads = 0;
    const redrawnAt = Date.now();
    const id = await settledSelection(() => (reads++, undefined), () => redrawnAt, wait);
    assert.equal(id, undefined);
    assert.ok(reads > 2, `read ${reads} times`);
    assert.ok(Date.now() - redrawnAt >= wait.settleMs);
  });
});
