/**
 * Retention: the oldest finished exchanges go when the store is past its age or size limit, and a warning says what
 * went. Cheap when nothing is due: size is a running total (re-read from the database once a minute, since other
 * processes add to it too), age is checked once a minute.
 *
 * A wrong clock must not empty the store, so the clock is never trusted alone:
 * - Age is judged by the captures' own times: a capture is too old when it started more than the age limit before the
 *   newest capture (or before now, if the clock is behind that). A clock set weeks ahead finds nothing older than
 *   what the captures themselves say.
 * - A run (one open of the store) removes on its own at most RUN_SHARE of the captures it found, plus one per capture
 *   it adds, and, to stay under the size limit, as many bytes as it adds (so a long-running proxy keeps its store at
 *   the limits whatever the sizes of its captures). Beyond that it holds back, and says how many and how to remove
 *   them with the user's consent (`tokenscope captures --prune`). Its start removes a share of the captures at most.
 * - A start whose clock is far ahead of the newest capture, or a clock that jumps ahead during a run, is not trusted to
 *   judge age at all: that start removes nothing, and nothing is removed by age in that run; a warning says why.
 */
import type { CaptureDb } from './database';
import type { StoreOptions } from './types';

const DEFAULT_MAX_BYTES = 2 * 1024 ** 3;
const DEFAULT_MAX_AGE_DAYS = 30;
/** Per-exchange allowance for frame headers and rows (store.ts SIZE_ALLOWANCE). */
const ALLOWANCE = 1024;
const DAY_MS = 86_400_000;
/** The share of the captures present at open that one run removes without the user's consent. */
export const RUN_SHARE = 0.1;
/** How often the age limit and the stored total are looked at again. */
const CHECK_EVERY_MS = 60_000;

/** The clocks retention reads: the wall clock (epoch ms) and a monotonic one (ms), to see the wall clock jump. */
export interface RetentionClock {
  now(): number;
  monotonic(): number;
}

const SYSTEM_CLOCK: RetentionClock = { now: () => Date.now(), monotonic: () => performance.now() };

/** What one pass removed and held back. */
export interface RetentionResult {
  removed: number;
  freedBytes: number;
  /** Captures due that were kept: the run's share was used up. */
  heldBack: number;
}

export class Retention {
  private total: number;
  private lastCheck = -Infinity;
  private readonly maxBytes: number;
  private readonly maxAgeDays: number;
  /** Captures the store held at open, and those this run added and removed (the run's share, see above). */
  private readonly atOpen: number;
  private addedCaptures = 0;
  private removedCaptures = 0;
  /** Bytes added in this run not yet paid for by size removals beyond the count share (see above). */
  private sizeCredit = 0;
  /** Set when the clock is not trusted to judge age in this run (see above), with the reason given once. */
  private ageOff: string | undefined;
  private startPassDone = false;
  private heldBackSaid = false;
  private readonly wall0: number;
  private readonly mono0: number;

  constructor(
    private readonly db: CaptureDb,
    limits: StoreOptions['retention'],
    /** Removes these captures (rows, files) in one go; false when it could not now (the database is locked). */
    private readonly remove: (ids: string[]) => boolean,
    private readonly warn: (msg: string) => void,
    private readonly clock: RetentionClock = SYSTEM_CLOCK,
  ) {
    this.maxBytes = limits?.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxAgeDays = limits?.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS;
    this.wall0 = clock.now();
    this.mono0 = clock.monotonic();
    // A read-only store never removes anything: it need not add up 100,000 sizes at open.
    this.total = db.readOnly ? 0 : db.totalBytes(ALLOWANCE);
    this.atOpen = db.readOnly ? 0 : db.count();
    if (db.readOnly || !this.ageLimited) return;
    const newest = db.newestStart();
    const ahead = newest === undefined ? 0 : this.wall0 - newest;
    if (ahead > this.jumpGuardMs) {
      this.ageOff = `the clock (${day(this.wall0)}) is ${days(ahead)} ahead of the newest capture (${day(newest!)}), so this start removes nothing and no capture is removed for its age until a start whose clock agrees with the captures (a clock set wrong would remove them by mistake)`;
    }
  }

  private get ageLimited(): boolean {
    return this.maxAgeDays > 0 && Number.isFinite(this.maxAgeDays);
  }

  /** A clock this far ahead of the captures (or jumping this far in a run) is not trusted: half the age limit, 1 h to 7 days. */
  private get jumpGuardMs(): number {
    return Math.min(7 * DAY_MS, Math.max(3_600_000, (this.maxAgeDays * DAY_MS) / 2));
  }

  /** Bytes added to the store; `capture`: a new capture began (the run may then remove one more on its own). */
  added(bytes: number, capture = false): void {
    this.total += bytes;
    this.sizeCredit += bytes;
    if (capture) this.addedCaptures++;
  }

  /**
   * Drops the oldest finished exchanges beyond the limits. `keep`: the exchange that just finished, never removed to
   * make room for itself (its body is already capped at maxBodyBytes), so one big capture cannot wipe the others; the
   * newest exchange always stays. `consent`: the user asked for it (`captures --prune`): no share limit, and the clock
   * guard does not hold age back (age is still judged by the captures' own times).
   */
  apply(keep?: string, opts: { consent?: boolean } = {}): RetentionResult {
    const none = { removed: 0, freedBytes: 0, heldBack: 0 };
    if (this.db.readOnly) return none;
    const consent = opts.consent === true;
    const now = this.clock.now();
    const due = consent || now - this.lastCheck >= CHECK_EVERY_MS || now < this.lastCheck;
    if (this.total <= this.maxBytes && !due) return none;
    if (due) {
      this.lastCheck = now;
      this.total = this.db.totalBytes(ALLOWANCE);
    }
    const startPass = !this.startPassDone;
    this.startPassDone = true;
    this.watchClock(now);
    if (!consent && this.ageOff !== undefined && startPass) {
      this.warn(`retention: ${this.ageOff}`);
      return none;
    }
    const byAge = this.ageLimited && (consent || this.ageOff === undefined);
    // Judged by the captures' own times: "now" is the newest capture's start, unless the clock is behind it.
    const newestAt = this.db.newestStart();
    const cutoff = byAge ? Math.min(now, newestAt ?? now) - this.maxAgeDays * DAY_MS : -Infinity;
    const newest = this.db.query({ limit: 1 })[0]?.id;
    const share = consent ? Infinity : Math.floor(RUN_SHARE * this.atOpen) + this.addedCaptures - this.removedCaptures;
    let budget = share;
    let credit = this.sizeCredit;
    const ids: string[] = [];
    let old = 0;
    let big = 0;
    let freed = 0;
    let total = this.total;
    let held = false;
    for (const r of this.db.oldest(500)) {
      const tooOld = r.started_at < cutoff;
      if (!tooOld && total <= this.maxBytes) break;
      if (r.id === keep || r.id === newest) continue;
      const size = r.bytes + ALLOWANCE;
      if (budget > 0) budget--;
      else if (!tooOld && !startPass && credit >= size)
        credit -= size; // paid for by bytes this run added
      else {
        held = true;
        break;
      }
      ids.push(r.id);
      total -= size;
      freed += size;
      if (tooOld) old++;
      else big++;
    }
    if (ids.length > 0) {
      if (!this.remove(ids)) return none; // the database is locked: the next pass tries again
      this.total = total;
      if (!consent) (this.removedCaptures += share - budget), (this.sizeCredit = credit);
      const parts = [
        old && `${old} older than ${this.maxAgeDays} days`,
        big && `${big} oldest to stay under ${size(this.maxBytes)}`,
      ].filter(Boolean);
      this.warn(`retention removed ${ids.length} capture${ids.length === 1 ? '' : 's'} (${parts.join(', ')}; ${size(freed)} freed)`);
    }
    let heldBack = 0;
    if (held) {
      heldBack = cutoff === -Infinity ? 0 : this.db.countBefore(cutoff);
      const over = total > this.maxBytes;
      if (!this.heldBackSaid) {
        this.heldBackSaid = true;
        const what = [
          heldBack > 0 && `${heldBack} capture${heldBack === 1 ? '' : 's'} older than ${this.maxAgeDays} days`,
          over && `the captures over ${size(this.maxBytes)}`,
        ]
          .filter(Boolean)
          .join(' and ');
        this.warn(
          `retention held back ${what}: one run removes at most ${Math.round(RUN_SHARE * 100)}% of the captures it found on its own; \`tokenscope captures --prune${this.maxAgeDays === DEFAULT_MAX_AGE_DAYS ? '' : ` --max-age-days ${this.maxAgeDays}`}${this.maxBytes === DEFAULT_MAX_BYTES ? '' : ` --max-size-mb ${Number((this.maxBytes / 1024 / 1024).toFixed(3))}`}\` removes them`,
        );
      }
    }
    return { removed: ids.length, freedBytes: freed, heldBack };
  }

  /** A wall clock that ran ahead of the monotonic one by more than the guard since open: age is not judged in this run. */
  private watchClock(now: number): void {
    if (this.ageOff !== undefined || !this.ageLimited) return;
    const jump = now - this.wall0 - (this.clock.monotonic() - this.mono0);
    if (jump > this.jumpGuardMs) {
      this.ageOff = `the clock moved ${days(jump)} ahead while Tokenscope ran (set forward, or the machine slept), so no capture is removed for its age until the next start`;
      this.warn(`retention: ${this.ageOff}`);
    }
  }
}

function size(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`;
}

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function days(ms: number): string {
  const d = ms / DAY_MS;
  return d >= 1 ? `${Math.round(d)} day${Math.round(d) === 1 ? '' : 's'}` : `${Math.round(ms / 3_600_000)} h`;
}
