/**
 * Retention: the oldest finished exchanges go when the store is past its age or size limit, and a warning says what
 * went. Cheap when nothing is due: size is a running total (re-read from the database once a minute, since other
 * processes add to it too), age is checked once a minute.
 */
import type { CaptureDb } from './database';
import type { StoreOptions } from './types';

const DEFAULT_MAX_BYTES = 2 * 1024 ** 3;
const DEFAULT_MAX_AGE_DAYS = 30;
/** Per-exchange allowance for frame headers and rows (store.ts SIZE_ALLOWANCE). */
const ALLOWANCE = 1024;

export class Retention {
  private total: number;
  private lastCheck = 0;
  private readonly maxBytes: number;
  private readonly maxAgeDays: number;

  constructor(
    private readonly db: CaptureDb,
    limits: StoreOptions['retention'],
    private readonly remove: (id: string) => void,
    private readonly warn: (msg: string) => void,
  ) {
    this.maxBytes = limits?.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxAgeDays = limits?.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS;
    // A read-only store never removes anything: it need not add up 100,000 sizes at open.
    this.total = db.readOnly ? 0 : db.totalBytes(ALLOWANCE);
  }

  added(bytes: number): void {
    this.total += bytes;
  }

  /**
   * Drops the oldest finished exchanges beyond the limits. `keep`: the exchange that just finished, never removed to
   * make room for itself (its body is already capped at maxBodyBytes), so one big capture cannot wipe the others; the
   * newest exchange always stays.
   */
  apply(keep?: string): void {
    if (this.db.readOnly) return;
    const now = Date.now();
    const due = now - this.lastCheck >= 60_000;
    if (this.total <= this.maxBytes && !due) return;
    if (due) {
      this.lastCheck = now;
      this.total = this.db.totalBytes(ALLOWANCE);
    }
    const cutoff = this.maxAgeDays > 0 && Number.isFinite(this.maxAgeDays) ? now - this.maxAgeDays * 86_400_000 : -Infinity;
    const newest = this.db.query({ limit: 1 })[0]?.id;
    let old = 0;
    let big = 0;
    let freed = 0;
    for (const r of this.db.oldest(500)) {
      const tooOld = r.started_at < cutoff;
      if (!tooOld && this.total <= this.maxBytes) break;
      if (r.id === keep || r.id === newest) continue;
      this.remove(r.id);
      const size = r.bytes + ALLOWANCE;
      this.total -= size;
      freed += size;
      if (tooOld) old++;
      else big++;
    }
    const parts = [old && `${old} older than ${this.maxAgeDays} days`, big && `${big} oldest to stay under ${size(this.maxBytes)}`].filter(Boolean);
    if (parts.length) this.warn(`retention removed ${old + big} capture${old + big === 1 ? '' : 's'} (${parts.join(', ')}; ${size(freed)} freed)`);
  }
}

function size(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`;
}
