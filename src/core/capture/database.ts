/**
 * The capture database: every exchange's metadata, sessions, summaries, findings and full analyses, in SQLite (WAL),
 * so the extension's proxy, a CLI `serve` and any number of read-only commands share one data dir. Raw bytes stay in
 * the body files (./recorder.ts); a row refers to its file by id.
 *
 * Binding: `libsql` (Node-API, prebuilt per platform in @libsql/<platform> packages, loads in Node 20 and in VS Code's
 * extension host, better-sqlite3's synchronous API). A read-only open uses a read-only connection: it never writes.
 * Every row carries a change sequence number, so a reader refreshes its cached list with only what changed, whichever
 * process changed it.
 */
import { createRequire } from 'node:module';
import type { CapturedExchange, ExchangeSummary, Finding } from '../model';
import { isBrokenExchange } from './describe';
import { MIGRATIONS, SCHEMA_VERSION } from './schema';

export { SCHEMA_VERSION } from './schema';

export const DB_FILE = 'captures.db';
/** How long a read, or a write that may wait, waits for another connection's write lock. */
const BUSY_TIMEOUT_MS = 5000;

/** An SQLite URI for `path` with `query` (a read-only open: the binding takes its flags from the URI only). */
function fileUri(path: string, query: string): string {
  return `file:${path.split('/').map(encodeURIComponent).join('/')}?${query}`;
}

/** What an error from the database means for the store. */
export type DbFailure = 'busy' | 'full' | 'corrupt' | 'newer' | undefined;

export function dbFailure(e: unknown): DbFailure {
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err?.code === 'string' ? err.code : '';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (code.startsWith('SQLITE_FULL') || code === 'ENOSPC') return 'full';
  if (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB')) return 'corrupt';
  if (/written by a newer Tokenscope/.test(String(err?.message ?? ''))) return 'newer';
  return undefined;
}

/** Runs `fn`, again while SQLite answers busy without waiting itself (up to BUSY_TIMEOUT_MS; only when opening). */
function whileBusy<T>(fn: () => T): T {
  const until = Date.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let wait = 1; ; wait = Math.min(50, wait * 2)) {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e) || Date.now() > until) throw e;
      Atomics.wait(pause, 0, 0, wait);
    }
  }
}

/** Whether another connection holds the write lock (a `batch` with `wait: false` that could not start). */
export function isBusy(e: unknown): boolean {
  return dbFailure(e) === 'busy';
}

/** better-sqlite3's API, as libsql implements it (only what the store uses). */
interface Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  raw(on?: boolean): Statement;
}
interface Connection {
  prepare(sql: string): Statement;
  exec(sql: string): void;
  pragma(sql: string): unknown;
  readonly inTransaction: boolean;
  close(): void;
}

type ConnectionClass = new (path: string) => Connection;
let binding: ConnectionClass | undefined;
/** Loaded on first use: a build that never opens a store never loads the native module. */
function sqlite(): ConnectionClass {
  binding ??= createRequire(__filename)('libsql') as ConnectionClass;
  return binding;
}

/** What `captures` filters on. Times are epoch ms; `limit` counts the newest matches. */
export interface ExchangeQuery {
  broken?: boolean;
  model?: string;
  provider?: string;
  rule?: string;
  agent?: string;
  session?: string;
  since?: number;
  until?: number;
  limit?: number;
}

export interface StoredRow {
  x: CapturedExchange;
  reqBytes: number;
  pid?: number;
}

interface RawRow {
  data: string;
  req_bytes: number;
  pid: number | null;
  seq: number;
}

export class CaptureDb {
  private readonly conn: Connection;
  private readonly stmts = new Map<string, Statement>();
  private seq = 0;
  private closed = false;

  private constructor(
    db: Connection,
    readonly readOnly: boolean,
    /** The file's path (undefined for a database in memory, which no other connection can share). */
    readonly path: string | undefined,
  ) {
    this.conn = db;
  }

  /** The connection; using it after `close` is an error here (the binding aborts the whole process on it). */
  private get db(): Connection {
    if (this.closed) throw new Error('the capture database is closed');
    return this.conn;
  }

  /**
   * Opens (and with write access, creates and migrates) the database at `path`; `:memory:` for a throwaway one. A
   * read-only open is a read-only connection (it never writes); with `immutable` (a folder that cannot be written, such
   * as a read-only mount, where SQLite cannot make its shared-memory file) the file is read as it is, without the
   * write-ahead log: what a clean stop left there is in the file already (see `close`).
   */
  static open(path: string, opts: { readOnly?: boolean; immutable?: boolean } = {}): CaptureDb {
    const Sqlite = sqlite();
    const readOnly = opts.readOnly === true;
    const conn = new Sqlite(readOnly ? fileUri(path, opts.immutable ? 'mode=ro&immutable=1' : 'mode=ro') : path);
    const db = new CaptureDb(conn, readOnly, path === ':memory:' ? undefined : path);
    try {
      // Several processes share the file: a read, or a write outside the proxy's path, waits for another's write
      // instead of failing at once. The proxy's own writes never wait (`batch` with `wait: false`).
      conn.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      if (!readOnly) {
        // A new file's first connections race to switch it to WAL; SQLite refuses the loser at once ("database is
        // locked", no busy wait): it tries again.
        whileBusy(() => conn.pragma('journal_mode = WAL'));
        // WAL with NORMAL sync: a commit costs no fsync, and a crash loses no committed transaction, only the last ones
        // of a power cut. Body bytes are written straight to the kernel anyway.
        conn.pragma('synchronous = NORMAL');
        whileBusy(() => db.migrate());
      } else if (db.version() > SCHEMA_VERSION) {
        throw new Error(
          `the capture database ${path} was written by a newer Tokenscope (schema ${db.version()}); update Tokenscope to read it`,
        );
      }
      db.seq = (db.one<{ s: number | null }>(
        'SELECT max(s) AS s FROM (SELECT max(seq) AS s FROM exchanges UNION ALL SELECT max(seq) FROM deleted)',
      )?.s ?? 0) as number;
    } catch (e) {
      try {
        conn.close();
      } catch {
        // already unusable
      }
      throw e;
    }
    return db;
  }

  version(): number {
    const rows = this.db.pragma('user_version') as { user_version: number }[];
    return rows[0]?.user_version ?? 0;
  }

  /**
   * Applies every migration above the file's version, in one transaction that holds the write lock: two processes
   * opening a new data dir at once (the extension's proxy and a CLI `serve`) migrate it once; the second one waits,
   * reads the version again under the lock and finds nothing left to do.
   */
  private migrate(): void {
    const newer = (v: number) =>
      new Error(`the capture database was written by a newer Tokenscope (schema ${v}); update Tokenscope to use it`);
    if (this.version() > SCHEMA_VERSION) throw newer(this.version());
    if (this.version() === SCHEMA_VERSION) return;
    this.batch(() => {
      const from = this.version();
      if (from > SCHEMA_VERSION) throw newer(from);
      for (let v = from; v < SCHEMA_VERSION; v++) this.db.exec(MIGRATIONS[v]);
      if (from < SCHEMA_VERSION) this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    });
  }

  /**
   * Closes the connection. A writable one first copies the write-ahead log into the file and empties it, when no other
   * connection needs it (without waiting): the next open starts clean, and a reader that can only read the file as it
   * is (a read-only mount) finds every capture in it.
   */
  close(): void {
    if (this.closed) return;
    if (!this.readOnly && this.path !== undefined) {
      try {
        this.setBusyTimeout(0);
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // another connection is busy with it: the next open's checkpoints copy it
      }
    }
    this.closed = true;
    this.conn.close();
  }

  /**
   * Runs `fn` in one transaction (a batch of writes: one commit) and returns what it returns. With `wait: false` the
   * write lock is taken only if it is free now: another connection holding it (another process's commit, a backup
   * tool, `sqlite3` in a terminal) makes this throw at once (`isBusy`), and nothing was written.
   */
  batch<T>(fn: () => T, opts: { wait?: boolean } = {}): T {
    // IMMEDIATE: the write lock is taken first, so change numbers read inside grow across processes.
    if (opts.wait === false) {
      this.setBusyTimeout(0);
      try {
        this.stmt('BEGIN IMMEDIATE').run();
      } finally {
        this.setBusyTimeout(BUSY_TIMEOUT_MS);
      }
    } else this.stmt('BEGIN IMMEDIATE').run();
    let result: T;
    try {
      result = fn();
      this.stmt('COMMIT').run();
    } catch (e) {
      // SQLite itself ends a transaction a full disk or an I/O error broke; a ROLLBACK then would fail ("no transaction
      // is active") and hide why. Only a transaction still open is rolled back, and the first error is the one thrown.
      if (this.db.inTransaction) {
        try {
          this.stmt('ROLLBACK').run();
        } catch {
          // the first error says what happened
        }
      }
      throw e;
    }
    this.afterCommit?.();
    return result;
  }

  private setBusyTimeout(ms: number): void {
    this.stmt(`PRAGMA busy_timeout = ${ms}`).run();
  }

  /** Called after each `batch` commits (./checkpoints.ts counts them). */
  afterCommit: (() => void) | undefined;

  /** Rows of a query on a table another module owns (the watch list); `write` runs a statement, returning rows changed. */
  rows<T>(sql: string, ...args: unknown[]): T[] {
    return this.stmt(sql)
      .raw(false)
      .all(...args) as T[];
  }

  write(sql: string, ...args: unknown[]): number {
    return this.stmt(sql).run(...args).changes;
  }

  getMeta(key: string): string | undefined {
    return this.one<{ value: string }>('SELECT value FROM meta WHERE key = ?', key)?.value;
  }

  setMeta(key: string, value: string): void {
    this.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', key, value);
  }

  // ── exchanges ────────────────────────────────────────────────────────────────────────────────────────────────

  /** Inserts or replaces an exchange (metadata only: the request body lives in its body file). */
  put(x: CapturedExchange, reqBytes: number, pid: number | undefined): void {
    const { requestBody: _omit, ...meta } = x;
    this.run(
      `INSERT INTO exchanges (id, seq, started_at, session_id, state, agent, model, provider, broken, req_bytes, resp_bytes, pid, data)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, started_at = excluded.started_at, session_id = excluded.session_id,
         state = excluded.state, agent = excluded.agent, model = excluded.model, provider = excluded.provider,
         broken = excluded.broken, req_bytes = excluded.req_bytes, resp_bytes = excluded.resp_bytes, pid = excluded.pid, data = excluded.data`,
      x.id,
      this.nextSeq(),
      x.startedAt,
      x.sessionId,
      x.state,
      x.agent ?? null,
      lower(x.summary?.model ?? x.requestModel),
      lower(x.summary?.provider ?? x.servedProvider),
      isBrokenExchange(x) ? 1 : 0,
      reqBytes,
      x.responseBytes ?? 0,
      pid ?? null,
      JSON.stringify(meta),
    );
    this.run(
      'INSERT INTO sessions (id, agent, first_at, last_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET last_at = max(last_at, excluded.last_at), first_at = min(first_at, excluded.first_at)',
      x.sessionId,
      x.agent ?? null,
      x.startedAt,
      x.startedAt,
    );
  }

  /** Rewrites an exchange's metadata (a new summary), keeping its sizes and recorder. */
  update(x: CapturedExchange): void {
    const { requestBody: _omit, ...meta } = x;
    this.run(
      'UPDATE exchanges SET seq = ?, state = ?, model = ?, provider = ?, broken = ?, resp_bytes = ?, data = ? WHERE id = ?',
      this.nextSeq(),
      x.state,
      lower(x.summary?.model ?? x.requestModel),
      lower(x.summary?.provider ?? x.servedProvider),
      isBrokenExchange(x) ? 1 : 0,
      x.responseBytes ?? 0,
      JSON.stringify(meta),
      x.id,
    );
  }

  /** Stores an exchange's findings by rule and its analysis (`result`: JSON text in its stored form, ./stored-form.ts). */
  putAnalysis(x: CapturedExchange, findings: Finding[], result: string): void {
    this.run('DELETE FROM findings WHERE exchange_id = ?', x.id);
    const counts = new Map<string, number>();
    for (const f of findings) counts.set(`${f.rule}\u0000${f.severity}`, (counts.get(`${f.rule}\u0000${f.severity}`) ?? 0) + 1);
    for (const [k, n] of counts) {
      const [rule, severity] = k.split('\u0000');
      this.run('INSERT INTO findings (exchange_id, rule, severity, count) VALUES (?, ?, ?, ?)', x.id, rule, severity, n);
    }
    this.run(
      'INSERT INTO analyses (exchange_id, result) VALUES (?, ?) ON CONFLICT (exchange_id) DO UPDATE SET result = excluded.result',
      x.id,
      result,
    );
  }

  /** The stored analysis of an exchange, parsed, as `putAnalysis` got it (./stored-form.ts reads it back). */
  analysis(id: string): unknown {
    const row = this.one<{ result: string }>('SELECT result FROM analyses WHERE exchange_id = ?', id);
    return row ? JSON.parse(row.result) : undefined;
  }

  remove(id: string): void {
    this.run('DELETE FROM exchanges WHERE id = ?', id);
    this.run('DELETE FROM findings WHERE exchange_id = ?', id);
    this.run('DELETE FROM analyses WHERE exchange_id = ?', id);
    this.run('INSERT INTO deleted (id, seq) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq', id, this.nextSeq());
  }

  /** Whether an exchange with this id was deleted (its id is kept in `deleted`). */
  wasDeleted(id: string): boolean {
    return this.one<{ n: number }>('SELECT 1 AS n FROM deleted WHERE id = ?', id) !== undefined;
  }

  get(id: string): StoredRow | undefined {
    const r = this.one<RawRow>('SELECT data, req_bytes, pid, seq FROM exchanges WHERE id = ?', id);
    return r ? toRow(r) : undefined;
  }

  /** Ids starting with `prefix` (at most `limit`). */
  idsWithPrefix(prefix: string, limit: number): string[] {
    // `id >= prefix AND id < prefix + U+FFFF` uses the primary key; ids are [0-9a-z].
    return (
      this.stmt('SELECT id FROM exchanges WHERE id >= ? AND id < ? ORDER BY id LIMIT ?')
        .raw(true)
        .all(prefix, prefix + '\uffff', limit) as [string][]
    ).map((r) => r[0]);
  }

  /** Exchanges matching `q`, newest first. Each filter is an indexed column, so a limited query reads few rows. */
  query(q: ExchangeQuery = {}): CapturedExchange[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (q.broken) where.push('e.broken = 1');
    // Model and provider are kept lower-case: `--provider chutes` finds `Chutes`, through the index.
    if (q.model !== undefined) where.push('e.model = ?'), args.push(q.model.toLowerCase());
    if (q.provider !== undefined) where.push('e.provider = ?'), args.push(q.provider.toLowerCase());
    if (q.agent !== undefined) where.push('e.agent = ?'), args.push(q.agent);
    if (q.session !== undefined) where.push('e.session_id = ?'), args.push(q.session);
    if (q.since !== undefined) where.push('e.started_at >= ?'), args.push(q.since);
    if (q.until !== undefined) where.push('e.started_at <= ?'), args.push(q.until);
    if (q.rule !== undefined) where.push('e.id IN (SELECT exchange_id FROM findings WHERE rule = ?)'), args.push(q.rule);
    const sql = `SELECT data FROM exchanges e ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY e.started_at DESC, e.id DESC${q.limit !== undefined ? ' LIMIT ?' : ''}`;
    if (q.limit !== undefined) args.push(q.limit);
    return (
      this.db
        .prepare(sql)
        .raw(true)
        .all(...args) as [string][]
    ).map((r) => JSON.parse(r[0]) as CapturedExchange);
  }

  /** Rows changed and ids deleted after change number `seq` (by any process), and the newest change number. */
  changesSince(seq: number): { rows: StoredRow[]; deleted: string[]; seq: number } {
    const rows = (this.stmt('SELECT data, req_bytes, pid, seq FROM exchanges WHERE seq > ?').all(seq) as RawRow[]).map(toRow);
    const deleted = (this.stmt('SELECT id, seq FROM deleted WHERE seq > ?').all(seq) as { id: string; seq: number }[]).map((d) => d.id);
    const top =
      this.one<{ s: number | null }>('SELECT max(s) AS s FROM (SELECT max(seq) AS s FROM exchanges UNION ALL SELECT max(seq) FROM deleted)')
        ?.s ?? seq;
    this.seq = Math.max(this.seq, top);
    return { rows, deleted, seq: top };
  }

  /**
   * Copies what the write-ahead log holds into the database file, as far as no reader still needs it (a passive
   * checkpoint: it waits for nobody); true when all of it was copied.
   */
  checkpoint(): boolean {
    const [r] = this.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    return r === undefined || (r.busy === 0 && r.log === r.checkpointed);
  }

  /** A number that changes whenever another connection commits (SQLite's data_version). */
  dataVersion(): number {
    const rows = this.db.pragma('data_version') as { data_version: number }[];
    return rows[0]?.data_version ?? 0;
  }

  /** Bytes the stored exchanges take (bodies plus a per-exchange allowance), for the size limit. */
  totalBytes(allowance: number): number {
    return this.one<{ n: number | null }>('SELECT sum(req_bytes + resp_bytes + ?) AS n FROM exchanges', allowance)?.n ?? 0;
  }

  /** The latest session of each agent (so sessions continue across restarts). */
  latestSessions(): { id: string; agent: string | null; last_at: number }[] {
    return this.stmt('SELECT id, agent, max(last_at) AS last_at FROM sessions GROUP BY agent').all() as {
      id: string;
      agent: string | null;
      last_at: number;
    }[];
  }

  /** Exchanges still marked streaming (their recorder may have died). */
  streaming(): StoredRow[] {
    return (this.stmt("SELECT data, req_bytes, pid, seq FROM exchanges WHERE state = 'streaming'").all() as RawRow[]).map(toRow);
  }

  /** The oldest finished exchanges, oldest first, with their sizes. */
  oldest(limit: number): { id: string; started_at: number; bytes: number }[] {
    return this.stmt(
      "SELECT id, started_at, req_bytes + resp_bytes AS bytes FROM exchanges WHERE state != 'streaming' ORDER BY started_at, id LIMIT ?",
    ).all(limit) as {
      id: string;
      started_at: number;
      bytes: number;
    }[];
  }

  /** The newest exchange's start (epoch ms), if any. */
  newestStart(): number | undefined {
    return this.one<{ t: number | null }>('SELECT max(started_at) AS t FROM exchanges')?.t ?? undefined;
  }

  /** Finished exchanges that started before `at`. */
  countBefore(at: number): number {
    return this.one<{ n: number }>("SELECT count(*) AS n FROM exchanges WHERE started_at < ? AND state != 'streaming'", at)?.n ?? 0;
  }

  count(): number {
    return this.one<{ n: number }>('SELECT count(*) AS n FROM exchanges')?.n ?? 0;
  }

  // ── comparison verdicts and provider slugs (tables of migration 3; their shapes belong to the modules named there) ──

  /** Keeps `data` as the last comparison of (model, provider slug), unless a later one is already stored. */
  putComparison(model: string, provider: string, at: number, data: unknown): void {
    this.run(
      'INSERT INTO comparisons (model, provider, at, data) VALUES (?, ?, ?, ?) ON CONFLICT (model, provider) DO UPDATE SET at = excluded.at, data = excluded.data WHERE excluded.at >= comparisons.at',
      model,
      provider,
      at,
      JSON.stringify(data),
    );
  }

  /** The stored last comparisons (of one model when given). */
  comparisons(model?: string): unknown[] {
    if (this.version() < 3) return []; // a read-only open of a file an older Tokenscope wrote
    const rows = (
      model === undefined
        ? this.stmt('SELECT data FROM comparisons').raw(false).all()
        : this.stmt('SELECT data FROM comparisons WHERE model = ?').raw(false).all(model)
    ) as { data: string }[];
    return rows.map((r) => JSON.parse(r.data));
  }

  putProviderSlug(nameKey: string, name: string, slug: string, source: string, at: number): void {
    this.run(
      'INSERT INTO provider_slugs (name_key, name, slug, source, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name_key) DO UPDATE SET name = excluded.name, slug = excluded.slug, source = excluded.source, at = excluded.at',
      nameKey,
      name,
      slug,
      source,
      at,
    );
  }

  providerSlugs(): { name: string; slug: string; source: string; at: number }[] {
    if (this.version() < 3) return [];
    return this.stmt('SELECT name, slug, source, at FROM provider_slugs').raw(false).all() as {
      name: string;
      slug: string;
      source: string;
      at: number;
    }[];
  }

  private nextSeq(): number {
    // Another process may have written since: continue after the newest change either of us made.
    const top =
      this.one<{ s: number | null }>('SELECT max(s) AS s FROM (SELECT max(seq) AS s FROM exchanges UNION ALL SELECT max(seq) FROM deleted)')
        ?.s ?? 0;
    this.seq = Math.max(this.seq, top) + 1;
    return this.seq;
  }

  private stmt(sql: string): Statement {
    if (this.closed) throw new Error('the capture database is closed');
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  private run(sql: string, ...args: unknown[]): void {
    this.stmt(sql).run(...args);
  }

  private one<T>(sql: string, ...args: unknown[]): T | undefined {
    return this.stmt(sql)
      .raw(false)
      .get(...args) as T | undefined;
  }
}

function lower(s: string | undefined): string | null {
  return s === undefined ? null : s.toLowerCase();
}

function toRow(r: RawRow): StoredRow {
  return { x: JSON.parse(r.data) as CapturedExchange, reqBytes: r.req_bytes, ...(r.pid !== null && { pid: r.pid }) };
}

export type { ExchangeSummary };
