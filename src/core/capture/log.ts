/**
 * The capture store's on-disk format, kept apart from its bookkeeping so the format is readable in one place.
 *
 *   <dataDir>/captures.ndjson   append-only log, one JSON record per line (below): every exchange's metadata
 *   <dataDir>/bodies/<id>.cap    the exchange's bytes as frames, written as they arrive (below)
 *   <dataDir>/spare/             empty body files created ahead of need, renamed into bodies/ when an exchange starts
 *
 * Log records: `put` holds a whole exchange (begin, compaction), `patch` merges fields into one, `del` removes one.
 *
 * Body frames: a 13-byte header (type: `Q` request body or `R` response chunk; u32 LE length; f64 LE arrival time,
 * ms since the request started) followed by the bytes. The request frame comes first; then one `R` frame per
 * decoded response chunk, as received except that key-shaped strings are masked to the same length (so offsets and
 * timing stay exact). One file and one write per chunk (or per batch of chunks that arrived together) keep the hot
 * path to a single syscall, and a frame cut short by a crash still yields the bytes it holds.
 */
import type { CapturedExchange, ChunkTiming } from '../model';

export type LogRecord =
  | { op: 'put'; x: CapturedExchange; reqBytes?: number; pid?: number }
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

/** Reads a body file: the request frame, and the response bytes with their chunk timing. Torn frames keep what they hold. */
export function decodeFrames(file: Uint8Array): { request?: Uint8Array; response: Uint8Array; chunks: ChunkTiming[] } {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const parts: Uint8Array[] = [];
  const chunks: ChunkTiming[] = [];
  let request: Uint8Array | undefined;
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
    } else if (type !== 'R') break; // not a frame: the rest is unreadable
  }
  return { request, response: parts.length === 1 ? parts[0] : Buffer.concat(parts), chunks };
}
