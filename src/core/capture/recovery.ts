/**
 * What a restart makes of the exchanges a stopped process left behind (killed, crashed, powered off): its journal
 * (./journal.ts) lists those that had no row yet and names the spare files their bodies were still in; each body
 * file's marks (./log.ts) say what the client was given. An exchange whose file says its response ended is complete:
 * the client had all of it. Anything else is interrupted, with what was kept. Either way the end-of-stream masking of
 * keys split over SSE events, which the stopped process never ran, runs first (`maskStoppedFile`).
 */
import { closeSync, constants, lstatSync, openSync } from 'node:fs';
import type { CapturedExchange, ChunkTiming } from '../model';
import type { RedactOptions } from '../redact';
import type { CaptureThread } from './capture-thread';
import { writeAt } from './files';
import { isCaptureId, type FileMarks, type LegacyEntry } from './log';
import { findSplitKeys, searchSplitKeys, type SplitKeysFound } from './split-keys-body';

/** A spare file's name as journaled: `<pid>/<id-like name>.cap` under spare/ (nothing else becomes a path). */
const SPARE_RE = /^\d+\/[0-9a-z]{8,40}\.cap$/;

/** The spare files a stopped process's journal names, with the exchange each one is the body of. */
export function journaledSpares(entries: Map<string, LegacyEntry>): { spare: string; id: string }[] {
  const out: { spare: string; id: string }[] = [];
  for (const [id, e] of entries) if (e.spare !== undefined && SPARE_RE.test(e.spare) && isCaptureId(id)) out.push({ spare: e.spare, id });
  return out;
}

/** The fields that settle an exchange a stopped process left streaming, from what its body file holds. */
export function stoppedOutcome(x: CapturedExchange, body: { chunks: ChunkTiming[]; marks: FileMarks }): Partial<CapturedExchange> {
  const { chunks, marks } = body;
  const last = chunks.at(-1);
  const bytes = last ? last.offset + last.length : 0;
  const endedAt = x.startedAt + Math.round(last?.t ?? 0);
  // The journal's line of the status joins its next write: a kill before it leaves the status in the file only.
  const status = x.status ?? marks.status;
  const started =
    x.status === undefined && status !== undefined ? { status, ...(x.ttfbMs === undefined && chunks[0] && { ttfbMs: chunks[0].t }) } : {};
  if (marks.ended) return { ...started, state: 'complete', responseBytes: bytes, endedAt, error: null as unknown as undefined };
  return {
    ...started,
    state: 'incomplete',
    responseBytes: bytes,
    endedAt,
    error: `interrupted: Tokenscope stopped while the ${status === undefined ? 'request was pending' : 'response was streaming'} (${bytes} bytes kept)`,
  };
}

/**
 * The end-of-stream pass a stopped process never ran (./split-keys-body.ts): keys the model streamed a few characters
 * per SSE event, masked in place in the file at `path` (a body file, `framed`, or a delivered copy). Run by the next
 * writable open before anything reads the exchange; a file already masked is left as it is. The masks found, or
 * undefined when there were none (or the disk refused them).
 */
export async function maskStoppedFile(
  path: string,
  framed: boolean,
  patterns: RedactOptions['patterns'],
  thread: CaptureThread | undefined,
  diskWrite: <T>(op: () => T) => T | undefined,
): Promise<SplitKeysFound | undefined> {
  let size: number;
  try {
    const st = lstatSync(path);
    if (!st.isFile()) return undefined;
    size = st.size;
  } catch {
    return undefined;
  }
  const found = await findSplitKeys({ path, framed, from: 0, size, patterns }, thread);
  if (!found) return undefined;
  const done = diskWrite(() => {
    const fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW);
    try {
      for (const w of found.writes) writeAt(fd, [w.bytes], w.pos);
    } finally {
      closeSync(fd);
    }
    return true;
  });
  return done ? found : undefined;
}

/** The same masks applied to a copy of a file's bytes: what a reader shows of a stopped stream no writable open has recovered yet. */
export function maskedCopy(file: Uint8Array, framed: boolean, patterns: RedactOptions['patterns']): Uint8Array | undefined {
  // The search joins the response frames in place: it gets a copy of its own.
  const found = searchSplitKeys(Buffer.from(file), { framed, from: 0, patterns });
  if (!found) return undefined;
  const out = Buffer.from(file);
  for (const w of found.writes) out.set(w.bytes, w.pos);
  return out;
}
