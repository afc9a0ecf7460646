// The store's row batching (src/core/capture/row-batch.ts): rows queued in one turn are written together in the next,
// a held batch waits for its release, and a batch the disk refused goes again with the next one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RowBatch } from '../../../src/core/capture/row-batch';

const turn = () => new Promise((r) => setImmediate(r));

function batch(accept = () => true) {
  const writes: string[][] = [];
  const rows = new RowBatch((ids) => (writes.push([...ids]), accept()));
  return { rows, writes };
}

test('rows queued in one turn are written together in the next, once', async () => {
  const { rows, writes } = batch();
  rows.queue('a');
  rows.queue('b');
  rows.queue('a');
  assert.deepEqual(writes, [], 'nothing is written in the tick the row changed');
  await turn();
  assert.deepEqual(writes, [['a', 'b']]);
  assert.equal(rows.size, 0);
  await turn();
  assert.equal(writes.length, 1, 'an empty batch writes nothing');
});

test('add waits for a schedule or a flush; flush returns what it wrote', async () => {
  const { rows, writes } = batch();
  rows.add('a');
  await turn();
  assert.deepEqual(writes, [], 'add alone schedules nothing');
  assert.ok(rows.has('a'));
  assert.deepEqual(rows.flush(), ['a']);
  assert.ok(!rows.has('a'));
  rows.add('b');
  rows.delete('b');
  assert.deepEqual(rows.flush(), [], 'a deleted row is not written');
  assert.deepEqual(writes, [['a']]);
});

test('a held batch waits for every release; a second release of one hold does nothing', async () => {
  const { rows, writes } = batch();
  const first = rows.hold();
  const second = rows.hold();
  rows.queue('a');
  await turn();
  assert.deepEqual(rows.flush(), [], 'held: nothing written');
  first();
  first();
  await turn();
  assert.deepEqual(writes, [], 'one hold is still on');
  second();
  await turn();
  assert.deepEqual(writes, [['a']], 'the last release schedules the waiting rows');
});

test('a batch the disk refused stays pending and goes with the next one', async () => {
  let accept = false;
  const { rows, writes } = batch(() => accept);
  rows.queue('a');
  await turn();
  assert.ok(rows.has('a'), 'refused: still pending');
  accept = true;
  rows.queue('b');
  await turn();
  assert.deepEqual(writes, [['a'], ['a', 'b']]);
  assert.equal(rows.size, 0);
});
