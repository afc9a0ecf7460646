// The capture database's schema is its own module: one migration per version, and a new database gets every table
// the migrations create, at the newest version.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CaptureDb } from '../../../src/core/capture/database';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src/core/capture/schema';

test('every schema version has exactly one migration, and a new database is at the newest version', () => {
  assert.equal(MIGRATIONS.length, SCHEMA_VERSION);
  const db = CaptureDb.open(':memory:');
  try {
    assert.equal(db.version(), SCHEMA_VERSION);
    const tables = db.rows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => r.name);
    for (const sql of MIGRATIONS)
      for (const [, name] of sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g)) assert.ok(tables.includes(name), `table ${name}`);
  } finally {
    db.close();
  }
});
