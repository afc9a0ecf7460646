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
  transaction<T extends (...args: never[]) => unknown>(fn: T): T;
  close(): void;
}

type ConnectionClass = new (path: string, opts?: { readonly?: boolean; fileMustExist?: boolean; timeout?: number }) => Connection;
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
  private readonly db: Connection;
  private readonly stmts = new Map<string, Statement>();
  private seq = 0;

  private constructor(
    db: Connection,
    readonly readOnly: boolean,
    /** The file's path (undefined for a database in memory, which no other connection can share). */
    readonly path: string | undefined,
  ) {
    this.db = db;
  }

  /** Opens (and with write access, creates and migrates) the database at `path`; `:memory:` for a throwaway one. */
  static open(path: string, opts: { readOnly?: boolean } = {}): CaptureDb {
    const Sqlite = sqlite();
    const readOnly = opts.readOnly === true;
    const conn = new Sqlite(path, readOnly ? { readonly: true, fileMustExist: true } : {});
    const db = new CaptureDb(conn, readOnly, path === ':memory:' ? undefined : path);
    // Several processes share the file: wait for another's write instead of failing at once.
    conn.pragma('busy_timeout = 5000');
    if (!readOnly) {
      conn.pragma('journal_mode = WAL');
      // WAL with NORMAL sync: a commit costs no fsync, and a crash loses no committed transaction, only the last ones
      // of a power cut. Body bytes are written straight to the kernel anyway.
      conn.pragma('synchronous = NORMAL');
      db.migrate();
    } else if (db.version() > SCHEMA_VERSION) {
      conn.close();
      throw new Error(`the capture database ${path} was written by a newer Tokenscope (schema ${db.version()}); update Tokenscope to read it`);
    }
    db.seq = (db.one<{ s: number | null }>('SELECT max(s) AS s FROM (SELECT max(seq) AS s FROM exchanges UNION ALL SELECT max(seq) FROM deleted)')?.s ?? 0) as number;
    return db;
  }

  version(): number {
    const rows = this.db.pragma('user_version') as { user_version: number }[];
    return rows[0]?.user_version ?? 0;
  }

  /** Applies every migration above the file's version, each in its own transaction. */
  private migrate(): void {
    const from = this.version();
    if (from > SCHEMA_VERSION) throw new Error(`the capture database was written by a newer Tokenscope (schema ${from}); update Tokenscope to use it`);
    for (let v = from; v < SCHEMA_VERSION; v++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[v]);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  close(): void {
    this.db.close();
  }

  /** Runs `fn` in one transaction (a batch of writes: one commit) and returns what it returns. */
  batch<T>(fn: () => T): T {
    // IMMEDIATE: the write lock is taken first, so change numbers read inside grow across processes.
    const result = (this.db.transaction(fn) as unknown as { immediate(): T }).immediate();
    this.afterCommit?.();
    return result;
  }

  /** Called after each `batch` commits (./checkpoints.ts counts them). */
  afterCommit: (() => void) | undefined;

  /** Rows of a query on a table another module owns (the watch list); `write` runs a statement, returning rows changed. */
  rows<T>(sql: string, ...args: unknown[]): T[] {
    return this.stmt(sql).raw(false).all(...args) as T[];
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
    this.run('INSERT INTO sessions (id, agent, first_at, last_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET last_at = max(last_at, excluded.last_at), first_at = min(first_at, excluded.first_at)', x.sessionId, x.agent ?? null, x.startedAt, x.startedAt);
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
    this.run('INSERT INTO analyses (exchange_id, result) VALUES (?, ?) ON CONFLICT (exchange_id) DO UPDATE SET result = excluded.result', x.id, result);
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
    return (this.stmt('SELECT id FROM exchanges WHERE id >= ? AND id < ? ORDER BY id LIMIT ?').raw(true).all(prefix, prefix + '\uffff', limit) as [string][]).map((r) => r[0]);
  }

  /** Exchanges matching `q`, newest first. Each filter is an indexed column, so a limited query reads few rows. */
  query(q: ExchangeQuery = {}): CapturedExchange[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (q.broken) where.push('e.broken = 1');
    // Model and provider are kept lower-case: `--provider chutes` finds `Chutes`, through the index.
    if (q.model !== undefined) (where.push('e.model = ?'), args.push(q.model.toLowerCase()));
    if (q.provider !== undefined) (where.push('e.provider = ?'), args.push(q.provider.toLowerCase()));
    if (q.agent !== undefined) (where.push('e.agent = ?'), args.push(q.agent));
    if (q.session !== undefined) (where.push('e.session_id = ?'), args.push(q.session));
    if (q.since !== undefined) (where.push('e.started_at >= ?'), args.push(q.since));
    if (q.until !== undefined) (where.push('e.started_at <= ?'), args.push(q.until));
    if (q.rule !== undefined) (where.push('e.id IN (SELECT exchange_id FROM findings WHERE rule = ?)'), args.push(q.rule));
    const sql = `SELECT data FROM exchanges e ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY e.started_at DESC, e.id DESC${q.limit !== undefined ? ' LIMIT ?' : ''}`;
    if (q.limit !== undefined) args.push(q.limit);
    return (this.db.prepare(sql).raw(true).all(...args) as [string][]).map((r) => JSON.parse(r[0]) as CapturedExchange);
  }

  /** Rows changed and ids deleted after change number `seq` (by any process), and the newest change number. */
  changesSince(seq: number): { rows: StoredRow[]; deleted: string[]; seq: number } {
    const rows = (this.stmt('SELECT data, req_bytes, pid, seq FROM exchanges WHERE seq > ?').all(seq) as RawRow[]).map(toRow);
    const deleted = (this.stmt('SELECT id, seq FROM deleted WHERE seq > ?').all(seq) as { id: string; seq: number }[]).map((d) => d.id);
    const top = this.one<{ s: number | null }>('SELECT max(s) AS s FROM (SELECT max(seq) AS s FROM exchanges UNION ALL SELECT max(seq) FROM deleted)')?.s ?? seq;
    this.seq = Math.max(this.seq, top);
    return { rows, deleted, seq: top };
  }

  /**
   * Copies what the write-ahead log holds into the database file, as far as no reader still needs it (a passive
   * checkpoint: it waits for nobody); true when all of it was copied.
   */
  checkpoint(): boolean {
    const [r] = this.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    return r === undefined || r.busy === 0 && r.log === r.checkpointed;
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
    return this.stmt('SELECT id, agent, max(last_at) AS last_at FROM sessions GROUP BY agent').all() as { id: string; agent: string | null; last_at: number }[];
  }

  /** Exchanges still marked streaming (their recorder may have died). */
  streaming(): StoredRow[] {
    return (this.stmt("SELECT data, req_bytes, pid, seq FROM exchanges WHERE state = 'streaming'").all() as RawRow[]).map(toRow);
  }

  /** The oldest finished exchanges, oldest first, with their sizes. */
  oldest(limit: number): { id: string; started_at: number; bytes: number }[] {
    return this.stmt("SELECT id, started_at, req_bytes + resp_bytes AS bytes FROM exchanges WHERE state != 'streaming' ORDER BY started_at, id LIMIT ?").all(limit) as {
      id: string;
      started_at: number;
      bytes: number;
    }[];
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
    const rows = (model === undefined ? this.stmt('SELECT data FROM comparisons').raw(false).all() : this.stmt('SELECT data FROM comparisons WHERE model = ?').raw(false).all(model)) as { data: string }[];
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
    return this.stmt('SELECT name, slug, source, at FROM provider_slugs').raw(false).all() as { name: string; slug: string; source: string; at: number }[];
  }

  private nextSeq(): number {
    // Another process may have written since: continue after the newest change either of us made.
    const top = this.one<{ s: number | null }>('SELECT max(s) AS s FROM (SELECT max(seq) AS s FROM exchanges UNION ALL SELECT max(seq) FROM deleted)')?.s ?? 0;
    this.seq = Math.max(this.seq, top) + 1;
    return this.seq;
  }

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  private run(sql: string, ...args: unknown[]): void {
    this.stmt(sql).run(...args);
  }

  private one<T>(sql: string, ...args: unknown[]): T | undefined {
    return this.stmt(sql).raw(false).get(...args) as T | undefined;
  }
}

function lower(s: string | undefined): string | null {
  return s === undefined ? null : s.toLowerCase();
}

function toRow(r: RawRow): StoredRow {
  return { x: JSON.parse(r.data) as CapturedExchange, reqBytes: r.req_bytes, ...(r.pid !== null && { pid: r.pid }) };
}

export type { ExchangeSummary };
