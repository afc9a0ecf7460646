/**
 * The V8 code cache of the batch worker's bundle (dist/tokens-batch-worker.js), kept in the data dir: a new worker
 * compiles its 2 MB bundle, then the line-processing functions one by one as its first lines reach them, a fixed cost
 * that a short file pays per worker. A cache taken from a worker after it has processed lines holds the bytecode of
 * those functions too; the next run's workers start from it (./worker-boot.ts). The file starts with the bundle's size
 * and modification time and a SHA-256 of the V8 data: a cache of another bundle, or a damaged one, is never handed to
 * V8; V8 checks that its own version and flags made the rest, and a cache it rejects costs nothing but the compile.
 * Files are private (0600, in a 0700 folder) and written whole or not at all.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { writeFileAtomic } from '../write-atomic';

/** Bundle size and mtime (two float64s), then the SHA-256 of the V8 data. */
export const CODE_CACHE_HEADER = 16 + 32;

/** The most bytes a cache file may have (the worker's is about 1 MB). */
const MAX_BYTES = 64 * 1024 * 1024;

/** The cache file of `bundle` in the data dir `dataDir`: one per bundle path, Node version and architecture. */
export function codeCacheFile(dataDir: string, bundle: string): string {
  const key = createHash('sha256')
    .update(`${resolve(bundle)}\0${process.version}\0${process.arch}`)
    .digest('hex')
    .slice(0, 24);
  return join(dataDir, 'code-cache', `${basename(bundle).replace(/\.js$/, '')}-${key}.v8`);
}

/** The V8 data of `cacheFile` when it was made from `bundle` as it is now and is whole; undefined otherwise. */
export function readCodeCache(cacheFile: string, bundle: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(cacheFile, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = statSync(bundle);
    const size = fstatSync(fd).size;
    if (size <= CODE_CACHE_HEADER || size > MAX_BYTES) return undefined;
    const data = Buffer.allocUnsafe(size);
    if (readSync(fd, data, 0, size, 0) !== size) return undefined;
    if (data.readDoubleLE(0) !== st.size || data.readDoubleLE(8) !== st.mtimeMs) return undefined;
    const code = data.subarray(CODE_CACHE_HEADER);
    if (!createHash('sha256').update(code).digest().equals(data.subarray(16, CODE_CACHE_HEADER))) return undefined;
    return code;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Writes `code` (V8 data of `bundle`) as `cacheFile`, replacing any other. Throws on failure (the caller says why). */
export function writeCodeCache(cacheFile: string, bundle: string, code: Uint8Array): void {
  const st = statSync(bundle);
  const header = Buffer.alloc(CODE_CACHE_HEADER);
  header.writeDoubleLE(st.size, 0);
  header.writeDoubleLE(st.mtimeMs, 8);
  createHash('sha256').update(code).digest().copy(header, 16);
  writeFileAtomic(cacheFile, Buffer.concat([header, code]));
}
