/**
 * A writing store's journal: one NDJSON line (./log.ts records) per exchange begun, appended synchronously in the tick
 * it happens, naming the spare file its body goes to until that file has the exchange's name. A proxied response's
 * start and end are in its body file's marks, in the write of its bytes (./log.ts); their lines here are held for the
 * journal's next write (see `patch`), and other writers' are written at once. The database row of an exchange is written in a batch
 * after the forwarding path has moved on (./store.ts flushLog); the journal is what a crash before that batch leaves
 * behind, so a restart still lists the exchange and reads its body file. One small write to an open file costs a few
 * microseconds; the SQLite commit it stands in for costs a few hundred and sometimes a checkpoint.
 *
 *   <dataDir>/journal/<pid>-<n>.ndjson   one per open store; emptied whenever every row it covers is written,
 *                                       removed when the store closes, replayed by the next writable open once its
 *                                       process is gone
 *
 * An emptied journal still names the exchanges not finished yet (a line each, written again), so a restart after a
 * crash runs the end-of-stream masking their process may not have run (./recovery.ts).
 */
import { closeSync, constants, ftruncateSync, openSync, readdirSync, rmdirSync, rmSync, writeSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { CapturedExchange } from '../model';
import type { CaptureDb } from './database';
import { DIR_MODE, FILE_MODE, makeDir, processAlive, readRegularFile } from './files';
import { encodeRecord, readLegacyLog, type LegacyEntry, type LogRecord } from './log';

export const JOURNAL_DIR = 'journal';
/** Past this size the journal is emptied at the next moment every row it covers is in the database. */
const TRUNCATE_AT = 256 * 1024;
const NAME_RE = /^(\d+)-[0-9a-z]+\.ndjson$/;

export class Journal {
  private fd = -1;
  private size = 0;
  /** Exchanges with a journal line newer than their last written row. */
  private readonly ahead = new Set<string>();
  /** Fields held for the next write (`patch` with `hold`): they go in the same write as the next line, or `flush`. */
  private readonly held = new Map<string, Partial<CapturedExchange>>();
  /** Exchanges whose body is still in the spare file their line names: the journal is kept until it has its name. */
  private readonly inSpare = new Set<string>();
  readonly path: string;

  constructor(
    private readonly dir: string,
    private readonly diskWrite: <T>(op: () => T) => T | undefined,
  ) {
    this.path = join(dir, `${process.pid}-${Math.floor(Math.random() * 36 ** 6).toString(36)}.ndjson`);
  }

  /** The journals of stores whose process is gone: their exchanges (as replayed) and the files, to remove once applied. */
  leftovers(warn: (msg: string) => void): { entries: Map<string, LegacyEntry>; files: string[] } {
    const entries = new Map<string, LegacyEntry>();
    const files: string[] = [];
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return { entries, files };
    }
    for (const name of names.sort()) {
      const m = NAME_RE.exec(name);
      if (!m || processAlive(Number(m[1]))) continue;
      const path = join(this.dir, name);
      const text = readRegularFile(path)?.toString('utf8') ?? '';
      // A line cut by the crash is the last one: it is dropped without a warning.
      const whole = text.slice(0, text.lastIndexOf('\n') + 1);
      for (const [id, e] of readLegacyLog(whole, (msg) => warn(`capture journal ${name}: ${msg}`))) entries.set(id, e);
      files.push(path);
    }
    return { entries, files };
  }

  /** Creates this store's journal file (and the folder). */
  open(): void {
    // Another process's clean stop removes the folder when it is empty: made again if it went in between.
    for (let attempt = 0; attempt < 3 && this.fd < 0; attempt++) {
      try {
        makeDir(this.dir);
        chmodSync(this.dir, DIR_MODE);
        this.fd = openSync(this.path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_TRUNC, FILE_MODE);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 2)
          this.fd =
            this.diskWrite(() =>
              openSync(this.path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_TRUNC, FILE_MODE),
            ) ?? -1;
      }
    }
  }

  /** An exchange begun (its record as the row will hold it), and the spare file its body goes to for now. */
  put(x: CapturedExchange, reqBytes: number, spare?: string): void {
    if (spare !== undefined) this.inSpare.add(x.id);
    this.append(x.id, { op: 'put', x, reqBytes, pid: process.pid, ...(spare !== undefined && { spare }) });
  }

  /** The exchange's spare file has its name (or is gone). */
  adopted(id: string): void {
    this.inSpare.delete(id);
  }

  /**
   * Fields of an exchange the row does not hold yet. With `hold` they wait, to share the next line's write (an
   * exchange's response start and end cost no write of their own) or `flush`.
   */
  patch(id: string, fields: Partial<CapturedExchange>, hold = false): void {
    if (!hold) return this.append(id, { op: 'patch', id, x: fields });
    if (this.fd < 0) return;
    const h = this.held.get(id);
    this.held.set(id, h ? { ...h, ...fields } : { ...fields });
  }

  /** Writes the held fields, if any (one write). */
  flush(): void {
    if (this.held.size > 0) this.append(undefined, undefined);
  }

  /**
   * These exchanges' rows are written: their lines are no longer needed (nor their held fields, which the rows hold),
   * and once none is, the journal is emptied; `unsettled` then gives the exchanges not finished yet, which get a line
   * again (see above).
   */
  written(ids: Iterable<string>, unsettled?: () => { x: CapturedExchange; reqBytes: number }[]): void {
    for (const id of ids) this.ahead.delete(id), this.held.delete(id);
    if (this.ahead.size === 0 && this.inSpare.size === 0 && this.size >= TRUNCATE_AT && this.fd >= 0) {
      if (!this.diskWrite(() => (ftruncateSync(this.fd, 0), true))) return;
      this.size = 0;
      const lines = (unsettled?.() ?? []).map((u) => encodeRecord({ op: 'put', x: u.x, reqBytes: u.reqBytes, pid: process.pid })).join('');
      const fd = this.fd;
      if (lines && this.diskWrite(() => writeSync(fd, Buffer.from(lines))) !== undefined) this.size += Buffer.byteLength(lines);
    }
  }

  /**
   * The store is closing (`rowsLeft`: some rows could not be written). When every row is written, the journal goes (fields still held are in the rows already),
   * and so does the journal folder once no other store has a journal in it; otherwise the next start replays it.
   */
  close(rowsLeft = false): void {
    const done = !rowsLeft && this.ahead.size === 0 && this.inSpare.size === 0;
    if (done) this.held.clear();
    else this.flush();
    const fd = this.fd;
    this.fd = -1;
    if (fd < 0) return;
    this.diskWrite(() => closeSync(fd));
    if (!done) return;
    this.diskWrite(() => rmSync(this.path, { force: true }));
    try {
      rmdirSync(this.dir);
    } catch {
      // another store's journal is there (ENOTEMPTY), or it is gone already
    }
  }

  /** Writes `r` (if any) and every held line, in one write. */
  private append(id: string | undefined, r: LogRecord | undefined): void {
    if (this.fd < 0) return;
    let text = '';
    const ids = [...this.held.keys()];
    for (const [hid, x] of this.held) {
      if (hid === id && r?.op === 'patch') r = { ...r, x: { ...x, ...r.x } };
      else text += encodeRecord({ op: 'patch', id: hid, x });
    }
    this.held.clear();
    if (r) text += encodeRecord(r);
    const line = Buffer.from(text);
    const fd = this.fd;
    if (this.diskWrite(() => writeSync(fd, line)) === undefined) return;
    this.size += line.length;
    for (const i of ids) this.ahead.add(i);
    if (id !== undefined) this.ahead.add(id);
  }
}

/** Removes replayed journals (after what they held is in the database). */
export function removeJournals(files: string[], diskWrite: <T>(op: () => T) => T | undefined): void {
  for (const f of files) diskWrite(() => rmSync(f, { force: true }));
}

/**
 * Writes what a stopped process's journal holds and its rows do not: an exchange with no row at all (unless it was
 * deleted since), and the "complete" of one whose row still says streaming. Run inside one transaction; the store then
 * marks what still streams as interrupted, like any row a stopped process left streaming.
 */
export function replayJournal(db: CaptureDb, entries: Map<string, LegacyEntry>): void {
  for (const [id, e] of entries) {
    const row = db.get(id);
    if (!row) {
      if (!db.wasDeleted(id)) db.put(e.x, e.reqBytes, e.pid);
    } else if (row.x.state === 'streaming' && e.x.state === 'complete') {
      db.put(
        { ...row.x, state: 'complete', endedAt: e.x.endedAt, responseBytes: e.x.responseBytes, status: row.x.status ?? e.x.status },
        row.reqBytes,
        row.pid,
      );
    }
  }
}
