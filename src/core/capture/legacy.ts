/** The NDJSON store of an earlier version: imported into the database once, on the first open, then left alone. */
import { join } from 'node:path';
import type { CaptureDb } from './database';
import { readRegularFile } from './files';
import { LOG_FILE, readLegacyLog } from './log';

const LEGACY_IMPORTED = 'legacy-ndjson-imported';

/** Whether the log was imported already (or there is nothing to import): then opening takes no write lock for it. */
export function legacyImported(db: CaptureDb): boolean {
  return db.getMeta(LEGACY_IMPORTED) !== undefined;
}

/** Imports the log's rows into `db` unless done before (a read-only `db` is an in-memory copy: nothing is marked). */
export function importLegacyLog(db: CaptureDb, dataDir: string, warn: (msg: string) => void): void {
  if (db.getMeta(LEGACY_IMPORTED)) return;
  const text = readRegularFile(join(dataDir, LOG_FILE));
  const entries = text ? readLegacyLog(text.toString('utf8'), (m) => warn(`${LOG_FILE}: ${m}`)) : new Map();
  for (const e of entries.values()) db.put(e.x, e.reqBytes, e.pid);
  if (!db.readOnly) db.setMeta(LEGACY_IMPORTED, JSON.stringify({ at: Date.now(), exchanges: entries.size }));
}
