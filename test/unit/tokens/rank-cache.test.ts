// The tokenizer rank cache prunes what no load will read again: entries of a rank file that changed or is gone, the
// previous release's entries and a crashed writer's temporary files. It keeps the entries of every rank file as it
// is now, so processes sharing the data dir never lose each other's entries; a load racing a prune costs at most a
// rebuild.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadRanks, pruneRankCache } from '../../../src/core/tokens/rank-cache';
import { decodeRankCache, encodeRankCache, parseRankFile } from '../../../src/core/tokens/ranks';

const RANKS = (n: number) => Buffer.from(`${['YQ== 0', 'Yg== 1', 'Yw== 2', 'ZA== 3'].slice(0, n).join('\n')}\n`);

function tmp(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-rankcache-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const entries = (cache: string) =>
  readdirSync(cache)
    .filter((f) => f.startsWith('ranks-'))
    .sort();

test('a changed or removed rank file loses its cache entry at the next rebuild; current entries stay', (t) => {
  const dir = tmp(t);
  const cache = join(dir, 'tokenizers');
  const a = join(dir, 'a', 'tiktoken.model');
  const b = join(dir, 'b', 'tiktoken.model');
  for (const f of [a, b]) mkdirSync(join(f, '..'), { recursive: true });
  writeFileSync(a, RANKS(2));
  writeFileSync(b, RANKS(3));
  loadRanks(a, cache);
  loadRanks(b, cache);
  const first = entries(cache);
  assert.equal(first.length, 2, 'one entry per rank file');
  assert.ok(first.every((f) => /^ranks-v3-[0-9a-f]{32}\.bin$/.test(f)));
  // Private like the captures beside it.
  assert.equal(statSync(cache).mode & 0o777, 0o700, 'the cache folder is 0700');
  for (const f of first) assert.equal(statSync(join(cache, f)).mode & 0o777, 0o600, `${f} is 0600`);

  // What else lives there: the previous release's entry, a writer's fresh temporary file, an old one, other files.
  const old = 'ranks-0123456789abcdef0123456789abcdef.bin';
  writeFileSync(join(cache, old), encodeRankCache(parseRankFile(RANKS(1))).subarray(0, 60));
  const fresh = `${first[0]}.${process.pid}.x1.tmp`;
  const crashed = `${first[0]}.1.x0.tmp`;
  writeFileSync(join(cache, fresh), 'partial');
  writeFileSync(join(cache, crashed), 'partial');
  const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000;
  utimesSync(join(cache, crashed), twoHoursAgo, twoHoursAgo);
  mkdirSync(join(cache, 'moonshotai', 'Kimi-K2-Instruct'), { recursive: true });
  writeFileSync(join(cache, 'notes.txt'), 'mine');

  // A hit prunes nothing.
  loadRanks(a, cache);
  assert.equal(readdirSync(cache).length, 2 + 5);

  // The user re-downloads a (new size and time) and removes b: the next rebuild leaves only a's new entry.
  writeFileSync(a, RANKS(4));
  utimesSync(a, Date.now() / 1000 + 5, Date.now() / 1000 + 5);
  rmSync(join(dir, 'b'), { recursive: true });
  const table = loadRanks(a, cache);
  assert.equal(table.offsets.length - 1, 4, 'the new rank file');
  const now = entries(cache);
  assert.equal(now.filter((f) => f.endsWith('.bin')).length, 1);
  assert.ok(!first.includes(now.find((f) => f.endsWith('.bin'))!), 'a new entry');
  assert.deepEqual(
    readdirSync(cache)
      .filter((f) => !f.startsWith('ranks-v3-') || f.endsWith('.tmp'))
      .sort(),
    [fresh, 'moonshotai', 'notes.txt'].sort(),
    'the old format and the crashed writer are gone; a live writer and other files stay',
  );
  assert.ok(decodeRankCache(readFileSync(join(cache, now.find((f) => f.endsWith('.bin'))!))));
});

test('a damaged entry goes at the next prune', (t) => {
  const dir = tmp(t);
  const cache = join(dir, 'tokenizers');
  writeFileSync(join(dir, 'tiktoken.model'), RANKS(2));
  loadRanks(join(dir, 'tiktoken.model'), cache);
  const [entry] = entries(cache);
  const damaged = 'ranks-v3-ffffffffffffffffffffffffffffffff.bin';
  writeFileSync(join(cache, damaged), 'TSRANKS3 then garbage');
  assert.deepEqual(pruneRankCache(cache), [damaged]);
  assert.deepEqual(entries(cache), [entry]);
});

test('an entry whose source cannot be checked (a folder it may not read) stays', (t) => {
  if (process.getuid?.() === 0) return t.skip('running as root, which reads any folder: an unreadable source cannot be made');
  const dir = tmp(t);
  const cache = join(dir, 'tokenizers');
  const locked = join(dir, 'locked');
  mkdirSync(locked);
  writeFileSync(join(locked, 'tiktoken.model'), RANKS(2));
  loadRanks(join(locked, 'tiktoken.model'), cache);
  const [entry] = entries(cache);
  chmodSync(locked, 0o000);
  try {
    assert.deepEqual(pruneRankCache(cache), []);
  } finally {
    chmodSync(locked, 0o700);
  }
  assert.deepEqual(entries(cache), [entry]);
});

// Two processes share the cache: one keeps loading a rank file that does not change, the other keeps replacing its
// own rank file and loading it (each load a rebuild, each rebuild a prune). The first never rebuilds: its entry is
// never removed. The second always gets its current table.
test("processes sharing the cache never prune each other's current entries", async (t) => {
  const dir = tmp(t);
  const cache = join(dir, 'tokenizers');
  const stable = join(dir, 'stable.model');
  writeFileSync(stable, RANKS(2));
  loadRanks(stable, cache);
  const [entry] = entries(cache);
  const born = statSync(join(cache, entry)).ino;
  const mod = join(__dirname, '../../../src/core/tokens/rank-cache.ts');
  const script = (role: 'stable' | 'changing') => `
    const { loadRanks } = require(${JSON.stringify(mod)});
    const fs = require('node:fs');
    const path = require('node:path');
    const end = Date.now() + 1500;
    let n = 0;
    const own = path.join(${JSON.stringify(dir)}, 'changing-' + process.pid + '.model');
    while (Date.now() < end) {
      if (${JSON.stringify(role)} === 'stable') {
        const t = loadRanks(${JSON.stringify(stable)}, ${JSON.stringify(cache)});
        if (t.offsets.length - 1 !== 2) throw new Error('wrong table');
      } else {
        const k = 1 + (n % 4);
        fs.writeFileSync(own, ${JSON.stringify(['YQ== 0', 'Yg== 1', 'Yw== 2', 'ZA== 3'])}.slice(0, k).join('\\n') + '\\n');
        fs.utimesSync(own, 1e9 + n, 1e9 + n);
        const t = loadRanks(own, ${JSON.stringify(cache)});
        if (t.offsets.length - 1 !== k) throw new Error('wrong table');
      }
      n++;
    }
    process.stdout.write(String(n));`;
  const run = (role: 'stable' | 'changing') =>
    new Promise<number>((resolve, reject) => {
      const p = spawn(process.execPath, ['--import', 'tsx', '-e', script(role)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (err += d));
      p.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`${role} exited ${code}: ${err}`))));
    });
  const [loads, changes, changes2] = await Promise.all([run('stable'), run('changing'), run('changing')]);
  assert.ok(loads > 10 && changes > 10 && changes2 > 10, `${loads} loads, ${changes} and ${changes2} rebuilds`);
  assert.equal(statSync(join(cache, entry)).ino, born, 'the stable entry was never removed and rebuilt');
  // What is left: the stable entry and, per changing file, at most its last entry.
  assert.ok(entries(cache).filter((f) => f.endsWith('.bin')).length <= 3, entries(cache).join(' '));
});
