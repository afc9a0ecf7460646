// The watch list in the capture database: schema 2 comes to an older database without touching its exchanges; an
// earlier version's watch.json is imported once (ids, history and the next id kept) and then left alone; reading
// creates nothing; and two processes adding and re-checking at the same time lose nothing and never share an id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptureDb, DB_FILE, SCHEMA_VERSION } from '../../../src/core/capture/database';
import { openStore } from '../../../src/core/capture/store';
import { openWatchList, WATCH_FILE, type CheckResult, type WatchCase } from '../../../src/core/watch/list';
import { seedExchanges } from '../capture/db-helpers';
import { TS_LOADER } from '../../helpers/ts-loader';

const LIST_TS = join(__dirname, '../../../src/core/watch/list.ts');

function tmp(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-watchlist-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function newCase(i: number): Omit<WatchCase, 'id' | 'history'> {
  return {
    addedAt: 1_700_000_000_000 + i,
    captureId: `cap${i}`,
    source: 'capture',
    request: { model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: `case ${i}` }] },
    target: 'openrouter:chutes',
    model: 'moonshotai/kimi-k2-0905',
    rules: ['section-unclosed'],
    findings: ['section-unclosed: the tool-call section is never closed'],
    firstBrokenAt: 1_700_000_000_000,
    lastBrokenAt: 1_700_000_000_000,
  };
}

const result = (at: number, verdict: CheckResult['verdict']): CheckResult => ({
  at,
  verdict,
  samples: [{ ok: true, errorRules: verdict === 'fixed' ? [] : ['section-unclosed'] }],
});

type Raw = { prepare(sql: string): { all(...a: unknown[]): unknown[] }; exec(sql: string): void; close(): void };
function raw(dataDir: string): Raw {
  const Sqlite = createRequire(__filename)('libsql') as new (path: string) => Raw;
  return new Sqlite(join(dataDir, DB_FILE));
}

test('schema 2 comes to a schema-1 database: its exchanges stay, the watch tables appear', async (t) => {
  const dir = tmp(t);
  seedExchanges(dir, 5);
  // What an earlier version left: the same exchanges, no watch tables, user_version 1.
  const old = raw(dir);
  old.exec(
    'DROP TABLE watch; DROP TABLE watch_checks; DROP TABLE IF EXISTS comparisons; DROP TABLE IF EXISTS provider_slugs; PRAGMA user_version = 1;',
  );
  old.close();
  assert.equal(SCHEMA_VERSION >= 2, true);

  // Reading does not migrate: the list is empty and the file is still schema 1.
  assert.deepEqual(openWatchList(dir, { readOnly: true }).list(), []);
  const ro = CaptureDb.open(join(dir, DB_FILE), { readOnly: true });
  assert.equal(ro.version(), 1);
  ro.close();

  const w = openWatchList(dir).add(newCase(1));
  assert.equal(w.id, 'w1');
  const db = CaptureDb.open(join(dir, DB_FILE));
  try {
    assert.equal(db.version(), SCHEMA_VERSION);
    assert.equal(db.count(), 5, 'exchanges kept');
  } finally {
    db.close();
  }
  const store = await openStore(dir, { readOnly: true });
  try {
    assert.equal(store.list().length, 5);
  } finally {
    await store.close();
  }
  assert.deepEqual(
    openWatchList(dir, { readOnly: true })
      .list()
      .map((c) => c.id),
    ['w1'],
  );
});

test('watch.json is imported once with its ids and history, then left alone', (t) => {
  const dir = tmp(t);
  const file = join(dir, WATCH_FILE);
  const cases: WatchCase[] = [
    { id: 'w1', ...newCase(1), history: [result(10, 'still-broken'), result(20, 'fixed')], fixedSince: 20 },
    { id: 'w4', ...newCase(4), history: [] },
  ];
  const text = JSON.stringify({ format: 'tokenscope.watch', version: 1, nextId: 6, cases }, null, 1) + '\n';
  writeFileSync(file, text, { mode: 0o600 });

  // Before any write, a read shows the file as it is and changes nothing.
  assert.deepEqual(
    openWatchList(dir, { readOnly: true })
      .list()
      .map((c) => c.id),
    ['w1', 'w4'],
  );
  assert.equal(existsSync(join(dir, DB_FILE)), false, 'reading created no database');

  const list = openWatchList(dir);
  const added = list.add(newCase(9));
  assert.equal(added.id, 'w6', "numbering continues after the file's next id");
  const all = list.list();
  assert.deepEqual(
    all.map((c) => c.id),
    ['w1', 'w4', 'w6'],
  );
  assert.deepEqual(all[0], cases[0], 'case and history exactly as in the file');
  assert.equal(statSync(join(dir, DB_FILE)).mode & 0o777, 0o600);

  // Left alone: not rewritten, not removed, and not imported again when it changes.
  assert.equal(readFileSync(file, 'utf8'), text);
  writeFileSync(file, JSON.stringify({ format: 'tokenscope.watch', version: 1, nextId: 2, cases: [{ ...cases[0], id: 'w99' }] }));
  assert.equal(list.remove('w4'), true);
  assert.deepEqual(
    openWatchList(dir)
      .list()
      .map((c) => c.id),
    ['w1', 'w6'],
  );
  assert.equal(list.add(newCase(10)).id, 'w7', 'a removed id is never reused');
});

test('a re-check is appended to the case history and moves last broken and fixed-since', (t) => {
  const dir = tmp(t);
  const list = openWatchList(dir);
  const c = list.add(newCase(1));
  assert.deepEqual(c.history, []);
  const fixed = list.record(c.id, result(2_000_000_000_000, 'fixed'))!;
  assert.equal(fixed.fixedSince, 2_000_000_000_000);
  const again = list.record(c.id, result(2_000_000_000_500, 'still-broken'))!;
  assert.equal(again.fixedSince, undefined);
  assert.equal(again.lastBrokenAt, 2_000_000_000_500);
  const stored = openWatchList(dir, { readOnly: true }).get(c.id)!;
  assert.deepEqual(
    stored.history.map((h) => h.verdict),
    ['fixed', 'still-broken'],
  );
  assert.equal(stored.lastBrokenAt, 2_000_000_000_500);
  assert.equal(list.record('w9', result(1, 'fixed')), undefined, 'a removed case gets no result');
  const db = raw(dir);
  try {
    assert.deepEqual(db.prepare('SELECT case_id, verdict FROM watch_checks ORDER BY at').all(), [
      { case_id: 'w1', verdict: 'fixed' },
      { case_id: 'w1', verdict: 'still-broken' },
    ]);
  } finally {
    db.close();
  }
});

/** A separate Node process that adds `n` cases and records a check on case w1 after each add. */
function adder(dir: string, tag: string, n: number): Promise<{ code: number | null; err: string }> {
  const script = `
    const { openWatchList } = require(${JSON.stringify(LIST_TS)});
    const list = openWatchList(${JSON.stringify(dir)});
    for (let i = 0; i < ${n}; i++) {
      list.add({ addedAt: Date.now(), captureId: '${tag}' + i, source: 'capture', request: {}, target: 'openrouter', rules: ['x'], findings: [], firstBrokenAt: 1, lastBrokenAt: 1 });
      list.record('w1', { at: Date.now(), verdict: 'still-broken', samples: [], reason: '${tag}' + i });
    }`;
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...TS_LOADER, '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => resolve({ code, err }));
  });
}

test('two processes adding and re-checking at once: every case kept, ids unique, no check lost', async (t) => {
  const dir = tmp(t);
  openWatchList(dir).add(newCase(0)); // w1, re-checked by both
  const n = 25;
  const [a, b] = await Promise.all([adder(dir, 'a', n), adder(dir, 'b', n)]);
  assert.equal(a.code, 0, a.err);
  assert.equal(b.code, 0, b.err);
  const cases = openWatchList(dir, { readOnly: true }).list();
  assert.equal(cases.length, 1 + 2 * n);
  assert.equal(new Set(cases.map((c) => c.id)).size, cases.length, 'no id given twice');
  const captures = new Set(cases.map((c) => c.captureId));
  for (let i = 0; i < n; i++) assert.ok(captures.has(`a${i}`) && captures.has(`b${i}`), `case ${i} of both processes kept`);
  const db = raw(dir);
  try {
    const checks = db.prepare("SELECT result FROM watch_checks WHERE case_id = 'w1'").all() as { result: string }[];
    assert.equal(checks.length, 2 * n, 'every re-check of w1 from both processes kept');
  } finally {
    db.close();
  }
});
