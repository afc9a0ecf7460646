/**
 * The end-of-stream pass over one body file: keys the model streamed a few characters per SSE event
 * (./split-keys.ts) are masked in place, same length, so the chunk timing still tiles the body. It runs after the
 * client has every byte (./recorder.ts settle), in steps that yield to the event loop.
 */
import type { CapturedExchange } from '../model';
import type { RedactOptions } from '../redact';
import { writeAt } from './files';
import { FRAME_HEADER } from './log';
import { looksLikeSse, maskSplitKeysAsync } from './split-keys';

/** Where a response chunk's bytes sit in the body file. */
export interface FrameAt {
  offset: number;
  pos: number;
  length: number;
}

/** What the pass needs from the store. */
export interface SplitKeysHost {
  /** The exchange's body file from byte `from`, read off the event loop (undefined when there is none). */
  readBodyAsync(id: string, from?: number): Promise<Uint8Array | undefined>;
  /** Runs one synchronous disk write; a failure becomes a throttled warning, never an exception. */
  diskWrite<T>(op: () => T): T | undefined;
}

export type SplitKeys = { keys: number; labels: string[]; streams: string[] };

/**
 * Masks the keys split over SSE events in the response frames of body file `id` (open for writing as `fd()`), which
 * start at byte `responseStart` (after the request frame, which is not read again).
 */
export async function maskSplitKeysInBody(store: SplitKeysHost, id: string, fd: () => number, responseStart: number, redact: RedactOptions): Promise<SplitKeys | undefined> {
  // The response frames only: a large request before them is not read again.
  const skip = responseStart;
  const file = await store.readBodyAsync(id, skip);
  if (!file) return undefined;
  const frames: FrameAt[] = [];
  let offset = 0;
  for (let at = 0; at + FRAME_HEADER <= file.length; ) {
    const length = Math.min(file.length - at - FRAME_HEADER, (file[at + 1] | (file[at + 2] << 8) | (file[at + 3] << 16) | (file[at + 4] << 24)) >>> 0);
    if (file[at] !== 0x52 && file[at] !== 0x51) break; // not a frame: the rest is unreadable
    if (file[at] === 0x52) {
      frames.push({ offset, pos: skip + at + FRAME_HEADER, length });
      offset += length;
    }
    at += FRAME_HEADER + length;
  }
  if (frames.length === 0 || !looksLikeSse(file.subarray(frames[0].pos - skip, frames[0].pos - skip + frames[0].length))) return undefined;
  // The response bytes, joined in place in the buffer just read (frame headers squeezed out), a few MB per turn of
  // the event loop: one 16 MB copy at once holds the loop for tens of milliseconds on a busy machine.
  let moved = 0;
  for (const f of frames) {
    file.copyWithin(f.offset, f.pos - skip, f.pos - skip + f.length);
    moved += f.length;
    if (moved >= JOIN_SLICE) (moved = 0), await new Promise<void>((r) => setImmediate(r));
  }
  const r = await maskSplitKeysAsync(file.subarray(0, offset), redact);
  if (r.ranges.length === 0 || fd() < 0) return undefined;
  for (const m of r.ranges) {
    // The frames holding [m.from, m.to): found by binary search, the first one whose end is past m.from.
    let lo = 0;
    let hi = frames.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (frames[mid].offset + frames[mid].length <= m.from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < frames.length && frames[i].offset < m.to; i++) {
      const f = frames[i];
      const from = Math.max(m.from, f.offset);
      const to = Math.min(m.to, f.offset + f.length);
      if (from >= to) continue;
      if (store.diskWrite(() => writeAt(fd(), [m.bytes.subarray(from - m.from, to - m.from)], f.pos + from - f.offset)) === undefined) return undefined;
    }
  }
  return { keys: r.keys, labels: r.labels, streams: r.streams };
}

/** Bytes moved per turn of the event loop when the response is joined for the end-of-stream pass. */
const JOIN_SLICE = 2 * 1024 * 1024;

/** The capture's note of what the end-of-stream pass masked, and where (the stored response, the delivered bytes). */
export function maskedNote(body: SplitKeys | undefined, delivered: SplitKeys | undefined): CapturedExchange['masked'] {
  if (!body && !delivered) return undefined;
  const where = [...(body?.streams.map((s) => `response ${s}`) ?? []), ...(delivered?.streams.map((s) => `delivered ${s}`) ?? [])];
  return { splitKeys: Math.max(body?.keys ?? 0, delivered?.keys ?? 0), labels: [...new Set([...(body?.labels ?? []), ...(delivered?.labels ?? [])])], where };
}
