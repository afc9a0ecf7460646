/**
 * Row writes of the exchanges a process records, batched: ids are queued as their exchanges change and written
 * together in one transaction a turn of the event loop later (`setImmediate`), off the forwarding path. A batch may
 * be held while another connection of this process writes a large row (./analysis.ts), and a batch the disk refused
 * goes again with the next one. The store (./store.ts) says what writing a batch means.
 */
export class RowBatch {
  /** Ids whose row is not yet written. */
  private readonly pending = new Set<string>();
  private scheduled = false;
  private held = 0; // while above 0, `flush` leaves the rows pending (`hold`)

  /** `write` stores the rows of `ids` and says whether the disk took them. */
  constructor(private readonly write: (ids: string[]) => boolean) {}

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
      this.flush();
    });
  }

  /** Holds batches until the returned release is called (once; later calls do nothing). */
  hold(): () => void {
    this.held++;
    let holding = true;
    return () => void (holding && ((holding = false), --this.held === 0 && this.pending.size > 0 && this.schedule()));
  }

  /** Writes every pending row now, unless held; returns the ids written (none when the disk refused). */
  flush(): string[] {
    if (this.pending.size === 0 || this.held > 0) return [];
    const ids = [...this.pending];
    this.pending.clear();
    if (this.write(ids)) return ids;
    for (const id of ids) this.pending.add(id); // the disk refused: the rows go with the next batch
    return [];
  }
}
