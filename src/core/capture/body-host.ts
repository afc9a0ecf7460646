/**
 * The recorder's access to the capture store's body files (./files.ts): an exchange's capture file and repair mode's
 * delivered file (./delivered.ts), each opened only for an exchange the store still records, and the end-of-stream
 * search of either for keys split over SSE events. The store (./store.ts) is one.
 */
import type { RedactOptions } from '../redact';
import type { CaptureThread } from './capture-thread';
import type { BodyFiles } from './files';
import { findSplitKeys, type SplitKeysFound } from './split-keys-body';

export abstract class BodyFileHost {
  abstract readonly readOnly: boolean;
  protected abstract readonly files: BodyFiles;
  /** The capture worker thread large files are searched on (./capture-thread.ts). */
  protected abstract readonly thread: CaptureThread;
  /** Whether the store still records the exchange (begun here, not yet finished and written, not deleted). */
  protected abstract records(id: string): boolean;

  bodyFile(id: string): { path: string; size: number } | undefined {
    return this.files.stat(id);
  }

  openBody(id: string): number {
    return this.files.open(id);
  }

  openBodyAsync(id: string): Promise<number> {
    return this.files.openAsync(id);
  }

  adoptSpare(spare: string, id: string): boolean {
    return this.files.adopt(spare, id, this.records(id));
  }

  // Repair mode's delivered bytes (./delivered.ts): a file only for an exchange this store still records.
  openDelivered(id: string): number {
    return this.records(id) ? this.files.openDelivered(id) : -1;
  }

  readBody(id: string, from = 0): Uint8Array {
    return this.files.read(id, from);
  }

  openDeliveredAsync(id: string): Promise<number> {
    return this.records(id) ? this.files.openDeliveredAsync(id) : Promise.resolve(-1);
  }

  removeDelivered(id: string): void {
    if (!this.readOnly) this.files.removeDelivered(id);
  }

  /** Keys split over SSE events in the exchange's body (`cap`, from byte `from`) or delivered file (./split-keys-body.ts). */
  findSplitKeys(
    id: string,
    ext: 'cap' | 'delivered',
    from: number,
    size: number,
    redact: RedactOptions,
  ): Promise<SplitKeysFound | undefined> {
    return findSplitKeys({ path: this.files.path(id, ext), framed: ext === 'cap', from, size, patterns: redact.patterns }, this.thread);
  }
}
