/**
 * The end of an exchange's response as the recorder (./recorder.ts) last wrote it: the next chunk is scanned together
 * with it, so a key cut by a chunk boundary is found whole, and the part of it already on disk is patched in place.
 */
import { hasKeyHint } from '../redact';
import { MASK_CONTEXT, runStart } from './masking';
import type { FrameAt } from './split-keys-body';

export class MaskTail {
  /** Response offset of `raw`'s first byte. */
  start = 0;
  /** The kept bytes as received. Only read: a view of the writer's own copy or of the chunk. */
  raw: Buffer = Buffer.alloc(0);
  /** The same bytes as written (masked): a copy, patched in place. */
  private written: Buffer = Buffer.alloc(0);
  /** The frames that hold them. */
  private readonly frames: FrameAt[] = [];
  /** `raw` holds a key hint (../redact.ts): the next chunk is scanned with it in full. */
  hinted = false;

  /** Where `masked` (the tail's bytes as a new scan masked them) covers more: the writes that patch the frames on disk. */
  patches(masked: Uint8Array): { pos: number; bytes: Uint8Array }[] {
    const { start, raw, written, frames } = this;
    let changed = false;
    for (let i = 0; i < raw.length; i++) {
      if (masked[i] !== raw[i] && masked[i] !== written[i]) {
        written[i] = masked[i];
        changed = true;
      }
    }
    if (!changed) return [];
    return frames.map((f) => {
      const from = Math.max(f.offset, start);
      return { pos: f.pos + from - f.offset, bytes: written.subarray(from - start, f.offset + f.length - start) };
    });
  }

  /**
   * Keeps what the next chunk must be scanned with: the run of key bytes at the end, and context before it. `all` is
   * the tail's bytes followed by this chunk's (undefined: `out`, the chunk as received, unmasked; it is joined to the
   * tail only when the kept part reaches back into it). `frame`: where `out` was written.
   */
  keep(all: Buffer | undefined, out: Buffer, frame: FrameAt): void {
    const quick = all === undefined;
    let cut: number;
    if (all === undefined) {
      // Within the chunk alone when the kept part starts inside it (a run that reaches its first byte may go on before).
      const run = runStart(out, out.length);
      const from = run > 0 ? run - MASK_CONTEXT : -1;
      const inChunk = from > 0 ? runStart(out, from) : 0;
      if (inChunk > 0) cut = this.raw.length + inChunk;
      else (all = Buffer.concat([this.raw, out])), (cut = runStart(all, Math.max(0, runStart(all, all.length) - MASK_CONTEXT)));
    } else cut = runStart(all, Math.max(0, runStart(all, all.length) - MASK_CONTEXT));
    const start = this.start + cut;
    // `written` must never alias the bytes forwarded to the client or queued for the disk.
    const old = this.written;
    const kept = all ? all.length - cut : out.length - (cut - this.raw.length);
    const written = Buffer.allocUnsafe(kept);
    const fromOld = old.copy(written, 0, Math.min(cut, old.length));
    out.copy(written, fromOld, Math.max(0, cut - old.length));
    const { frames } = this;
    frames.push(frame);
    let stale = 0;
    while (stale < frames.length && frames[stale].offset + frames[stale].length <= start) stale++;
    if (stale > 0) frames.splice(0, stale);
    this.raw = all ? all.subarray(cut) : out.subarray(cut - this.raw.length);
    this.start = start;
    this.written = written;
    // Whether the kept bytes hold a key hint: none can when this chunk went the quick way (neither it nor the tail did).
    this.hinted = !quick && hasKeyHint(this.raw);
  }
}
