/**
 * The bytes repair mode delivered to the agent (`<id>.delivered`), written as they go: each piece is appended in the
 * tick the proxy writes it to the client, masked to the same length like the body (a key cut by a piece boundary
 * is found with the tail of what came before and patched in place), so a killed process loses nothing the agent
 * saw. When the response ends, keys streamed over several SSE events are masked in place (./split-keys-body.ts),
 * off the event loop. Plain bytes, no frames: the file is exactly what the agent received.
 */
import { close, closeSync } from 'node:fs';
import { maskSecrets, type RedactOptions } from '../redact';
import { MASK_CONTEXT, runStart } from './masking';
import { writeMasks, type SplitKeysFound, type SplitKeysHost } from './split-keys-body';
import { writeAt } from './files';

/** What a delivered file needs from its store. */
export interface DeliveredHost extends SplitKeysHost {
  /** Opens (creates) the exchange's delivered file for writing; -1 when the disk refuses or the exchange is gone. */
  openDelivered(id: string): number;
  openDeliveredAsync(id: string): Promise<number>;
  removeDelivered(id: string): void;
}

export class DeliveredFile {
  private fd = -1;
  private pos = 0;
  private failed = false;
  private done = false;
  /** Set at `finish(false)`: the copy is not wanted (a file the late async open creates is removed too). */
  private dropped = false;
  /** The end of what was written from file offset `start`: as received (`raw`) and as on disk (`written`, masked). */
  private tail = { start: 0, raw: Buffer.alloc(0), written: Buffer.alloc(0) };

  constructor(
    private readonly host: DeliveredHost,
    private readonly id: string,
    private readonly redact: RedactOptions,
  ) {
    // Created while the first bytes are still on their way; should they come first, `append` opens it itself.
    void host.openDeliveredAsync(id).then((fd) => {
      if (fd < 0) return;
      if (this.fd >= 0 || this.done) close(fd, () => (this.dropped ? host.removeDelivered(id) : undefined));
      else this.fd = fd;
    });
  }

  /** Appends the bytes just written to the client (masked; synchronous, so they are on disk before the next read). */
  append(bytes: Uint8Array): void {
    if (this.done || this.failed || bytes.length === 0) return;
    if (this.fd < 0 && (this.fd = this.host.openDelivered(this.id)) < 0) return void (this.failed = true);
    const { raw, written, start } = this.tail;
    const all = Buffer.concat([raw, bytes]);
    const masked = maskSecrets(all, this.redact);
    if (masked !== all && raw.length > 0) {
      let changed = false;
      for (let i = 0; i < raw.length; i++) if (masked[i] !== raw[i] && masked[i] !== written[i]) (written[i] = masked[i]), (changed = true);
      if (changed && !this.write(written, start)) return;
    }
    const out = masked.subarray(raw.length);
    if (!this.write(out, this.pos)) return;
    this.pos += out.length;
    // Keep the run of key bytes at the end, and context before it, for the next piece.
    const cut = runStart(all, Math.max(0, runStart(all, all.length) - MASK_CONTEXT));
    const next = Buffer.allocUnsafe(all.length - cut);
    const kept = written.copy(next, 0, Math.min(cut, written.length));
    Buffer.from(out.buffer, out.byteOffset, out.byteLength).copy(next, kept, Math.max(0, cut - written.length));
    this.tail = { start: start + cut, raw: all.subarray(cut), written: next };
  }

  /**
   * The response ended: keys split over SSE events are masked in place, then the file is closed. `keep: false`: the
   * delivered bytes are the upstream's (nothing was rewritten) and the copy is removed. Returns the streams masked.
   */
  async finish(keep: boolean): Promise<SplitKeysFound | undefined> {
    if (this.done) return undefined;
    this.done = true;
    this.dropped = !keep;
    let masked: SplitKeysFound | undefined;
    if (keep && !this.failed && this.fd >= 0 && this.pos > 0) {
      masked = await this.host.findSplitKeys(this.id, 'delivered', 0, this.pos, this.redact);
      if (masked && !writeMasks(this.host, this.fd, masked)) this.failed = true;
    }
    const fd = this.fd;
    this.fd = -1;
    if (fd >= 0) this.host.diskWrite(() => closeSync(fd));
    if (!keep) this.host.removeDelivered(this.id);
    return masked;
  }

  private write(bytes: Uint8Array, pos: number): boolean {
    if (this.host.diskWrite(() => writeAt(this.fd, [bytes], pos)) !== undefined) return true;
    this.failed = true;
    return false;
  }
}
