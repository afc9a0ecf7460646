/**
 * The capture database's own faults: a full disk is said as "disk full: …" in one line (SQLite ends the transaction
 * itself, and the ROLLBACK after it used to fail with "cannot rollback - no transaction is active", which hid why),
 * and the journal is emptied while a proxy runs (it grew without end, and stayed behind after a clean stop).
 */
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fsProblem } from '../../../src/cli/store';
import { CaptureDb, DB_FILE, dbFailure } from '../../../src/core/capture/database';
import { MAX_QUEUED_CAPTURES, openStore } from '../../../src/core/capture/store';
import { tempDir } from '../proxy/local-upstream';

const init = (headers: Record<string, string> = {}) => ({
  route: 'openrouter',
  upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
  method: 'POST',
  path: '/openrouter/v1/chat/completions',
  requestHeaders: { 'content-type': 'application/json', ...headers },
  requestBody: '{"model":"m/one"}',
});

/** Makes the connection's database full: no page beyond the ones it has (SQLite's own "database or disk is full"). */
function fill(db: CaptureDb): void {
  const [{ page_count }] = db.rows<{ page_count: number }>('PRAGMA page_count');
  db.rows(`PRAGMA max_page_count = ${page_count}`);
}

test('a full database in a batch throws SQLite\'s "full" error, with no transaction left open', () => {
  const tmp = tempDir();
  try {
    const db = CaptureDb.open(join(tmp.dir, DB_FILE));
    fill(db);
    let thrown: unknown;
    try {
      db.batch(() => {
        for (let i = 0; i < 50; i++) db.setMeta(`k${i}`, 'x'.repeat(8000));
      });
    } catch (e) {
      thrown = e;
    }
    assert.ok(thrown, 'the batch failed');
    assert.equal(dbFailure(thrown), 'full', String(thrown));
    assert.doesNotMatch(String((thrown as Error).message), /cannot rollback/);
    assert.equal(fsProblem(thrown, tmp.dir), 'disk full: the disk is full, no space is left on the device');
    // The connection works on: a small write that fits, then reads.
    db.batch(() => db.setMeta('small', '1'));
    assert.equal(db.getMeta('small'), '1');
    db.close();
  } finally {
    tmp.remove();
  }
});

test('a full disk under the store is one line, "disk full: …", and the proxy keeps forwarding', async () => {
  const tmp = tempDir();
  const warnings: string[] = [];
  try {
    const store = await openStore(tmp.dir, { analyze: false, onWarning: (m) => warnings.push(m) });
    fill((store as unknown as { db: CaptureDb }).db);
    for (let i = 0; i < 20; i++) {
      const w = store.begin(init({ 'x-big': 'y'.repeat(8000) }));
      w.responseStarted(200, {});
      w.chunk(Buffer.from('{}'));
      await w.finish();
    }
    assert.ok(warnings.length >= 1, 'the full disk was said');
    for (const m of warnings) {
      assert.doesNotMatch(m, /cannot rollback|no transaction is active/);
      assert.ok(!m.includes('\n'), m);
    }
    assert.match(
      warnings[0],
      /^capture store in .*: disk full: the disk is full, no space is left on the device; captures are incomplete until it recovers \(the proxy keeps forwarding\)$/,
    );
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('the journal is emptied while the proxy runs, and goes at a clean stop', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const journal = () => readdirSync(join(tmp.dir, 'journal')).map((f) => join(tmp.dir, 'journal', f));
    let largest = 0;
    // ~600 exchanges of ~1.5 KB of journal each: past the 256 KB at which the journal is emptied, several times over.
    for (let i = 0; i < 600; i++) {
      const w = store.begin(init({ 'x-pad': 'p'.repeat(1200) }));
      w.responseStarted(200, { 'content-type': 'application/json' });
      w.chunk(Buffer.from('{}'));
      w.ended?.();
      await w.finish();
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
      for (const f of journal()) largest = Math.max(largest, statSync(f).size);
    }
    assert.ok(largest < 400 * 1024, `the journal reached ${largest} bytes`);
    await store.close();
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => !f.startsWith(DB_FILE)),
      ['bodies'],
      'no journal and no spare folder after a clean stop',
    );
  } finally {
    tmp.remove();
  }
});

test('another connection holding the write lock: rows wait (in memory and the journal) without blocking, at most 2000 captures; beyond, exchanges go uncaptured and the warnings say so', async () => {
  const tmp = tempDir();
  const warnings: string[] = [];
  try {
    const store = await openStore(tmp.dir, { analyze: false, spareFiles: 0, onWarning: (m) => warnings.push(m) });
    const other = CaptureDb.open(join(tmp.dir, DB_FILE));
    other.write('BEGIN IMMEDIATE');
    let slowest = 0;
    const ids: string[] = [];
    for (let i = 0; i < MAX_QUEUED_CAPTURES + 50; i++) {
      const t0 = performance.now();
      const w = store.begin(init());
      w.responseStarted(200, {});
      w.chunk(Buffer.from('{}'));
      await w.finish();
      slowest = Math.max(slowest, performance.now() - t0);
      ids.push(w.id);
      if (i % 200 === 0) await new Promise((r) => setTimeout(r, 1)); // batches and retries get their turns
    }
    // Nothing waited for the lock (SQLite's busy timeout is 5 s).
    assert.ok(slowest < 1000, `an exchange took ${slowest.toFixed(0)} ms`);
    assert.equal(other.rows<{ n: number }>('SELECT count(*) AS n FROM exchanges')[0].n, 0, 'no row got past the lock');
    assert.ok(
      warnings.some((m) =>
        /^capture paused: the capture database .* is locked by another program and too many captures wait for it; exchanges are forwarded without a capture until it is free$/.test(
          m,
        ),
      ),
      warnings.join('\n'),
    );
    const journal = readdirSync(join(tmp.dir, 'journal'));
    assert.equal(journal.length, 1);
    assert.ok(statSync(join(tmp.dir, 'journal', journal[0])).size > 0, 'the waiting captures are in the journal');
    other.write('COMMIT');
    other.close();
    // Free again: the waiting rows are written by the store's own retry, without any new exchange.
    const reader = CaptureDb.open(join(tmp.dir, DB_FILE), { readOnly: true });
    for (const until = Date.now() + 10_000; reader.count() < MAX_QUEUED_CAPTURES && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(reader.count(), MAX_QUEUED_CAPTURES, 'every waiting capture is written; the ones beyond the bound were never captured');
    reader.close();
    assert.ok(
      warnings.some((m) =>
        /^the capture database is writable again: writing the \d+ captures that waited; 50 exchanges were forwarded without a capture while it was locked$/.test(
          m,
        ),
      ),
      warnings.join('\n'),
    );
    assert.equal(store.get(ids.at(-1)!), undefined, 'an exchange beyond the bound is not stored');
    assert.ok(store.get(ids[0]), 'the first exchange is stored');
    await store.close();
  } finally {
    tmp.remove();
  }
});
