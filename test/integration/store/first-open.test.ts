/**
 * Two processes opening a new data dir at once (the extension's proxy and a CLI `serve` starting together) both get a
 * working store: one creates the database's tables, the other waits and reuses them ("table exchanges already
 * exists" stopped one of them about one time in ten). Two long-lived child processes open the store on the same fresh
 * data dir, together, 100 times (a fresh dir each time): opening the store is what races, so no proxy is started.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { CaptureDb, DB_FILE, SCHEMA_VERSION } from '../../../src/core/capture/database';
import { TS_LOADER } from '../../helpers/ts-loader';
import { repoRoot } from '../../helpers/shared';

const PAIRS = 100;

/** A child that opens (and closes) a writable store on each data dir it reads from stdin, answering `ok` or the error. */
function opener(): { child: ChildProcess; open(dir: string): Promise<string> } {
  const code = `const { openStore } = require('./src/core/capture/store');
const lines = require('node:readline').createInterface({ input: process.stdin });
lines.on('line', async (dir) => {
  try {
    const store = await openStore(dir, { analyze: false, spareFiles: 0 });
    await store.close();
    process.stdout.write('ok\\n');
  } catch (e) {
    process.stdout.write('error: ' + String(e && e.message).split('\\n')[0] + '\\n');
  }
});
process.stdout.write('ready\\n');`;
  const child = spawn(process.execPath, [...TS_LOADER, '--eval', code], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  const answers: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => (waiting.length ? waiting.shift()!(l) : answers.push(l)));
  const next = () => (answers.length ? Promise.resolve(answers.shift()!) : new Promise<string>((r) => waiting.push(r)));
  const ready = next();
  return {
    child,
    open: async (dir) => {
      assert.equal(await ready, 'ready');
      child.stdin!.write(`${dir}\n`);
      return next();
    },
  };
}

test(`two processes opening a new data dir at once both succeed (${PAIRS} fresh dirs)`, { timeout: 300_000 }, async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'tokenscope-first-open-'));
  const a = opener();
  const b = opener();
  try {
    const failures: string[] = [];
    const t0 = Date.now();
    for (let i = 0; i < PAIRS; i++) {
      // The data dir itself does not exist yet either (serve creates it).
      const dir = join(root, String(i), 'data');
      const [ra, rb] = await Promise.all([a.open(dir), b.open(dir)]);
      for (const r of [ra, rb]) if (r !== 'ok') failures.push(`${i}: ${r}`);
      const db = CaptureDb.open(join(dir, DB_FILE), { readOnly: true });
      try {
        assert.equal(db.version(), SCHEMA_VERSION, `${dir} is at the current schema`);
      } finally {
        db.close();
      }
    }
    t.diagnostic(`${PAIRS} paired first opens in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    assert.deepEqual(failures, []);
  } finally {
    a.child.kill();
    b.child.kill();
    rmSync(root, { recursive: true, force: true });
  }
});
