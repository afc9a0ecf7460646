/**
 * The binary rank cache in the data dir (`tokenizers/ranks-v3-KEY.bin`, the format of ./ranks.ts): one entry per rank
 * file path, size and modification time, so a cold load never reads or hashes the 2.8 MB rank file. Each entry names
 * its source, and every rebuild prunes the entries whose source is gone or changed (a re-downloaded or edited rank
 * file), so they do not pile up at 3.8 MB each.
 *
 * Several processes share the data dir (the extension, a CLI `serve`, `tokens` commands). An entry is written whole
 * (a temporary file, then a rename) and only ever removed when its source no longer matches it, which no process
 * loading that source now would read: it keys its lookup by the source as it is now. A process that had looked the
 * old entry up just before the change and then finds it gone rebuilds the table: a race costs at most a rebuild.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync, unlinkSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { fsWhy } from '../fs-errors';
import { writeFileAtomic } from './write-atomic';
import { UserError } from '../model';
import {
  decodeRankCache,
  encodeRankCache,
  parseRankFile,
  RANK_CACHE_HEAD,
  rankCacheSource,
  sharedRankTable,
  shareRankTable,
  type RankTable,
  type SharedRankTable,
} from './ranks';

/** What an entry was built from. */
export interface RankSource {
  path: string;
  size: number;
  mtimeMs: number;
}

const ENTRY = /^ranks-v3-[0-9a-f]{32}\.bin$/;
/** Entries of the previous release's format (TSRANKS2, no source named): this release never reads them. */
const OLD_ENTRY = /^ranks-[0-9a-f]{32}\.bin$/;
/** A writer's temporary file (`writeFileAtomic`); one left this long is a crashed writer's. */
const TEMP = /^ranks-.*\.tmp$/;
const TEMP_MAX_AGE_MS = 60 * 60 * 1000;

function sourceOf(rankFile: string, st: Stats): RankSource {
  return { path: resolve(rankFile), size: st.size, mtimeMs: st.mtimeMs };
}

function entryFile(cacheDir: string, s: RankSource): string {
  const key = createHash('sha256').update(`${s.path}\0${s.size}\0${s.mtimeMs}`).digest('hex').slice(0, 32);
  return join(cacheDir, `ranks-v3-${key}.bin`);
}

/**
 * Loads a rank file through the cache in `cacheDir` (when given). A cache that cannot be written (read-only folder,
 * full disk) only costs speed: that failure goes to `onWarning`. A table handed over by another thread
 * (`adoptSharedRanks`) is used as it is while the rank file still has the size and modification time it was read with.
 */
export function loadRanks(rankFile: string, cacheDir?: string, onWarning?: (message: string) => void): RankTable {
  return load(rankFile, cacheDir, onWarning).table;
}

function load(rankFile: string, cacheDir?: string, onWarning?: (message: string) => void): { table: RankTable; source: RankSource } {
  if (adopted.size > 0) {
    const shared = adopted.get(resolve(rankFile));
    try {
      if (shared && sameSource(shared.source, sourceOf(rankFile, statSync(rankFile))))
        return { table: sharedRankTable(shared.table), source: shared.source };
    } catch {
      // no rank file: reported below
    }
  }
  if (cacheDir) {
    try {
      const source = sourceOf(rankFile, statSync(rankFile));
      const cached = decodeRankCache(readFileSync(entryFile(cacheDir, source)));
      if (cached) return { table: cached, source };
    } catch {
      // no cache entry yet (or no rank file: reported below)
    }
  }
  let data: Buffer;
  let st: Stats;
  try {
    // The entry is keyed by the file as read: one replaced meanwhile never gets the other's table.
    const fd = openSync(rankFile, 'r');
    try {
      st = fstatSync(fd);
      data = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw new UserError(`cannot read ${rankFile}: ${fsWhy(e)}`);
  }
  const table = parseRankFile(data, rankFile);
  if (cacheDir) {
    const source = sourceOf(rankFile, st);
    const file = entryFile(cacheDir, source);
    try {
      writeFileAtomic(file, encodeRankCache(table, JSON.stringify(source)));
    } catch (e) {
      onWarning?.(`could not write the tokenizer cache ${file}: ${fsWhy(e)}`);
    }
    pruneRankCache(cacheDir, onWarning);
  }
  return { table, source: sourceOf(rankFile, st) };
}

/** A rank table in shared memory with the rank file it was read from, for worker threads (structured-cloneable). */
export interface SharedRanks {
  source: RankSource;
  table: SharedRankTable;
}

/** Tables handed over by another thread, by rank file path. */
const adopted = new Map<string, SharedRanks>();

/**
 * Loads a rank file once (through the cache, like `loadRanks`) into shared memory, for worker threads: posted to them
 * and adopted there (`adoptSharedRanks`), it spares each one reading and checking the table itself, and its memory.
 */
export function shareRanks(rankFile: string, cacheDir?: string, onWarning?: (message: string) => void): SharedRanks {
  const { table, source } = load(rankFile, cacheDir, onWarning);
  return { source, table: shareRankTable(table) };
}

/** Makes `loadRanks` of these tables' rank files use them (in a worker thread, from `shareRanks` on the main thread). */
export function adoptSharedRanks(tables: readonly SharedRanks[]): void {
  for (const t of tables) adopted.set(t.source.path, t);
}

function sameSource(a: RankSource, b: RankSource): boolean {
  return a.path === b.path && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * Removes the entries whose source file is gone or no longer has the size and modification time the entry was built
 * from, the previous release's entries, and temporary files a crashed writer left. Returns the names removed. An
 * entry whose source cannot be checked (a folder it may not read) stays.
 */
export function pruneRankCache(cacheDir: string, onWarning?: (message: string) => void): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const file = join(cacheDir, name);
    let stale: boolean;
    if (ENTRY.test(name)) stale = entryIsStale(file);
    else if (OLD_ENTRY.test(name)) stale = true;
    else if (TEMP.test(name)) stale = ageMs(file) > TEMP_MAX_AGE_MS;
    else continue;
    if (!stale) continue;
    try {
      unlinkSync(file);
      removed.push(name);
    } catch (e) {
      // another process removed it first, or the folder is read-only
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') onWarning?.(`could not remove the stale tokenizer cache ${file}: ${fsWhy(e)}`);
    }
  }
  return removed;
}

function entryIsStale(file: string): boolean {
  const named = readSource(file);
  if (named === 'gone') return false;
  if (named === undefined) return true; // not a readable entry: it would never load
  let st: Stats;
  try {
    st = statSync(named.path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR';
  }
  return st.size !== named.size || st.mtimeMs !== named.mtimeMs;
}

/** The source an entry names; 'gone' when the entry itself is (another process pruned it). */
function readSource(file: string): RankSource | 'gone' | undefined {
  let head: Uint8Array;
  try {
    const fd = openSync(file, 'r');
    try {
      head = readHead(fd, RANK_CACHE_HEAD);
      const first = rankCacheSource(head);
      if (first && 'needed' in first) head = readHead(fd, first.needed);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : undefined;
  }
  const found = rankCacheSource(head);
  if (!found || !('source' in found)) return undefined;
  try {
    const s = JSON.parse(found.source) as RankSource;
    return typeof s.path === 'string' && typeof s.size === 'number' && typeof s.mtimeMs === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}

function readHead(fd: number, bytes: number): Uint8Array {
  const buf = Buffer.alloc(bytes);
  let n = 0;
  for (let got; n < bytes && (got = readSync(fd, buf, n, bytes - n, n)) > 0; ) n += got;
  return buf.subarray(0, n);
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
