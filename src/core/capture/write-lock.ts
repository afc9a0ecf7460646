/**
 * Writes the proxy's thread cannot make now because another connection holds the database's write lock (another
 * process's commit, a backup tool, `sqlite3` sitting in an open transaction): the proxy never waits for the lock
 * (database.ts `batch` with `wait: false`), since its event loop forwards every exchange. Rows stay queued in the
 * store's own map and its journal (./store.ts, ./journal.ts); other writes (analyses, verdicts) wait here, bounded;
 * a timer tries again, soon at first, then every RETRY_MAX_MS. A lock held for LOCK_WARN_MS gets one warning, and its
 * end another that says what was written and what could not be captured.
 */

/** The first retry after a refused write; the delay doubles up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 5;
const RETRY_MAX_MS = 500;
/** A lock held this long is worth a warning (a commit of another process takes a millisecond). */
const LOCK_WARN_MS = 2000;
/** The most writes (and bytes) other than rows that wait for the lock; beyond, the oldest are given up. */
const MAX_WAITING = 500;
const MAX_WAITING_BYTES = 32 * 1024 * 1024;

interface Waiting {
  /** Runs the write; throws as the database does (a busy lock: `isBusy`). */
  run: () => void;
  bytes: number;
}

export class LockedWrites {
  /** When the current lock was first met (undefined: no write is being refused). */
  private since: number | undefined;
  private warned = false;
  private timer: NodeJS.Timeout | undefined;
  private delay = RETRY_FIRST_MS;
  private readonly waiting: Waiting[] = [];
  private waitingBytes = 0;
  /** Exchanges forwarded without a capture during this lock (too many were waiting), and writes given up. */
  private notCaptured = 0;
  private givenUp = 0;
  /** The most captures that waited during this lock. */
  private queued = 0;
  private closed = false;

  constructor(
    /** Tries the queued writes again (the store's rows, then `drain`). */
    private readonly retry: () => void,
    private readonly warn: (msg: string) => void,
    private readonly dbPath: string,
    /** Whether an error means the lock is held by another connection. */
    private readonly isBusy: (e: unknown) => boolean,
  ) {}

  /** Whether writes are being refused now. */
  get locked(): boolean {
    return this.since !== undefined;
  }

  /** Runs a write now unless the lock is taken; then it waits for it (a failure of another kind is thrown). */
  write(run: () => void, bytes = 0): void {
    if (this.locked) return this.enqueue({ run, bytes });
    try {
      run();
    } catch (e) {
      if (!this.isBusy(e)) throw e;
      this.enqueue({ run, bytes });
      this.refused(0);
    }
  }

  /** A write found the lock taken; `queued`: captures waiting for it now. */
  refused(queued: number): void {
    const now = Date.now();
    this.since ??= now;
    this.queued = Math.max(this.queued, queued);
    if (!this.warned && now - this.since >= LOCK_WARN_MS) {
      this.warned = true;
      this.warn(
        `the capture database ${this.dbPath} has been locked by another program for ${Math.round((now - this.since) / 1000)} s: ${queued} capture${queued === 1 ? '' : 's'} wait${queued === 1 ? 's' : ''} in memory and in the journal and are written once it is free (the proxy keeps forwarding)`,
      );
    }
    this.schedule();
  }

  /** An exchange forwarded without a capture: too many were waiting for the lock. */
  skipped(): void {
    if (this.notCaptured++ === 0)
      this.warn(
        `capture paused: the capture database ${this.dbPath} is locked by another program and too many captures wait for it; exchanges are forwarded without a capture until it is free`,
      );
  }

  /** A write went through: the lock is free. The writes waiting here follow; then the lock's end is said. */
  freed(): void {
    if (this.since === undefined) return;
    if (!this.drain()) return;
    const lost = [
      this.notCaptured &&
        `${this.notCaptured} exchange${this.notCaptured === 1 ? ' was' : 's were'} forwarded without a capture while it was locked`,
      this.givenUp && `${this.givenUp} analysis or verdict write${this.givenUp === 1 ? ' was' : 's were'} given up`,
    ].filter(Boolean);
    const n = this.queued;
    if (this.warned || lost.length > 0)
      this.warn(
        `the capture database is writable again: writing the ${n} capture${n === 1 ? '' : 's'} that waited${lost.length ? `; ${lost.join('; ')}` : ''}`,
      );
    this.since = undefined;
    this.warned = false;
    this.delay = RETRY_FIRST_MS;
    this.notCaptured = 0;
    this.givenUp = 0;
    this.queued = 0;
  }

  /** Runs the waiting writes in order; false when the lock is taken again (they wait on). */
  drain(): boolean {
    while (this.waiting.length > 0) {
      const w = this.waiting[0];
      try {
        w.run();
      } catch (e) {
        if (this.isBusy(e)) {
          this.refused(0);
          return false;
        }
        // Another failure (the disk): this write is given up, like any write the disk refuses.
      }
      this.waiting.shift();
      this.waitingBytes -= w.bytes;
    }
    return true;
  }

  /** How many writes other than rows wait. */
  get pending(): number {
    return this.waiting.length;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private enqueue(w: Waiting): void {
    this.waiting.push(w);
    this.waitingBytes += w.bytes;
    while (this.waiting.length > MAX_WAITING || (this.waitingBytes > MAX_WAITING_BYTES && this.waiting.length > 1)) {
      const old = this.waiting.shift()!;
      this.waitingBytes -= old.bytes;
      this.givenUp++;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retry();
    }, this.delay);
    this.timer.unref();
    this.delay = Math.min(RETRY_MAX_MS, this.delay * 2);
  }
}
