/**
 * The regression watch list: cases (a captured request that was broken, the provider it is pinned to, the rules it
 * broke) and each case's history of re-checks. Kept in the capture database (`watch` and `watch_checks`, schema 2 of
 * ../capture/database.ts), so the extension and a CLI `watch add` or `watch run` in another terminal share one list:
 * every change is one transaction that takes the write lock first, and a re-check appends its result instead of
 * rewriting the case. The `watch.json` of an earlier version is imported on the first writable open, then left alone.
 *
 * Each call opens its own connection and closes it (watch operations are rare; a list held open would go stale).
 * A read-only use (`watch list`) never creates or changes anything: before the import it reads `watch.json`.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CaptureDb, DB_FILE } from '../capture/database';
import { FILE_MODE } from '../capture/files';
import { UserError } from '../model';

/** still-broken: the same rule broke again; fixed: no error in any sample; broken-differently: errors, none of the old rules. */
export type Verdict = 'still-broken' | 'fixed' | 'broken-differently' | 'unchecked';

export interface SampleResult {
  /** The re-run's capture (linked to the case's capture by `parentId`). */
  exchangeId?: string;
  ok: boolean;
  /** Rules of the error findings. */
  errorRules: string[];
  /** Why the request itself failed (HTTP error, unreachable), one line. */
  error?: string;
  servedProvider?: string;
}

export interface CheckResult {
  at: number;
  verdict: Verdict;
  samples: SampleResult[];
  /** For `unchecked`: why nothing could be sent. */
  reason?: string;
}

export interface WatchCase {
  /** Short id (`w1`, `w2`…), what users type. */
  id: string;
  addedAt: number;
  /** The capture the case was made from (a bundle is imported first). */
  captureId: string;
  /** Where it came from, for display: `capture` or the bundle's file name. */
  source: string;
  /** The Chat Completions request, redacted as captured. */
  request: Record<string, unknown>;
  /** `openrouter:SLUG`, `openrouter`, `sglang:URL`: where each re-check is sent. */
  target: string;
  model?: string;
  /** Error rules the capture had: the bug being watched. */
  rules: string[];
  /** The capture's findings when it was added, in short: `rule (severity): message`. */
  findings: string[];
  /** When it was first seen broken (the capture's time). */
  firstBrokenAt: number;
  /** Last time it was broken (the capture, or a later re-check). */
  lastBrokenAt: number;
  /** When it was first found fixed after its last broken check; cleared when it breaks again. */
  fixedSince?: number;
  /** The newest MAX_HISTORY re-checks, newest last (the database keeps them all). */
  history: CheckResult[];
}

export interface WatchList {
  list(): WatchCase[];
  get(id: string): WatchCase | undefined;
  /** Adds a case (its `id` is assigned); returns it. */
  add(c: Omit<WatchCase, 'id' | 'history'> & { history?: CheckResult[] }): WatchCase;
  /** Appends a re-check to a case's history and updates its first/last broken and fixed-since; undefined when it was removed meanwhile. */
  record(id: string, r: CheckResult): WatchCase | undefined;
  remove(id: string): boolean;
}

/** The file an earlier version kept the list in. */
export const WATCH_FILE = 'watch.json';
const MAX_HISTORY = 50;
const IMPORTED = 'watch-json-imported';
const NEXT_ID = 'watch-next-id';

interface FileShape {
  format: 'tokenscope.watch';
  version: 1;
  nextId: number;
  cases: WatchCase[];
}

/** A case's fields after a re-check: last broken and fixed-since follow the verdict. */
export function withResult(c: WatchCase, r: CheckResult): WatchCase {
  const next: WatchCase = { ...c, history: [...c.history, r].slice(-MAX_HISTORY) };
  if (r.verdict === 'still-broken' || r.verdict === 'broken-differently') {
    next.lastBrokenAt = r.at;
    delete next.fixedSince;
  } else if (r.verdict === 'fixed' && next.fixedSince === undefined) {
    next.fixedSince = r.at;
  }
  return next;
}

/** The verdict of a case's newest check (undefined before the first one). */
export function lastVerdict(c: WatchCase): Verdict | undefined {
  return c.history.at(-1)?.verdict;
}

/** The watch list of `dataDir`. `readOnly`: reading never creates the database or imports the old file. */
export function openWatchList(dataDir: string, opts: { readOnly?: boolean } = {}): WatchList {
  return new DbWatchList(dataDir, opts.readOnly === true);
}

/** The old `watch.json`, or undefined when there is none. */
function readWatchFile(path: string): FileShape | undefined {
  if (!existsSync(path)) return undefined;
  let doc: FileShape;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8')) as FileShape;
  } catch (e) {
    throw new UserError(`the watch list ${path} is unreadable (${(e as Error).message.split('\n')[0]}); move it away to start a new one`);
  }
  if (doc?.format !== 'tokenscope.watch' || !Array.isArray(doc.cases)) throw new UserError(`${path} is not a Tokenscope watch list`);
  return doc;
}

interface CaseRow {
  id: string;
  data: string;
}

class DbWatchList implements WatchList {
  private readonly dbPath: string;

  constructor(
    private readonly dir: string,
    private readonly readOnly: boolean,
  ) {
    this.dbPath = join(dir, DB_FILE);
  }

  /** Reads from the database once it holds the list, else from the old file (a read never imports or creates). */
  private read<T>(fn: (db: CaptureDb) => T, fromFile: (file: FileShape | undefined) => T): T {
    const db = existsSync(this.dbPath) ? CaptureDb.open(this.dbPath, { readOnly: true }) : undefined;
    try {
      if (db && db.version() >= 2 && db.getMeta(IMPORTED)) return fn(db);
    } finally {
      db?.close();
    }
    return fromFile(readWatchFile(join(this.dir, WATCH_FILE)));
  }

  /** Runs `fn` in one write transaction (creating and migrating the database, importing the old file first). */
  private write<T>(fn: (db: CaptureDb) => T): T {
    if (this.readOnly) throw new UserError('the watch list is open read-only');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const fresh = !existsSync(this.dbPath);
    const db = CaptureDb.open(this.dbPath);
    try {
      if (fresh) for (const f of [this.dbPath, `${this.dbPath}-wal`, `${this.dbPath}-shm`]) if (existsSync(f)) chmodSync(f, FILE_MODE);
      return db.batch(() => {
        this.importFile(db);
        return fn(db);
      });
    } finally {
      db.close();
    }
  }

  /** Imports `watch.json` once, keeping its ids and histories (inside the caller's transaction). */
  private importFile(db: CaptureDb): void {
    if (db.getMeta(IMPORTED)) return;
    const doc = readWatchFile(join(this.dir, WATCH_FILE));
    let top = 0;
    for (const c of doc?.cases ?? []) {
      const n = Number(c.id.slice(1)) || 0;
      top = Math.max(top, n);
      insertCase(db, c, n);
    }
    db.setMeta(NEXT_ID, String(Math.max(doc?.nextId ?? 1, top + 1)));
    db.setMeta(IMPORTED, JSON.stringify({ at: Date.now(), cases: doc?.cases.length ?? 0 }));
  }

  list(): WatchCase[] {
    return this.read(
      (db) => db.rows<CaseRow>('SELECT id, data FROM watch ORDER BY n').map((r) => withHistory(db, r)),
      (f) => f?.cases ?? [],
    );
  }

  get(id: string): WatchCase | undefined {
    return this.read(
      (db) => {
        const r = db.rows<CaseRow>('SELECT id, data FROM watch WHERE id = ?', id)[0];
        return r ? withHistory(db, r) : undefined;
      },
      (f) => f?.cases.find((c) => c.id === id),
    );
  }

  add(c: Omit<WatchCase, 'id' | 'history'> & { history?: CheckResult[] }): WatchCase {
    return this.write((db) => {
      const n = Number(db.getMeta(NEXT_ID) ?? 1);
      db.setMeta(NEXT_ID, String(n + 1));
      const full: WatchCase = { id: `w${n}`, ...c, history: c.history ?? [] };
      insertCase(db, full, n);
      return full;
    });
  }

  record(id: string, r: CheckResult): WatchCase | undefined {
    return this.write((db) => {
      const row = db.rows<CaseRow>('SELECT id, data FROM watch WHERE id = ?', id)[0];
      if (!row) return undefined; // removed meanwhile
      const next = withResult(withHistory(db, row), r);
      db.write('INSERT INTO watch_checks (case_id, at, verdict, result) VALUES (?, ?, ?, ?)', id, r.at, r.verdict, JSON.stringify(r));
      db.write('UPDATE watch SET data = ? WHERE id = ?', caseData(next), id);
      return next;
    });
  }

  remove(id: string): boolean {
    return this.write((db) => {
      const n = db.write('DELETE FROM watch WHERE id = ?', id);
      db.write('DELETE FROM watch_checks WHERE case_id = ?', id);
      return n > 0;
    });
  }
}

/** The row's JSON: the case without its id and history (those are columns and rows of their own). */
function caseData(c: WatchCase): string {
  const { id: _id, history: _history, ...rest } = c;
  return JSON.stringify(rest);
}

function insertCase(db: CaptureDb, c: WatchCase, n: number): void {
  db.write('INSERT INTO watch (id, n, added_at, capture_id, data) VALUES (?, ?, ?, ?, ?)', c.id, n, c.addedAt, c.captureId, caseData(c));
  for (const r of c.history ?? [])
    db.write('INSERT INTO watch_checks (case_id, at, verdict, result) VALUES (?, ?, ?, ?)', c.id, r.at, r.verdict, JSON.stringify(r));
}

function withHistory(db: CaptureDb, r: CaseRow): WatchCase {
  const checks = db.rows<{ result: string }>(
    'SELECT result FROM watch_checks WHERE case_id = ? ORDER BY at DESC, rowid DESC LIMIT ?',
    r.id,
    MAX_HISTORY,
  );
  return {
    id: r.id,
    ...(JSON.parse(r.data) as Omit<WatchCase, 'id' | 'history'>),
    history: checks.reverse().map((c) => JSON.parse(c.result) as CheckResult),
  };
}
