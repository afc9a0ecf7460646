/**
 * A failing disk (ENOSPC…) pauses capturing with one warning a minute; the proxy keeps forwarding. Every synchronous
 * write of the capture store (rows, body files) runs through the guard this returns.
 */

/** Runs one synchronous disk write; a failure becomes a throttled warning and `undefined`, never an exception. */
export type DiskWrite = <T>(op: () => T) => T | undefined;

export function diskGuard(dataDir: string, warn: (msg: string) => void): DiskWrite {
  let lastDiskWarning = 0;
  return <T>(op: () => T): T | undefined => {
    try {
      return op();
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const now = Date.now();
      if (now - lastDiskWarning > 60_000) {
        lastDiskWarning = now;
        const why = err.code === 'ENOSPC' ? 'the disk is full' : `${err.code ?? 'error'}: ${String(err.message).split('\n')[0]}`;
        warn(`capture store in ${dataDir}: ${why}; captures are incomplete until it recovers (the proxy keeps forwarding)`);
      }
      return undefined;
    }
  };
}
