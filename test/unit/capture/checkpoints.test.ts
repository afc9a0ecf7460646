// Checkpoints of the capture database run when they stall nothing (src/core/capture/checkpoints.ts): on the capture
// worker while it is at work, else on this thread once no exchange is in flight; SQLite's own at 1,000 pages stays the backstop.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { COMMITS_PER_CHECKPOINT, checkpointWhenQuiet } from '../../../src/core/capture/checkpoints';
import type { CaptureThread } from '../../../src/core/capture/capture-thread';
import { CaptureDb, DB_FILE } from '../../../src/core/capture/database';
import { openStore } from '../../../src/core/capture/store';
import type { CapturedExchange } from '../../../src/core/model';
import { tempDir } from '../proxy/local-upstream';

const turn = () => new Promise((r) => setImmediate(r));

function exchange(i: number): CapturedExchange {
  return {
    id: `0000000${String(i).padStart(4, '0')}00000`,
    sessionId: 's',
    startedAt: i,
    state: 'complete',
    route: 'default',
    upstreamUrl: 'http://127.0.0.1:9/v1',
    method: 'POST',
    path: '/v1/chat/completions',
    requestHeaders: {},
  };
}

/** A database whose checkpoints are watched: `here` counts those run on this thread. */
function rig(thread: Pick<CaptureThread, 'busy' | 'checkpoint'>, busy: () => boolean) {
  const tmp = tempDir('tokenscope-checkpoints-');
  const db = CaptureDb.open(join(tmp.dir, DB_FILE));
  const real = db.checkpoint.bind(db);
  const here: boolean[] = [];
  db.checkpoint = () => {
    const ok = real();
    here.push(ok);
    return ok;
  };
  checkpointWhenQuiet(db, thread, busy);
  let i = 0;
  const commit = (n: number) => {
    for (let k = 0; k < n; k++) db.batch(() => db.put(exchange(i++), 10, process.pid));
  };
  return { db, here, commit, done: () => (db.close(), tmp.remove()) };
}

test('nothing in flight and no worker up: a checkpoint runs here every COMMITS_PER_CHECKPOINT commits, a turn of the loop after the commit', async () => {
  const { here, commit, done } = rig({ busy: false, checkpoint: () => assert.fail('no worker is started for a checkpoint') }, () => false);
  try {
    commit(COMMITS_PER_CHECKPOINT - 1);
    await turn();
    assert.deepEqual(here, [], 'not before');
    commit(1);
    assert.deepEqual(here, [], 'not inside the commit');
    await turn();
    assert.deepEqual(here, [true], 'the whole log copied');
    commit(COMMITS_PER_CHECKPOINT);
    await turn();
    assert.equal(here.length, 2);
  } finally {
    done();
  }
});

test('while an exchange is in flight the checkpoint waits for a quiet moment', async () => {
  let busy = true;
  const { here, commit, done } = rig({ busy: false, checkpoint: () => undefined }, () => busy);
  try {
    commit(COMMITS_PER_CHECKPOINT * 2);
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(here, [], 'none while streaming');
    busy = false;
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(here, [true], 'one, once quiet');
  } finally {
    done();
  }
});

test('with the capture worker at work, the worker runs it (exchanges in flight or not); one at a time, and a failed one is due again', async () => {
  let settle!: (ok: boolean) => void;
  const asked: string[] = [];
  const thread = {
    busy: true,
    checkpoint: (path: string) => (
      asked.push(path), asked.length === 1 ? new Promise<boolean>((r) => (settle = r)) : Promise.reject(new Error('database is locked'))
    ),
  };
  const { db, here, commit, done } = rig(thread, () => true);
  try {
    commit(COMMITS_PER_CHECKPOINT);
    await turn();
    assert.deepEqual(asked, [db.path]);
    commit(COMMITS_PER_CHECKPOINT * 2);
    await turn();
    assert.equal(asked.length, 1, 'none while one runs');
    settle(true);
    await turn();
    commit(COMMITS_PER_CHECKPOINT);
    await turn();
    assert.equal(asked.length, 2);
    await turn();
    commit(COMMITS_PER_CHECKPOINT);
    await turn();
    assert.equal(asked.length, 3, 'after a failure, the next round asks again');
    assert.deepEqual(here, [], 'never on this thread meanwhile');
  } finally {
    done();
  }
});

test('a store checkpoints between exchanges, never while one is streaming', async () => {
  const tmp = tempDir('tokenscope-checkpoints-store-');
  const store = await openStore(tmp.dir, { analyze: false });
  try {
    const db = (store as unknown as { db: CaptureDb }).db;
    const real = db.checkpoint.bind(db);
    const during: string[] = [];
    let streaming = 0;
    db.checkpoint = () => (during.push(streaming ? 'streaming' : 'quiet'), real());
    const begin = () =>
      store.begin({
        route: 'default',
        upstreamUrl: 'http://127.0.0.1:9/v1',
        method: 'POST',
        path: '/v1/chat/completions',
        requestHeaders: {},
        requestBody: '{"model":"m"}',
        agent: 'curl',
      });
    // One long stream while short exchanges come and go: no checkpoint until it ends.
    const long = begin();
    long.responseStarted(200, { 'content-type': 'text/event-stream' });
    streaming++;
    for (let i = 0; i < COMMITS_PER_CHECKPOINT + 4; i++) {
      const w = begin();
      w.responseStarted(200, { 'content-type': 'application/json' });
      w.chunk(Buffer.from('{"choices":[]}'));
      await w.finish();
      await turn(); // the batch of rows (one commit)
    }
    long.chunk(Buffer.from('data: [DONE]\n\n'));
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(during, [], 'not while the long stream is in flight');
    streaming--;
    await long.finish();
    for (let t = 0; t < 50 && during.length === 0; t++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(during, ['quiet']);
    assert.equal(store.list().length, COMMITS_PER_CHECKPOINT + 5);
  } finally {
    await store.close();
    tmp.remove();
  }
});
