// Capture ids sort in the order the exchanges were made, also when several share a start time and ids for other
// times are made in between (the store names its spare body files with ids for now).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../../src/core/capture/ids';
import { openStore } from '../../../src/core/capture/store';
import { tempDir } from '../proxy/local-upstream';

test('ids for one millisecond keep their order when ids for other milliseconds come between', () => {
  const t = Date.UTC(2026, 10, 30, 2, 0, 0);
  const made: string[] = [];
  for (let i = 0; i < 40; i++) {
    made.push(newId(t));
    newId(t + 1 + (i % 3));
  }
  assert.deepEqual([...made].sort(), made, 'sorted by id = order made');
  assert.equal(new Set(made).size, made.length, 'no two alike');
});

test('exchanges begun with the same start time are listed newest first, in the order they were begun', async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir, { analyze: false });
  try {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const w = store.begin({
        route: 'default',
        upstreamUrl: 'http://127.0.0.1:9/v1',
        method: 'POST',
        path: '/v1/chat/completions',
        requestHeaders: {},
        requestBody: '{}',
        startedAt: Date.UTC(2026, 10, 30, 2, 0, 0),
      });
      w.responseStarted(200, {});
      ids.push((await w.finish()).id);
      // The store tops up its spare body files meanwhile, with ids for now.
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(
      store.list().map((x) => x.id),
      [...ids].reverse(),
    );
  } finally {
    await store.close();
    tmp.remove();
  }
});
