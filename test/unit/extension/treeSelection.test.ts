import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settledSelection } from '../../../src/extension/treeSelection';
import { scheduledNow } from '../../helpers/timing';

const wait = { settleMs: 200, pollMs: 5 };

// The settle window is read from the clock the function is given: these tests give it their own, so a loaded machine
// (where a 5 ms poll can take far longer) cannot end the window early or late.
describe('settledSelection: the clicked row survives a redraw of the Captures tree', () => {
  it('reads again while a redraw has just emptied the selection, and returns the row once the tree has it back', async () => {
    let reads = 0;
    const redrawnAt = Date.now();
    const id = await settledSelection(
      () => (++reads < 4 ? undefined : 'ex-1'),
      () => redrawnAt,
      wait,
      () => redrawnAt + 10 * reads,
    );
    assert.equal(id, 'ex-1');
    assert.equal(reads, 4);
  });

  it('returns at once when nothing is selected and no redraw is recent (no wait for a selection that will not come)', async () => {
    let reads = 0;
    const started = scheduledNow(); // stands still while this thread waits for a core
    const id = await settledSelection(
      () => (reads++, undefined),
      () => 0,
      wait,
    );
    assert.equal(id, undefined);
    assert.equal(reads, 1);
    assert.ok(scheduledNow() - started < 50);
  });

  it('gives up once the redraw is older than the settle time', async () => {
    let reads = 0;
    let clock = Date.now();
    const redrawnAt = clock;
    const id = await settledSelection(
      () => (reads++, undefined),
      () => redrawnAt,
      wait,
      () => (clock += wait.pollMs),
    );
    assert.equal(id, undefined);
    assert.ok(reads > 2, `read ${reads} times`);
    assert.ok(clock - redrawnAt >= wait.settleMs);
    assert.ok(reads <= wait.settleMs / wait.pollMs + 2, `gave up once the settle time had passed (read ${reads} times)`);
  });
});
