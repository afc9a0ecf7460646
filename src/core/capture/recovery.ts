/**
 * What a restart makes of the exchanges a stopped process left behind (killed, crashed, powered off): its journal
 * (./journal.ts) lists those that had no row yet and names the spare files their bodies were still in; each body
 * file's marks (./log.ts) say what the client was given. An exchange whose file says its response ended is complete:
 * the client had all of it. Anything else is interrupted, with what was kept.
 */
import type { CapturedExchange, ChunkTiming } from '../model';
import { isCaptureId, type FileMarks, type LegacyEntry } from './log';

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
  const started = x.status === undefined && status !== undefined ? { status, ...(x.ttfbMs === undefined && chunks[0] && { ttfbMs: chunks[0].t }) } : {};
  if (marks.ended) return { ...started, state: 'complete', responseBytes: bytes, endedAt, error: null as unknown as undefined };
  return {
    ...started,
    state: 'incomplete',
    responseBytes: bytes,
    endedAt,
    error: `interrupted: Tokenscope stopped while the ${status === undefined ? 'request was pending' : 'response was streaming'} (${bytes} bytes kept)`,
  };
}
