/**
 * The capture store: an embedded, crash-safe record of every exchange that crossed the proxy, shared by every process
 * that opens the same data dir (the extension's proxy, a CLI `serve`, read-only commands).
 *
 * Metadata, sessions, summaries, findings and analyses are rows in SQLite (./database.ts); the raw bytes are frames in
 * one body file per exchange (./recorder.ts, ./files.ts; the recorder opens them through ./body-host.ts), written
 * synchronously in the tick the proxy forwards them. Nothing else sits on the forwarding path: body files come from a small pool created in advance, and row writes are
 * batched into one transaction a turn of the event loop after the bytes went out (./row-batch.ts), while a journal line per exchange
 * (./journal.ts) lets a restart after a crash list what had no row yet; the list is cached (./list-cache.ts), and a
 * store of an earlier version is imported once (./legacy.ts). A failing disk (ENOSPC…) pauses capturing
 * with one warning (./disk-guard.ts); the proxy keeps forwarding. Nor does the proxy ever wait for the database: a write
 * lock another program holds (a backup tool, `sqlite3` in an open transaction) leaves rows queued in memory and in the
 * journal until it is free (./write-lock.ts). A read-only open (`readOnly`) never creates, renames, deletes or writes
 * anything. When an exchange ends, the store emits `finished` for the analysis service (./analysis.ts).
 */
import { accessSync, chmodSync, constants, existsSync, renameSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UserError, type CapturedExchange, type ChunkTiming } from '../model';
import { newId } from './ids';
import type { RedactOptions } from '../redact';
import { CaptureDb, DB_FILE, dbFailure, isBusy, type ExchangeQuery } from './database';
import { BodyFileHost } from './body-host';
import { BodyFiles, FILE_MODE, processAlive, readRegularFile } from './files';
import { diskGuard, type DiskWrite } from './disk-guard';
import { decodeFrames, frameHeader, isCaptureId, mergeFields, type ResponseFrame } from './log';
import { Writer, type RecorderHost } from './recorder';
import { importLegacyLog, legacyImported } from './legacy';
import { ListCache } from './list-cache';
import { startExchange } from './start';
import { JOURNAL_DIR, Journal, removeJournals, replayJournal } from './journal';
import { journaledSpares, maskedCopy, maskStoppedFile, stoppedOutcome } from './recovery';
import { maskedNote } from './split-keys-body';
import { LockedWrites } from './write-lock';
import { uncaptured } from './off';
import type { LegacyEntry } from './log';
import { Sessions } from './sessions';
import { Retention, type RetentionResult } from './retention';
import { AnalysisService, type StoredAnalysis } from './analysis';
import { CaptureThread } from './capture-thread';
import { RowBatch } from './row-batch';
import { checkpointWhenQuiet } from './checkpoints';
import type { BeginInit, CaptureStore, ExchangeWriter, StoreChange, StoreOptions } from './types';
import { nameKey, type SlugEntry, type StoredComparison } from './provider-rows';

export type { BeginInit, CaptureStore, ExchangeAnnotations, ExchangeWriter, StoreChange, StoreOptions } from './types';
export { DB_FILE, type ExchangeQuery } from './database';
export type { StoredAnalysis } from './analysis';
export { defaultDataDir, findCapture, newId } from './ids';

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Body files created ahead of need; beyond this many exchanges starting at once, a file is created on demand. */
const DEFAULT_SPARE_FILES = 4;
/** How long a new exchange's row may wait for its response to start before it is written anyway. */
const ROW_DELAY_MS = 10;
/** Rough bytes per exchange for frame headers and rows, besides the bodies. */
export const SIZE_ALLOWANCE = 1024;
/**
 * The most exchanges held in memory while another program holds the database's write lock (their rows queued, their
 * journal lines on disk); beyond, exchanges are forwarded without a capture until it is free, and a warning says so.
 */
export const MAX_QUEUED_CAPTURES = 2000;
/** How long a user's delete waits for a write lock another program holds before it gives up. */
const DELETE_WAIT_MS = 10_000;

export async function openStore(dataDir: string, opts: StoreOptions = {}): Promise<CaptureStore> {
  const store = new SqliteStore(dataDir, opts);
  await store.load();
  return store;
}

interface Own {
  x: CapturedExchange;
  reqBytes: number;
  /** Set once `finished` has run: until then the entry stays, whatever its state (see flushLog). */
  finished?: boolean;
  /** The response ended (`persistEnded`): the row says "complete" while `finish` is on its way. */
  ended?: Pick<CapturedExchange, 'endedAt' | 'responseBytes'>;
}

class SqliteStore extends BodyFileHost implements CaptureStore, RecorderHost {
  readonly readOnly: boolean;
  private db!: CaptureDb;
  protected readonly files: BodyFiles;
  /** Stands in for rows not yet written, should the process die before the batch (./journal.ts). */
  private readonly journalFile: Journal;
  private readonly sessions: Sessions;
  private readonly listeners = new Set<(e: StoreChange) => void>();
  /** Exchanges this process records, until finished and written: the newest state of each is here, not in the db. */
  private readonly own = new Map<string, Own>();
  /** Ids whose row is not yet written, and the batch that writes them (./row-batch.ts). */
  private readonly rows = new RowBatch(
    (ids) => this.writeRows(ids),
    (ids) => this.rowsWritten(ids),
  );
  /** Writes refused because another program holds the database's write lock, and their retries (./write-lock.ts). */
  private lock!: LockedWrites;
  /** Set while closing: the last rows may wait for the write lock (nothing is forwarded any more). */
  private waitForLock = false;
  /** Writers finishing their end-of-stream work (./recorder.ts settle). */
  private readonly settlingNow = new Set<Promise<void>>();
  /** The whole list (./list-cache.ts). */
  private readonly cache = new ListCache();
  /** A failing disk becomes one warning a minute (./disk-guard.ts). */
  private readonly guard: DiskWrite;
  private retention!: Retention;
  private analysis!: AnalysisService;
  /** Large analyses and split-key searches run there (./capture-thread.ts). */
  protected readonly thread = new CaptureThread();
  private closed = false;

  constructor(
    readonly dataDir: string,
    private readonly opts: StoreOptions,
  ) {
    super();
    this.readOnly = opts.readOnly === true;
    this.sessions = new Sessions(opts.sessionIdleMs);
    this.guard = diskGuard(dataDir, (m) => this.warn(m));
    this.files = new BodyFiles(dataDir, (op) => this.diskWrite(op));
    this.journalFile = new Journal(join(dataDir, JOURNAL_DIR), (op) => this.diskWrite(op));
  }

  async load(): Promise<void> {
    const dbPath = join(this.dataDir, DB_FILE);
    let left: ReturnType<Journal['leftovers']> | undefined;
    if (this.readOnly) {
      // Reading changes nothing: an exchange still streaming is shown as it is recorded. A data dir an earlier
      // version wrote (no database yet) is read from its log into memory; the first writable open imports it.
      if (existsSync(dbPath)) this.db = this.openForReading(dbPath);
      else importLegacyLog((this.db = CaptureDb.open(':memory:')), this.dataDir, (m) => this.warn(m));
    } else {
      // The spare files a stopped process's journal names are its exchanges' bodies: they get their names first.
      left = this.journalFile.leftovers((m) => this.warn(m));
      this.files.prepare(journaledSpares(left.entries));
      this.db = this.openForWriting(dbPath);
      checkpointWhenQuiet(this.db, this.thread, () => [...this.own.values()].some((o) => !o.finished));
    }
    this.lock = new LockedWrites(
      () => this.retryWrites(),
      (m) => this.warn(m),
      dbPath,
      isBusy,
    );
    for (const s of this.db.latestSessions()) this.sessions.note(s.agent ?? undefined, s.last_at, s.id);
    this.retention = new Retention(
      this.db,
      this.opts.retention,
      (ids) => this.removeRows(ids) === 'done',
      (m) => this.warn(m),
      this.opts.clock,
    );
    this.analysis = new AnalysisService(this, this.db, this.opts, (m) => this.warn(m), this.thread);
    // What stopped processes journaled but never wrote as rows is written now; then their exchanges still streaming
    // are settled from what their body files hold (./recovery.ts), like any row a stopped process left streaming.
    if (!left) return;
    const { entries, files } = left;
    if (entries.size === 0 || this.diskWrite(() => (this.db.batch(() => replayJournal(this.db, entries)), true)) !== undefined)
      removeJournals(files, (op) => this.diskWrite(op));
    this.journalFile.open();
    await this.recover(entries);
    this.flushLog();
    this.retention.apply();
    this.flushLog();
    await this.files.refill(this.opts.spareFiles ?? DEFAULT_SPARE_FILES, () => newId(Date.now()));
  }

  /**
   * The database for writing. A file that is not a database (or whose pages are damaged) is moved aside, with a
   * warning that names where it went, and a new one is started: a damaged file must not keep the proxy from starting.
   */
  private openForWriting(dbPath: string): CaptureDb {
    for (let attempt = 0; ; attempt++) {
      const fresh = !existsSync(dbPath);
      let db: CaptureDb | undefined;
      const ino = fresh ? undefined : statSync(dbPath).ino;
      try {
        db = CaptureDb.open(dbPath);
        if (fresh)
          for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) this.diskWrite(() => existsSync(f) && chmodSync(f, FILE_MODE));
        const opened = db;
        // (Only a data dir never opened by this version takes the write lock for it: a backup holding the lock does
        // not keep the proxy from starting.)
        if (!legacyImported(opened)) opened.batch(() => importLegacyLog(opened, this.dataDir, (m) => this.warn(m)));
        // Damage in the table every listing reads shows here rather than in the middle of a run.
        opened.totalBytes(SIZE_ALLOWANCE);
        return opened;
      } catch (e) {
        try {
          db?.close();
        } catch {
          // unusable anyway
        }
        if (dbFailure(e) !== 'corrupt' || attempt > 0) throw e;
        const why = String((e as Error).message ?? e).split('\n')[0];
        let aside: string | undefined;
        try {
          aside = moveAside(dbPath, ino);
        } catch (moving) {
          throw Object.assign(new Error(`${why}; it could not be moved aside: ${String((moving as Error).message).split('\n')[0]}`), {
            code: (e as { code?: string }).code,
          });
        }
        if (aside)
          this.warn(
            `the capture database ${dbPath} could not be read (${why}): it was moved aside to ${aside} and a new one started (the earlier captures' body files stay in ${this.files.bodies})`,
          );
      }
    }
  }

  /**
   * The database for reading: a read-only connection, or, in a folder this process cannot write (a read-only mount),
   * the file read as it is (SQLite cannot make its shared-memory file there).
   */
  private openForReading(dbPath: string): CaptureDb {
    let writable = true;
    try {
      accessSync(this.dataDir, constants.W_OK);
    } catch {
      writable = false;
    }
    if (writable) return CaptureDb.open(dbPath, { readOnly: true });
    const wal = `${dbPath}-wal`;
    let walBytes = 0;
    try {
      walBytes = statSync(wal).size;
    } catch {
      // none
    }
    if (walBytes > 0)
      this.warn(
        `${this.dataDir} cannot be written here, so ${basename(wal)} (${walBytes} bytes) is not read: the newest captures may be missing (a clean stop of the proxy moves them into ${DB_FILE})`,
      );
    return CaptureDb.open(dbPath, { readOnly: true, immutable: true });
  }

  /**
   * Settles what stopped processes left: their exchanges still streaming (interrupted, or complete when the file says
   * the response ended), and the exchanges their journals name, whose end-of-stream masking may never have run. Keys
   * split over SSE events are masked in their files before anything reads them; then each is analysed like any other.
   */
  private async recover(entries: Map<string, LegacyEntry>): Promise<void> {
    const ids = new Set([...entries.keys()].filter((id) => isCaptureId(id)));
    for (const row of this.db.streaming()) {
      if (processAlive(row.pid)) continue;
      ids.delete(row.x.id);
      const masked = await this.maskStopped(row.x.id);
      this.settleStopped(row.x, row.reqBytes, masked);
    }
    for (const id of ids) {
      const masked = await this.maskStopped(id);
      const row = masked && this.db.get(id);
      if (!row) continue;
      this.own.set(id, { x: row.x, reqBytes: row.reqBytes, finished: true });
      this.patch(row.x, { masked });
      this.analysis.finished(row.x, { recovered: true });
    }
  }

  /** The end-of-stream masking a stopped process never ran, over an exchange's body file and delivered copy. */
  private async maskStopped(id: string): Promise<CapturedExchange['masked']> {
    const patterns = this.opts.redactPatterns;
    const write = <T>(op: () => T) => this.diskWrite(op);
    const body = await maskStoppedFile(this.files.path(id), true, patterns, this.thread, write);
    const delivered = await maskStoppedFile(this.files.path(id, 'delivered'), false, patterns, this.thread, write);
    return maskedNote(body, delivered);
  }

  // ── reading ────────────────────────────────────────────────────────────────────────────────────────────────

  /** Newest first. Entries carry metadata only; `get(id)` adds the request body. */
  list(): CapturedExchange[] {
    this.flushLog();
    return this.cache.list(this.db, this.own);
  }

  query(q: ExchangeQuery): CapturedExchange[] {
    this.flushLog();
    return this.db.query(q).map((x) => this.own.get(x.id)?.x ?? x);
  }

  idsWithPrefix(prefix: string, limit: number): string[] {
    this.flushLog();
    return this.db.idsWithPrefix(prefix, limit);
  }

  get(id: string): CapturedExchange | undefined {
    if (!isCaptureId(id)) return undefined;
    const x = this.own.get(id)?.x ?? this.db.get(id)?.x;
    if (!x) return undefined;
    const requestBody = this.files.readRequest(id);
    return requestBody === undefined ? { ...x } : { ...x, requestBody };
  }

  readResponse(id: string): { bytes: Uint8Array; chunks: ChunkTiming[] } | undefined {
    if (!this.get(id)) return undefined;
    const { response, chunks } = decodeFrames(this.stoppedStream(id, 'cap') ?? this.files.read(id));
    return { bytes: response, chunks };
  }

  readResponseFrames(id: string): Iterable<ResponseFrame> | undefined {
    if (!this.get(id)) return undefined;
    const stopped = this.stoppedStream(id, 'cap');
    if (!stopped) return this.files.readFrames(id);
    const { response, chunks } = decodeFrames(stopped);
    return chunks.map((c) => ({ bytes: response.subarray(c.offset, c.offset + c.length), t: c.t }));
  }

  readDelivered(id: string): Uint8Array | undefined {
    return this.get(id) ? (this.stoppedStream(id, 'delivered') ?? this.files.readDelivered(id)) : undefined;
  }

  /**
   * A read-only open's view of a stream whose recorder stopped (killed mid-stream) before any writable open settled it:
   * the file's bytes with keys split over SSE events masked in memory, as recovery will mask them on disk
   * (./recovery.ts). Undefined for every other exchange, and when there is nothing to mask.
   */
  private stoppedStream(id: string, ext: 'cap' | 'delivered'): Uint8Array | undefined {
    if (!this.readOnly || this.own.has(id)) return undefined;
    const row = this.db.get(id);
    if (!row || row.x.state !== 'streaming' || processAlive(row.pid)) return undefined;
    const file = readRegularFile(this.files.path(id, ext));
    return file && maskedCopy(file, ext === 'cap', this.opts.redactPatterns);
  }

  readAnalysis(id: string): StoredAnalysis | undefined {
    return isCaptureId(id) ? this.analysis.read(id) : undefined;
  }

  lastComparisons(model?: string): StoredComparison[] {
    return this.db.comparisons(model) as StoredComparison[];
  }

  putComparisons(verdicts: readonly StoredComparison[]): void {
    if (this.readOnly || verdicts.length === 0) return;
    this.writeSoon((batch) => this.db.batch(() => verdicts.forEach((v) => this.db.putComparison(v.model, v.provider, v.at, v)), batch));
  }

  providerSlugs(): SlugEntry[] {
    return this.db.providerSlugs() as SlugEntry[];
  }

  learnProviderSlugs(entries: readonly SlugEntry[]): void {
    if (this.readOnly || entries.length === 0) return;
    this.writeSoon((batch) =>
      this.db.batch(() => entries.forEach((e) => this.db.putProviderSlug(nameKey(e.name), e.name, e.slug, e.source, e.at)), batch),
    );
  }

  onDidChange(listener: (e: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ── writing ────────────────────────────────────────────────────────────────────────────────────────────────

  begin(init: BeginInit): ExchangeWriter {
    if (this.readOnly) throw new UserError(`the capture store in ${this.dataDir} is open read-only`);
    // Another program has held the database's write lock so long that too many captures wait for it: this exchange is
    // forwarded without one (a warning says so, and how many when the lock ends).
    if (this.lock.locked && this.own.size >= MAX_QUEUED_CAPTURES) {
      this.lock.skipped();
      return uncaptured(init, { patterns: this.opts.redactPatterns });
    }
    const startedAt = init.startedAt ?? Date.now();
    const t0 = performance.now() - (Date.now() - startedAt);
    const id = newId(startedAt);
    const redact: RedactOptions = { patterns: this.opts.redactPatterns };
    // Keys in the request body are masked to the same length by the writer, slice by slice, off the forwarding path.
    const body = init.requestBody;
    const x = startExchange(init, id, init.sessionId ?? this.sessions.assign(init.agent, startedAt, `s${id}`), startedAt, redact);
    const request =
      body === undefined
        ? undefined
        : typeof body === 'string'
          ? Buffer.from(body)
          : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const reqBytes = request?.length ?? 0;
    this.own.set(id, { x, reqBytes });
    this.retention.added(reqBytes, true);
    // The row waits: a batch now would run while the upstream answers, on the way of its first bytes. It is written
    // when the response starts (`patch`), when the exchange ends, or ROW_DELAY_MS from now, whichever comes first;
    // until then the journal line stands in for it.
    const spare = this.files.take(id);
    this.journalFile.put(x, reqBytes, spare && this.files.spareName(spare.path));
    this.rows.add(id);
    setTimeout(() => this.rows.has(id) && this.rows.schedule(), ROW_DELAY_MS).unref();
    this.cache.set(x);
    this.emit('added', x);
    return new Writer(this, x, t0, redact, request, spare, this.opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  }

  async delete(id: string): Promise<void> {
    if (this.readOnly) throw new UserError(`the capture store in ${this.dataDir} is open read-only`);
    if (!this.get(id)) return;
    // The write lock is not waited for on this thread (it forwards): the delete is tried again a while, then refused.
    for (const until = Date.now() + DELETE_WAIT_MS; ; await new Promise((r) => setTimeout(r, 50))) {
      const done = this.removeRows([id]);
      if (done === 'done') return;
      if (done === 'failed') throw new UserError(`capture ${id} was not deleted: the disk refused the write`);
      if (Date.now() > until)
        throw new UserError(`capture ${id} was not deleted: the capture database is locked by another program; try again once it is free`);
    }
  }

  /**
   * Removes what retention holds back, with the user's consent (`tokenscope captures --prune`): every capture past the
   * limits, judged by the captures' own times.
   */
  async prune(): Promise<RetentionResult> {
    if (this.readOnly) throw new UserError(`the capture store in ${this.dataDir} is open read-only`);
    this.waitForLock = true; // a command, not the proxy: it may wait for the lock
    try {
      return this.retention.apply(undefined, { consent: true });
    } finally {
      this.waitForLock = false;
    }
  }

  async idle(): Promise<void> {
    while (this.settlingNow.size > 0) await Promise.allSettled([...this.settlingNow]);
    await this.analysis.idle();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // The end-of-stream passes (split-key masking) finish first: closing under one would leave a key unmasked.
    while (this.settlingNow.size > 0) await Promise.allSettled([...this.settlingNow]);
    await this.analysis.idle();
    await this.thread.close();
    this.closed = true;
    await this.files.close();
    if (!this.readOnly) {
      // Nothing is forwarded any more: the last rows may wait for a lock another program holds (a few seconds at most).
      this.waitForLock = true;
      this.flushLog();
      this.lock.drain();
      this.lock.close();
      const left = this.rows.size;
      const why = this.lock.locked ? 'it is locked by another program' : 'the disk refused them';
      if (left > 0)
        this.warn(
          `${left} capture${left === 1 ? ' was' : 's were'} not written to the capture database (${why}): ${left === 1 ? 'it is' : 'they are'} kept in the journal and written by the next start`,
        );
      if (this.lock.pending > 0)
        this.warn(
          `${this.lock.pending} analysis or verdict write${this.lock.pending === 1 ? ' was' : 's were'} not made (${why}): \`tokenscope show\` analyses those captures again when asked`,
        );
    }
    this.db.close();
    this.journalFile.close(!this.readOnly && this.rows.size > 0);
    this.listeners.clear();
  }

  // ── internals used by the recorder and the analysis service ────────────────────────────────────────────────

  patch(x: CapturedExchange, fields: Partial<CapturedExchange>): void {
    mergeFields(x, fields);
    const own = this.own.get(x.id);
    if (!own) return; // deleted while streaming: keep nothing
    this.rows.queue(x.id);
    this.cache.set(x);
    this.emit('updated', x);
  }

  persistEnded(x: CapturedExchange, fields: Pick<CapturedExchange, 'endedAt' | 'responseBytes'>): void {
    const own = this.own.get(x.id);
    if (!own || x.state !== 'streaming') return;
    own.ended = fields;
    // The body file's end mark already says "complete" (./recovery.ts); the journal's line joins its next write, and
    // the row follows in the next batch.
    this.journalFile.patch(x.id, { state: 'complete', ...fields }, true);
    this.rows.queue(x.id);
  }

  override adoptSpare(spare: string, id: string): boolean {
    this.journalFile.adopted(id);
    return super.adoptSpare(spare, id);
  }

  journal(id: string, fields: Partial<CapturedExchange>, hold = false): void {
    if (this.own.has(id)) this.journalFile.patch(id, fields, hold);
  }

  /** Whether an exchange of this process begun at `since` (epoch ms) or later still waits for its response head. */
  awaitingResponse(since: number): boolean {
    for (const o of this.own.values()) if (!o.finished && o.x.status === undefined && o.x.startedAt >= since) return true;
    return false;
  }

  /** An analysed exchange's new summary, stored with its analysis (by the analysis service). */
  analysed(x: CapturedExchange): void {
    this.cache.set(x);
    this.emit('updated', x);
  }

  settling(done: Promise<void>): void {
    this.settlingNow.add(done);
    void done.finally(() => this.settlingNow.delete(done)).catch(() => undefined);
  }

  /** Batched row writes wait while another connection of this process writes a large row (./analysis.ts). */
  holdWrites(): () => void {
    return this.rows.hold();
  }

  /** Writes the batched rows in one transaction, off the forwarding path (a turn of the loop after the bytes went out). */
  flushLog(): void {
    if (this.readOnly) return;
    this.rows.flush();
  }

  /** Rows just written (by `flushLog` or the batch's own turn): their journal lines and finished entries can go. */
  private rowsWritten(ids: readonly string[]): void {
    this.journalFile.written(ids, () => this.unsettled());
    for (const id of ids) {
      const o = this.own.get(id);
      // A listener of the final change (a view that queries the store) can flush before `finished` runs: the entry
      // stays until then, or the exchange would never be analysed.
      if (o && o.finished && !this.rows.has(id)) this.own.delete(id);
    }
  }

  /** This process's exchanges not finished yet (their end-of-stream pass may still be due), as their journal lines. */
  private unsettled(): { x: CapturedExchange; reqBytes: number }[] {
    const out: { x: CapturedExchange; reqBytes: number }[] = [];
    for (const o of this.own.values())
      if (!o.finished)
        out.push({ x: o.ended && o.x.state === 'streaming' ? { ...o.x, ...o.ended, state: 'complete' } : o.x, reqBytes: o.reqBytes });
    return out;
  }

  /**
   * A write other than rows (an analysis, verdicts, slugs): now if the write lock is free, else once it is. `op` runs
   * its batch with the options given (the lock is waited for only while closing).
   */
  writeSoon(op: (batch: { wait: boolean }) => void, bytes = 0): void {
    try {
      this.lock.write(() => void this.diskWrite(() => (op({ wait: this.waitForLock }), true), isBusy), bytes);
    } catch {
      // the disk refused it: the guard said so
    }
  }

  /** Tries the writes the write lock held back again (./write-lock.ts). */
  private retryWrites(): void {
    if (this.closed) return;
    if (this.rows.size > 0)
      this.rows.schedule(); // a slice a turn (./row-batch.ts)
    else if (this.lock.locked) this.lock.freed();
  }

  /** Runs one synchronous disk write through the guard; errors `rethrow` accepts (a busy lock) are thrown instead. */
  diskWrite<T>(op: () => T, rethrow?: (e: unknown) => boolean): T | undefined {
    return this.guard(op, rethrow);
  }

  finished(x: CapturedExchange): void {
    // Replace the spare this exchange used, now that its response is out.
    if (!this.closed) setImmediate(() => void this.files.refill(this.opts.spareFiles ?? DEFAULT_SPARE_FILES, () => newId(Date.now())));
    const own = this.own.get(x.id);
    if (!own) return;
    own.finished = true;
    if (!this.rows.has(x.id)) this.own.delete(x.id);
    this.retention.added((x.responseBytes ?? 0) + SIZE_ALLOWANCE);
    this.retention.apply(x.id);
    this.analysis.finished(x);
  }

  /** A change listeners should hear about (the analysis service's own writes). */
  emit(kind: StoreChange['kind'], exchange: CapturedExchange): void {
    for (const l of this.listeners) {
      try {
        l({ kind, exchange });
      } catch (e) {
        this.warn(`capture listener failed: ${(e as Error).message}`);
      }
    }
  }

  protected records(id: string): boolean {
    return this.own.has(id);
  }

  // ── private ────────────────────────────────────────────────────────────────────────────────────────────────

  /** One batch of rows in one transaction; false when the disk refused it or another program holds the write lock. */
  private writeRows(ids: readonly string[]): boolean {
    const write = () =>
      this.db.batch(
        () => {
          for (const id of ids) {
            const o = this.own.get(id);
            if (o)
              this.db.put(
                o.ended && o.x.state === 'streaming' ? { ...o.x, ...o.ended, state: 'complete', error: undefined } : o.x,
                o.reqBytes,
                process.pid,
              );
          }
        },
        { wait: this.waitForLock },
      );
    try {
      if (this.diskWrite(() => (write(), true), isBusy) === undefined) return false; // the disk refused: the guard said so
    } catch {
      // Locked: the rows stay queued (the journal holds them too) and are tried again soon, never waited for here.
      this.lock.refused(this.own.size);
      return false;
    }
    this.lock.freed();
    return true;
  }

  private settleStopped(x: CapturedExchange, reqBytes: number, masked?: CapturedExchange['masked']): void {
    this.own.set(x.id, { x, reqBytes, finished: true }); // ended long ago: written once, then let go
    this.patch(x, { ...stoppedOutcome(x, decodeFrames(this.files.read(x.id))), ...(masked && { masked }) });
    // Analysed like any exchange, so every reader gives the same answer (`captures` lists its findings, as `show` does).
    this.analysis.finished(x, { recovered: true });
  }

  /**
   * Removes captures: their rows in one transaction (at once: a query right after must not find them), then their files.
   * Nothing is removed when another program holds the write lock (`locked`: it is never waited for here) or the disk
   * refused the write (`failed`: the guard said so).
   */
  private removeRows(ids: readonly string[]): 'done' | 'locked' | 'failed' {
    const gone = ids.map((id) => this.own.get(id)?.x ?? this.db.get(id)?.x);
    try {
      if (
        this.diskWrite(() => (this.db.batch(() => ids.forEach((id) => this.db.remove(id)), { wait: this.waitForLock }), true), isBusy) ===
        undefined
      )
        return 'failed';
    } catch {
      return 'locked';
    }
    ids.forEach((id, i) => {
      const x = gone[i];
      this.own.delete(id);
      this.rows.delete(id);
      this.journalFile.written([id]); // its journal lines must not bring it back (nor keep the journal from emptying)
      this.files.remove(id);
      this.cache.delete(id);
      if (x) this.emit('deleted', x);
    });
    return 'done';
  }

  private warn(msg: string): void {
    this.opts.onWarning?.(msg);
  }
}

/**
 * Moves a database file that cannot be read aside (with its write-ahead log and shared-memory files), as
 * `captures.db.corrupt-<time>`; returns the new name, or undefined when another process moved (or replaced) it first.
 */
function moveAside(dbPath: string, ino: number | undefined): string | undefined {
  try {
    if (statSync(dbPath).ino !== ino) return undefined; // replaced meanwhile (another process moved it and started anew)
  } catch {
    return undefined;
  }
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  const aside = `${dbPath}.corrupt-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  let target = aside;
  for (let n = 2; existsSync(target); n++) target = `${aside}-${n}`;
  try {
    renameSync(dbPath, target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // another process moved it first
    throw e;
  }
  for (const ext of ['-wal', '-shm']) {
    try {
      renameSync(`${dbPath}${ext}`, `${target}${ext}`);
    } catch {
      // none
    }
  }
  return basename(target);
}

export { frameHeader };
