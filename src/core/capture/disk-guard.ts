/**
 * A failing disk (ENOSPC…) pauses capturing with one warning a minute; the proxy keeps forwarding. Every synchronous
 * write of the capture store (rows, body files) runs through the guard this returns.
 */
import { dbFailure } from './database';

/**
 * Runs one synchronous disk write; a failure becomes a throttled warning and `undefined`, never an exception, except
 * the errors `rethrow` accepts (the store handles a busy database lock itself).
 */
export type DiskWrite = <T>(op: () => T, rethrow?: (e: unknown) => boolean) => T | undefined;

export function diskGuard(dataDir: string, warn: (msg: string) => void): DiskWrite {
  let lastDiskWarning = 0;
  return <T>(op: () => T, rethrow?: (e: unknown) => boolean): T | undefined => {
    try {
      return op();
    } catch (e) {
      if (rethrow?.(e)) throw e;
      const now = Date.now();
      if (now - lastDiskWarning > 60_000) {
        lastDiskWarning = now;
        warn(`capture store in ${dataDir}: ${diskProblem(e)}; captures are incomplete until it recovers (the proxy keeps forwarding)`);
      }
      return undefined;
    }
  };
}

/** A failed write in a few plain words, on one line: a full disk says "disk full", whoever noticed it (the file system or SQLite). */
export function diskProblem(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const first = String(err?.message ?? e).split('\n')[0];
  if (dbFailure(e) === 'full') return 'disk full: the disk is full, no space is left on the device';
  if (dbFailure(e) === 'corrupt') return `the capture database is damaged: ${first}`;
  if (dbFailure(e) === 'busy') return `the capture database is locked by another program: ${first}`;
  if (dbFailure(e) === 'newer') return first;
  return `${err?.code ?? 'error'}: ${first}`;
}
