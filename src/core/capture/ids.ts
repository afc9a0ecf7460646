/** Where captures live, and ids: new ones (sortable by time) and the ones users type (an id or a unique prefix). */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UserError, type CaptureReader, type CapturedExchange } from '../model';

export function defaultDataDir(): string {
  return process.env.TOKENSCOPE_DATA_DIR || join(homedir(), '.tokenscope');
}

type PrefixReader = CaptureReader & { idsWithPrefix?(prefix: string, limit: number): string[] };

/** An exchange by id or unique id prefix (what users type); a UserError naming the problem otherwise. */
export function findCapture(reader: PrefixReader, idOrPrefix: string): CapturedExchange {
  const exact = reader.get(idOrPrefix);
  if (exact) return exact;
  const hits = !idOrPrefix
    ? []
    : reader.idsWithPrefix
      ? reader.idsWithPrefix(idOrPrefix, 50)
      : reader.list().flatMap((x) => (x.id.startsWith(idOrPrefix) ? [x.id] : []));
  if (hits.length === 1) return reader.get(hits[0])!;
  if (hits.length === 0) throw new UserError(`no capture with id "${idOrPrefix}" (\`tokenscope captures\` lists them)`);
  throw new UserError(`"${idOrPrefix}" matches ${hits.length} captures; give more of the id`);
}

/**
 * The last sequence number given out for each of the most recent milliseconds ids were made for. Kept per millisecond,
 * not only for the last one: exchanges begun with the same given start time (an import, a re-run) are interleaved
 * with ids for now (spare body files), and must still sort in the order they were made and never collide.
 */
const idSeqs = new Map<number, number>();
const ID_SEQ_MS_KEPT = 256;
/** Sortable, time-based, short: 9 base-36 digits of ms, a per-ms sequence, and randomness against other processes. */
export function newId(now: number): string {
  const seq = (idSeqs.get(now) ?? -1) + 1;
  idSeqs.delete(now);
  idSeqs.set(now, seq);
  if (idSeqs.size > ID_SEQ_MS_KEPT) idSeqs.delete(idSeqs.keys().next().value!);
  const rand = Math.floor(Math.random() * 36 ** 3)
    .toString(36)
    .padStart(3, '0');
  return now.toString(36).padStart(9, '0') + seq.toString(36).padStart(2, '0') + rand;
}
