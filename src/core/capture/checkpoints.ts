/**
 * Copying the write-ahead log into the database file (a checkpoint, with its fsync) held the proxy's thread 10-17 ms
 * each time SQLite ran it: in whichever commit took the log past 1,000 pages (about every 50 exchanges), in the middle
 * of whatever was streaming then. Now one runs after every COMMITS_PER_CHECKPOINT commits of this thread, at a moment
 * when it stalls nothing: on the capture worker while that thread is at work anyway (a large analysis), else here once
 * no exchange of this process is in flight (between an agent's requests). SQLite's own checkpoint at 1,000 pages stays
 * as the backstop for a proxy that is never idle. The worker is not started or kept for this: an idle worker holds
 * the heap its last large job grew (about 70 MB after a 13 MB stream) until it ends.
 */
import type { CaptureThread } from './capture-thread';
import type { CaptureDb } from './database';

/** Commits of this thread between two checkpoints (each commit is a batch of rows: 5-20 pages). */
export const COMMITS_PER_CHECKPOINT = 32;
/** While exchanges are in flight, how often a due checkpoint looks for a quiet moment. */
const QUIET_RETRY_MS = 100;

/** `inFlight`: whether an exchange of this process is in flight. */
export function checkpointWhenQuiet(db: CaptureDb, thread: Pick<CaptureThread, 'busy' | 'checkpoint'>, inFlight: () => boolean): void {
  const path = db.path;
  if (path === undefined || db.readOnly) return;
  let commits = 0;
  let waiting = false;
  let offThread = false;
  const run = () => {
    waiting = false;
    if (offThread || commits < COMMITS_PER_CHECKPOINT) return;
    const off = thread.busy ? thread.checkpoint(path) : undefined;
    if (off) {
      commits = 0;
      offThread = true;
      // A checkpoint that fails (a lock held, the worker gone) is due again after the next commits.
      void off.catch(() => false).finally(() => (offThread = false));
      return;
    }
    if (inFlight()) return void ((waiting = true), setTimeout(run, QUIET_RETRY_MS).unref());
    commits = 0;
    try {
      db.checkpoint();
    } catch {
      // closed meanwhile, or the disk refused: SQLite's own checkpoint remains
    }
  };
  db.afterCommit = () => {
    if (++commits >= COMMITS_PER_CHECKPOINT && !waiting && !offThread) (waiting = true), setImmediate(run);
  };
}
