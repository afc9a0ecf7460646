/**
 * The end-of-stream pass over one file: keys the model streamed a few characters per SSE event (./split-keys.ts)
 * are found in an exchange's body file (its response frames) or in repair mode's delivered file (plain bytes), and
 * masked in place, same length, so the chunk timing still tiles the body. It runs after the client has every byte
 * (./recorder.ts settle). A large file is read and searched on the capture worker thread (./capture-thread.ts), so
 * the proxy's event loop only writes the few masked bytes back; a small one here, in steps that yield to the loop.
 */
import type { CapturedExchange } from '../model';
import type { RedactOptions } from '../redact';
import { OFF_THREAD_BYTES, type CaptureThread } from './capture-thread';
import { readRegularFileAsync, writeAt } from './files';
import { FRAME_HEADER } from './log';
import { looksLikeSse, SplitKeyMasker, type SplitMaskResult } from './split-keys';

/** What to search: the file at `path` from byte `from`, read as body-file frames (`framed`) or as plain bytes. */
export interface SplitKeysJob {
  path: string;
  framed: boolean;
  from: number;
  /** The file's size as the writer knows it: above OFF_THREAD_BYTES the search runs on the worker thread. */
  size: number;
  patterns?: RedactOptions['patterns'];
}

/** The masks found, as positions in the file and the bytes to write there. */
export interface SplitKeysFound {
  writes: { pos: number; bytes: Uint8Array }[];
  keys: number;
  labels: string[];
  streams: string[];
}

/** Where a response chunk's bytes sit in the body file. */
export interface FrameAt {
  offset: number;
  pos: number;
  length: number;
}

/** What the pass needs from the store. */
export interface SplitKeysHost {
  /** The masks for the exchange's body file (`cap`, from byte `from`) or delivered file; undefined when none. */
  findSplitKeys(
    id: string,
    ext: 'cap' | 'delivered',
    from: number,
    size: number,
    redact: RedactOptions,
  ): Promise<SplitKeysFound | undefined>;
  /** Runs one synchronous disk write; a failure becomes a throttled warning, never an exception. */
  diskWrite<T>(op: () => T): T | undefined;
}

/** Bytes moved per step when the response frames are joined (one 16 MB copy at once holds the loop for tens of ms). */
const JOIN_SLICE = 2 * 1024 * 1024;

/**
 * The search, as steps of about `sliceMs` each (a yield between two): `file` is the file's bytes from `job.from`,
 * and is changed (its response frames are joined in place, frame headers squeezed out).
 */
function* searchSteps(
  file: Uint8Array,
  job: Pick<SplitKeysJob, 'framed' | 'from' | 'patterns'>,
  sliceMs: number,
): Generator<void, SplitKeysFound | undefined> {
  let frames: FrameAt[] | undefined;
  let body = file;
  if (job.framed) {
    frames = framesInBuffer(file, job.from);
    if (frames.length === 0 || !looksLikeSse(file.subarray(frames[0].pos - job.from, frames[0].pos - job.from + frames[0].length)))
      return undefined;
    let moved = 0;
    for (const f of frames) {
      file.copyWithin(f.offset, f.pos - job.from, f.pos - job.from + f.length);
      moved += f.length;
      if (moved >= JOIN_SLICE) (moved = 0), yield;
    }
    const last = frames[frames.length - 1];
    body = file.subarray(0, last.offset + last.length);
  } else if (!looksLikeSse(file)) return undefined;
  const m = new SplitKeyMasker(body, { patterns: job.patterns });
  while (!m.step(sliceMs)) yield;
  const r = m.result();
  if (r.ranges.length === 0) return undefined;
  return {
    writes: frames ? frameWrites(r.ranges, frames) : r.ranges.map((x) => ({ pos: x.from, bytes: x.bytes })),
    keys: r.keys,
    labels: r.labels,
    streams: r.streams,
  };
}

/** The search at once (the worker thread runs it so). */
export function searchSplitKeys(file: Uint8Array, job: Pick<SplitKeysJob, 'framed' | 'from' | 'patterns'>): SplitKeysFound | undefined {
  const steps = searchSteps(file, job, Infinity);
  for (;;) {
    const n = steps.next();
    if (n.done) return n.value;
  }
}

/** The masks for one file: on the worker thread when large (here if it cannot run), else here in steps. */
export async function findSplitKeys(job: SplitKeysJob, thread: CaptureThread | undefined): Promise<SplitKeysFound | undefined> {
  if (job.size - job.from > OFF_THREAD_BYTES && thread) {
    try {
      const off = thread.splitKeys(job);
      if (off) return await off;
    } catch {
      // The worker failed: the search runs here instead.
    }
  }
  const file = await readRegularFileAsync(job.path, job.from);
  if (!file) return undefined;
  const steps = searchSteps(file, job, STEP_MS);
  for (;;) {
    const n = steps.next();
    if (n.done) return n.value;
    await new Promise<void>((r) => setImmediate(r));
  }
}

/** Writes the masks into the file open as `fd`; false when the disk refused one. */
export function writeMasks(host: SplitKeysHost, fd: number, found: SplitKeysFound): boolean {
  for (const w of found.writes) if (host.diskWrite(() => writeAt(fd, [w.bytes], w.pos)) === undefined) return false;
  return true;
}

/** The longest the in-thread search works before yielding to the event loop (ms). */
const STEP_MS = 2;

/**
 * The response frames of a body file read into memory from byte `skip`, each with its place in the file and in the
 * joined response (log.ts `responseFrames` streams them from a file, without places).
 */
function framesInBuffer(file: Uint8Array, skip: number): FrameAt[] {
  const frames: FrameAt[] = [];
  let offset = 0;
  for (let at = 0; at + FRAME_HEADER <= file.length; ) {
    const length = Math.min(
      file.length - at - FRAME_HEADER,
      (file[at + 1] | (file[at + 2] << 8) | (file[at + 3] << 16) | (file[at + 4] << 24)) >>> 0,
    );
    if (file[at] !== 0x52 && file[at] !== 0x51) break; // not a frame: the rest is unreadable
    if (file[at] === 0x52 && length > 0) {
      frames.push({ offset, pos: skip + at + FRAME_HEADER, length });
      offset += length;
    }
    at += FRAME_HEADER + length;
  }
  return frames;
}

/** Masked ranges of the joined response, as writes into the frames holding them (found by binary search). */
function frameWrites(ranges: SplitMaskResult['ranges'], frames: FrameAt[]): SplitKeysFound['writes'] {
  const writes: SplitKeysFound['writes'] = [];
  for (const m of ranges) {
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
      if (from < to) writes.push({ pos: f.pos + from - f.offset, bytes: m.bytes.subarray(from - m.from, to - m.from) });
    }
  }
  return writes;
}

/** The capture's note of what the end-of-stream pass masked, and where (the stored response, the delivered bytes). */
export function maskedNote(body: SplitKeysFound | undefined, delivered: SplitKeysFound | undefined): CapturedExchange['masked'] {
  if (!body && !delivered) return undefined;
  const where = [...(body?.streams.map((s) => `response ${s}`) ?? []), ...(delivered?.streams.map((s) => `delivered ${s}`) ?? [])];
  return {
    splitKeys: Math.max(body?.keys ?? 0, delivered?.keys ?? 0),
    labels: [...new Set([...(body?.labels ?? []), ...(delivered?.labels ?? [])])],
    where,
  };
}
