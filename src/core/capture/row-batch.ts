/**
 * Row writes of the exchanges a process records, batched: ids are queued as their exchanges change and written
 * together in one transaction a turn of the event loop later (`setImmediate`), off the forwarding path. A batch may
 * be held while another connection of this process writes a large row (./analysis.ts), and a batch the disk refused
 * goes again with the next one. The store (./store.ts) says what writing a batch means, and hears of every batch
 * written, whoever started it (its own turn of the loop, or the store).
 */
export class RowBatch {
  /** Ids whose row is not yet written. */
  private readonly pending = new Set<string>();
  private scheduled = false;
  private held = 0; // while above 0, `flush` leaves the rows pending (`hold`)

  /** `write` stores the rows of `ids` and says whether the disk took them; `written` hears of each batch written. */
  constructor(
    private readonly write: (ids: string[]) => boolean,
    private readonly written: (ids: string[]) => void = () => undefined,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  has(id: string): boolean {
    return this.pending.has(id);
  }

  /** Marks the row as unwritten without scheduling a batch (the row waits for a later change or a timer). */
  add(id: string): void {
    this.pending.add(id);
  }

  delete(id: string): void {
    this.pending.delete(id);
  }

  /** Marks the row as unwritten and schedules a batch. */
  queue(id: string): void {
    this.pending.add(id);
    this.schedule();
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      // At most TURN_ROWS a turn: the rows a long-held lock kept waiting go in slices, not in one long transaction.
      if (this.flush(TURN_ROWS).length > 0 && this.pending.size > 0) this.schedule();
    });
  }

  /** Holds batches until the returned release is called (once; later calls do nothing). */
  hold(): () => void {
    this.held++;
    let holding = true;
    return () => void (holding && ((holding = false), --this.held === 0 && this.pending.size > 0 && this.schedule()));
  }

  /** Writes every pending row now (at most `limit`), unless held; returns the ids written (none when the disk refused). */
  flush(limit = Infinity): string[] {
    if (this.pending.size === 0 || this.held > 0) return [];
    const ids: string[] = [];
    for (const id of this.pending) {
      if (ids.length >= limit) break;
      ids.push(id);
    }
    for (const id of ids) this.pending.delete(id);
    if (this.write(ids)) {
      this.written(ids);
      return ids;
    }
    for (const id of ids) this.pending.add(id); // the disk refused (or the lock was taken): the rows go with the next batch
    return [];
  }
}

/** The most rows one turn of the event loop writes (one transaction of them takes a few ms). */
const TURN_ROWS = 256;
