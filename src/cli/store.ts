/**
 * Opening the capture store from a command. Commands that only read never create a missing --data-dir, and a
 * folder that cannot be used is one clear line ("is a file, not a folder"), never errno text.
 */
import { statSync } from 'node:fs';
import { openStore, type CaptureStore, type StoreOptions } from '../core/capture/store';
import { UserError } from '../core/model';
import type { CliIO } from './io';
import { safeLine } from './terminal';

/** A file-system error about `path` as a few plain words. */
export function fsProblem(e: unknown, path: string): string {
  const err = e as NodeJS.ErrnoException;
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
      return `the disk holding ${path} is full`;
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
 * Opens an existing store to read it; undefined when the folder does not exist (it is not created). Read-only: nothing
 * in the data dir is created, renamed or deleted, so a running proxy's files are never touched.
 */
export async function openStoreForReading(dir: string, io: CliIO, opts: StoreOptions = {}): Promise<CaptureStore | undefined> {
  if (!storeExists(dir)) return undefined;
  return openStoreForWriting(dir, io, { analyze: false, readOnly: true, ...opts });
}

/** The same, for a command that needs a capture from it: a missing store is "no capture … in DIR". */
export async function openStoreWithCaptures(dir: string, io: CliIO, what: string, opts: StoreOptions = {}): Promise<CaptureStore> {
  const store = await openStoreForReading(dir, io, opts);
  if (!store) throw new UserError(`no capture ${what}: there is no capture store in ${dir} (\`tokenscope serve\` creates it)`);
  return store;
}
