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
  const hits = !idOrPrefix ? [] : reader.idsWithPrefix ? reader.idsWithPrefix(idOrPrefix, 50) : reader.list().flatMap((x) => (x.id.startsWith(idOrPrefix) ? [x.id] : []));
  if (hits.length === 1) return reader.get(hits[0])!;
  if (hits.length === 0) throw new UserError(`no capture with id "${idOrPrefix}" (\`tokenscope captures\` lists them)`);
  throw new UserError(`"${idOrPrefix}" matches ${hits.length} captures; give more of the id`);
}

let lastIdTime = 0;
let idSeq = 0;
/** Sortable, time-based, short: 9 base-36 digits of ms, a per-ms sequence, and randomness against other processes. */
export function newId(now: number): string {
  if (now === lastIdTime) idSeq++;
  else (lastIdTime = now), (idSeq = 0);
  const rand = Math.floor(Math.random() * 36 ** 3).toString(36).padStart(3, '0');
  return now.toString(36).padStart(9, '0') + idSeq.toString(36).padStart(2, '0') + rand;
}
