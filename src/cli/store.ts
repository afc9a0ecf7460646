/**
 * Opening the capture store from a command. Commands that only read never create a missing --data-dir (and a path
 * whose folder above does not exist either is a mistyped one: an error, not "no captures"), and a folder that cannot
 * be used is one clear line ("is a file, not a folder"), never errno or SQLite text. `serve` still forwards when the
 * capture database cannot be used at all, and says capture is off.
 */
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openStore, type CaptureStore, type StoreOptions } from '../core/capture/store';
import { dbFailure } from '../core/capture/database';
import { diskProblem } from '../core/capture/disk-guard';
import { captureOffStore } from '../core/capture/off';
import type { SlugEntry } from '../core/capture/provider-rows';
import { UserError } from '../core/model';
import type { CliIO } from './io';
import { safeLine } from './terminal';

/** A file-system error about `path` as a few plain words. */
export function fsProblem(e: unknown, path: string): string {
  const err = e as NodeJS.ErrnoException;
  if (dbFailure(e) !== undefined || String(err?.code ?? '').startsWith('SQLITE_')) return diskProblem(e);
  switch (err?.code) {
    case 'ENOENT':
      return `${path} does not exist`;
    case 'ENOTDIR':
      return `${path} (or a folder above it) is a file, not a folder`;
    case 'EISDIR':
      return `${path} is a folder, not a file`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${path}`;
    case 'ENOSPC':
      return `disk full: the disk holding ${path} is full`;
    case 'ENOTSUP':
      // A folder that cannot be made where its parent exists (/proc/1): not a place for a data dir.
      return `${String(err.message).split('\n')[0]}: ${path} cannot hold a capture store`;
    case 'EROFS':
      return `${path} is on a read-only file system`;
    default:
      return `${path}: ${String(err?.message ?? e).split('\n')[0]}`;
  }
}

/** True when `dir` exists as a folder; a UserError when something else is in its place. */
function storeExists(dir: string): boolean {
  try {
    if (statSync(dir).isDirectory()) return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new UserError(`cannot open the capture store: ${fsProblem(e, dir)}`);
  }
  throw new UserError(`cannot open the capture store: ${dir} is a file, not a folder`);
}

/** Opens the store for writing (serve, import, rerun), creating the folder; a UserError in plain words when it cannot. */
export async function openStoreForWriting(dir: string, io: CliIO, opts: StoreOptions = {}): Promise<CaptureStore> {
  storeExists(dir);
  return openStore(dir, { onWarning: (m) => io.err(`tokenscope: ${safeLine(m)}`), ...opts }).catch((e) => {
    throw e instanceof UserError ? e : new UserError(`cannot open the capture store: ${fsProblem(e, dir)}`);
  });
}

/**
 * Opens the store for `serve`. A data dir that cannot be used (a file, no permission, /proc/1) is a UserError, as for
 * any command; a capture database that cannot be used (locked for long at start, written by a newer Tokenscope, a disk
 * full) is not: the proxy forwards anyway, with capture off, and one line says why. (A damaged database is moved aside
 * and a new one started by the store itself.)
 */
export async function openStoreForServing(dir: string, io: CliIO, opts: StoreOptions = {}): Promise<CaptureStore & { off?: string }> {
  storeExists(dir);
  try {
    return await openStore(dir, { onWarning: (m) => io.err(`tokenscope: ${safeLine(m)}`), ...opts });
  } catch (e) {
    if (e instanceof UserError) throw e;
    const code = String((e as NodeJS.ErrnoException)?.code ?? '');
    if (dbFailure(e) === undefined && !code.startsWith('SQLITE_'))
      throw new UserError(`cannot open the capture store: ${fsProblem(e, dir)}`);
    return captureOffStore(dir, `the capture database in ${dir} cannot be used (${diskProblem(e)})`);
  }
}

/**
 * Opens an existing store to read it; undefined when the folder does not exist (it is not created). Read-only: nothing
 * in the data dir is created, renamed or deleted, so a running proxy's files are never touched. A folder above the
 * data dir that does not exist either means a mistyped path: a UserError.
 */
export async function openStoreForReading(dir: string, io: CliIO, opts: StoreOptions = {}): Promise<CaptureStore | undefined> {
  if (!storeExists(dir)) {
    const parent = dirname(resolve(dir));
    let parentIsDir = false;
    try {
      parentIsDir = statSync(parent).isDirectory();
    } catch {
      // missing, or not readable: no store can be there
    }
    if (!parentIsDir)
      throw new UserError(
        `cannot open the capture store: ${dir} does not exist, nor does the folder above it (${parent}); check --data-dir`,
      );
    return undefined;
  }
  return openStoreForWriting(dir, io, { analyze: false, readOnly: true, ...opts });
}

/** The same, for a command that needs a capture from it: a missing store is "no capture … in DIR". */
export async function openStoreWithCaptures(dir: string, io: CliIO, what: string, opts: StoreOptions = {}): Promise<CaptureStore> {
  const store = await openStoreForReading(dir, io, opts);
  if (!store) throw new UserError(`no capture ${what}: there is no capture store in ${dir} (\`tokenscope serve\` creates it)`);
  return store;
}

/**
 * Keeps provider slugs that OpenRouter's listings named in the data dir (what `policy set`, the scorecard and the
 * next export check slugs against); best effort: a store that cannot be written only means they are read again next
 * time.
 */
export async function keepSlugs(dataDir: string, entries: SlugEntry[], io: CliIO): Promise<void> {
  try {
    const store = await openStoreForWriting(dataDir, io, { analyze: false });
    try {
      store.learnProviderSlugs(entries);
    } finally {
      await store.close();
    }
  } catch {
    // The caller already printed or wrote what it has; the slugs are learnt again next time.
  }
}
