/**
 * The capture store's file formats, kept apart from its bookkeeping so they are readable in one place (layout:
 * ./files.ts).
 *
 * The log of earlier versions, <dataDir>/captures.ndjson, one JSON record per line: `put` holds a whole exchange,
 * `patch` merges fields into one, `del` removes one. It is read once, when a version with the database first opens
 * the data dir (readLegacyLog), and then left alone.
 *
 * Body frames: a 13-byte header (type: `Q` request body or `R` response chunk; u32 LE length; f64 LE arrival time,
 * ms since the request started) followed by the bytes. The request frame comes first; then one `R` frame per
 * decoded response chunk, as received except that key-shaped strings are masked to the same length (so offsets and
 * timing stay exact). One file and one write per chunk (or per batch of chunks that arrived together) keep the hot
 * path to a single syscall, and a frame cut short by a crash still yields the bytes it holds.
 *
 * Marks: an empty `R` frame with a negative time. `-status` (100–999) goes with the first response bytes (or alone, when
 * the client gets the head before any byte), `-1` with the last ones: the file itself then says what the client saw
 * (its status, and that the response ended), in the same write as the bytes. Readers of response bytes skip empty
 * frames, and so do versions from before marks.
 */
import type { CapturedExchange, ChunkTiming } from '../model';

export type LogRecord =
  /** `spare`: the spare file (under spare/) the exchange's body is written to until it gets the exchange's name. */
  | { op: 'put'; x: CapturedExchange; reqBytes?: number; pid?: number; spare?: string }
  | { op: 'patch'; id: string; x: Partial<CapturedExchange> }
  | { op: 'del'; id: string };

export const LOG_FILE = 'captures.ndjson';
export const BODIES_DIR = 'bodies';
export const SPARE_DIR = 'spare';

/** What an exchange id looks like (see store.ts newId); anything else never becomes part of a path. */
const ID_RE = /^[0-9a-z]{8,40}$/;

export function isCaptureId(id: unknown): id is string {
  return typeof id === 'string' && ID_RE.test(id);
}

export function encodeRecord(r: LogRecord): string {
  return JSON.stringify(r) + '\n';
}

/** Parses one log line; undefined when it is not a record this version understands. */
export function decodeRecord(line: string): LogRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Record<string, unknown>;
  if (r.op === 'put' && r.x && typeof r.x === 'object' && typeof (r.x as CapturedExchange).id === 'string') return r as LogRecord;
  if ((r.op === 'patch' || r.op === 'del') && typeof r.id === 'string') return r as LogRecord;
  return undefined;
}

export const FRAME_HEADER = 13;
export type FrameType = 'Q' | 'R';

export function frameHeader(type: FrameType, length: number, t: number): Buffer {
  const h = Buffer.allocUnsafe(FRAME_HEADER);
  h[0] = type.charCodeAt(0);
  h.writeUInt32LE(length, 1);
  h.writeDoubleLE(t, 5);
  return h;
}

/** The mark that goes with an exchange's first response bytes: the status the client was given. */
export function startMark(status: number): Buffer {
  return frameHeader('R', 0, -status);
}

/** The mark that goes with the last response bytes: the response ended, and the client has all of it. */
export const END_MARK: Buffer = frameHeader('R', 0, -1);

/** What a body file's marks say (see above). */
export interface FileMarks {
  status?: number;
  ended?: boolean;
}

/** Reads a body file: the request frame, the response bytes with their chunk timing, and its marks. Torn frames keep what they hold. */
export function decodeFrames(file: Uint8Array): { request?: Uint8Array; response: Uint8Array; chunks: ChunkTiming[]; marks: FileMarks } {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const parts: Uint8Array[] = [];
  const chunks: ChunkTiming[] = [];
  let request: Uint8Array | undefined;
  const marks: FileMarks = {};
  let offset = 0;
  for (let at = 0; at + FRAME_HEADER <= buf.length; ) {
    const type = String.fromCharCode(buf[at]);
    const length = buf.readUInt32LE(at + 1);
    const t = buf.readDoubleLE(at + 5);
    const bytes = buf.subarray(at + FRAME_HEADER, Math.min(buf.length, at + FRAME_HEADER + length));
    at += FRAME_HEADER + length;
    if (type === 'Q') request = bytes;
    else if (type === 'R' && bytes.length > 0) {
      parts.push(bytes);
      chunks.push({ t, offset, length: bytes.length });
      offset += bytes.length;
    } else if (type === 'R' && t < 0) {
      if (t === -1) marks.ended = true;
      else if (Number.isInteger(-t) && t <= -100 && t >= -999) marks.status = -t;
    } else if (type !== 'R') break; // not a frame: the rest is unreadable
  }
  return { request, response: parts.length === 1 ? parts[0] : Buffer.concat(parts), chunks, marks };
}

/** One response chunk of a body file, with its arrival time (ms since the request started). */
export interface ResponseFrame {
  bytes: Uint8Array;
  t: number;
}

/** Bytes read from a body file at a time by `responseFrames`. */
const READ_BLOCK = 1 << 20;

/**
 * The response chunks of a body file, read from `fd` a block at a time (memory: one block, whatever the file's size),
 * as `decodeFrames` reads them: the request frame skipped, empty chunks left out, a torn last frame keeping what it
 * holds, and an unreadable frame type ending the body. A chunk's bytes are the caller's to keep.
 */
export function* responseFrames(fd: number, size: number, read: (fd: number, buf: Buffer, at: number) => number): Generator<ResponseFrame> {
  let pos = 0;
  let buf = Buffer.alloc(0);
  /** Reads on until `buf` holds `need` bytes (or the file ends); false when it ended first. */
  const fill = (need: number): boolean => {
    if (buf.length >= need) return true;
    // A torn or corrupt length never asks for more than the file holds.
    const next = Buffer.allocUnsafe(Math.max(Math.min(need, buf.length + size - pos), READ_BLOCK));
    buf.copy(next);
    let n = buf.length;
    while (n < need) {
      const r = read(fd, next.subarray(n), pos);
      if (r === 0) break;
      n += r;
      pos += r;
    }
    buf = next.subarray(0, n);
    return n >= need;
  };
  while (fill(FRAME_HEADER)) {
    const type = String.fromCharCode(buf[0]);
    const length = buf.readUInt32LE(1);
    const t = buf.readDoubleLE(5);
    if (type !== 'Q' && type !== 'R') return;
    const whole = fill(FRAME_HEADER + length);
    const bytes = buf.subarray(FRAME_HEADER, Math.min(buf.length, FRAME_HEADER + length));
    buf = buf.subarray(FRAME_HEADER + bytes.length);
    if (type === 'R' && bytes.length > 0) yield { bytes, t };
    if (!whole) return;
  }
}

/** An exchange as the legacy log holds it after replaying its records. */
export interface LegacyEntry {
  x: CapturedExchange;
  reqBytes: number;
  pid?: number;
  spare?: string;
}

/** Replays the legacy NDJSON log; a corrupt line or an invalid id is skipped with a warning. */
export function readLegacyLog(text: string, warn: (msg: string) => void): Map<string, LegacyEntry> {
  const entries = new Map<string, LegacyEntry>();
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo++;
    if (!line.trim()) continue;
    const rec = decodeRecord(line);
    if (!rec) {
      warn(`capture log line ${lineNo} is corrupt and was skipped`);
      continue;
    }
    const id = rec.op === 'put' ? rec.x.id : rec.id;
    // An id becomes a file name: one that is not an id (`../../victim`) never reaches a path.
    if (!isCaptureId(id)) {
      warn(`capture log record with the invalid id ${JSON.stringify(String(id).slice(0, 40))} was skipped`);
      continue;
    }
    if (rec.op === 'put')
      entries.set(id, { x: rec.x, reqBytes: rec.reqBytes ?? 0, pid: rec.pid, ...(typeof rec.spare === 'string' && { spare: rec.spare }) });
    else if (rec.op === 'patch') {
      const e = entries.get(id);
      if (e) mergeFields(e.x, rec.x);
    } else entries.delete(id);
  }
  return entries;
}

/** Merges fields into an exchange; `null` clears a field (a finished exchange's error from an earlier state). */
export function mergeFields(x: CapturedExchange, fields: Partial<CapturedExchange>): void {
  const target = x as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(fields)) {
    if (v === null) delete target[k];
    else if (v !== undefined) target[k] = v;
  }
}
