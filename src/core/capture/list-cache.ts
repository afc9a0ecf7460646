/**
 * The store's whole list, newest first, kept up to date from the database's change numbers: built on the first
 * `list()`, then only the rows any process changed since are read again.
 */
import type { CapturedExchange } from '../model';
import type { CaptureDb } from './database';

export class ListCache {
  private state: { rows: Map<string, CapturedExchange>; sorted?: CapturedExchange[]; seq: number; version: number } | undefined;

  /** Newest first: the database's rows with this process's own exchanges (their newest state) over them. */
  list(db: CaptureDb, own: ReadonlyMap<string, { x: CapturedExchange }>): CapturedExchange[] {
    const c = this.refresh(db, own);
    c.sorted ??= [...c.rows.values()].sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : -1));
    return c.sorted.slice();
  }

  /** An exchange changed in this process (nothing to do before the first `list()`). */
  set(x: CapturedExchange): void {
    if (!this.state) return;
    this.state.rows.set(x.id, x);
    this.state.sorted = undefined;
  }

  delete(id: string): void {
    if (!this.state) return;
    this.state.rows.delete(id);
    this.state.sorted = undefined;
  }

  /** The cached list, with what any process changed since it was last read (only the changed rows are read). */
  private refresh(db: CaptureDb, own: ReadonlyMap<string, { x: CapturedExchange }>): NonNullable<ListCache['state']> {
    const version = db.dataVersion();
    if (this.state && this.state.version === version) return this.state;
    const c: NonNullable<ListCache['state']> = (this.state ??= { rows: new Map<string, CapturedExchange>(), seq: 0, version });
    const changes = db.changesSince(c.seq);
    for (const id of changes.deleted) c.rows.delete(id);
    for (const r of changes.rows) if (!own.has(r.x.id)) c.rows.set(r.x.id, r.x);
    for (const o of own.values()) c.rows.set(o.x.id, o.x);
    c.seq = changes.seq;
    c.version = version;
    c.sorted = undefined;
    return c;
  }
}
