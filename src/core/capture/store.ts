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
 * with one warning (./disk-guard.ts); the proxy keeps forwarding. A read-only open (`readOnly`) never creates, renames, deletes or
 * writes anything. When an exchange ends, the store emits `finished` for the analysis service (./analysis.ts).
 */
import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, type CapturedExchange, type ChunkTiming } from '../model';
import { newId } from './ids';
import type { RedactOptions } from '../redact';
import { CaptureDb, DB_FILE, type ExchangeQuery } from './database';
import { BodyFileHost } from './body-host';
import { BodyFiles, FILE_MODE, processAlive } from './files';
import { diskGuard, type DiskWrite } from './disk-guard';
import { decodeFrames, frameHeader, isCaptureId, mergeFields, type ResponseFrame } from './log';
import { Writer, type RecorderHost } from './recorder';
import { importLegacyLog } from './legacy';
import { ListCache } from './list-cache';
import { startExchange } from './start';
import { JOURNAL_DIR, Journal, removeJournals, replayJournal } from './journal';
import { journaledSpares, stoppedOutcome } from './recovery';
import { Sessions } from './sessions';
import { Retention } from './retention';
import { AnalysisService, type StoredAnalysis } from './analysis';
import { CaptureThread } from './capture-thread';
import { RowBatch } from './row-batch';
import { checkpointWhenQuiet } from './checkpoints';
import type { BeginInit, CaptureStore, ExchangeWriter, StoreChange, StoreOptions } from './types';
import { nameKey, type SlugEntry } from '../policy/slugs';
import type { StoredComparison } from '../providers/verdicts';

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
  private readonly rows = new RowBatch((ids) => this.writeRows(ids));
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
      if (existsSync(dbPath)) this.db = CaptureDb.open(dbPath, { readOnly: true });
      else importLegacyLog((this.db = CaptureDb.open(':memory:')), this.dataDir, (m) => this.warn(m));
    } else {
      // The spare files a stopped process's journal names are its exchanges' bodies: they get their names first.
      left = this.journalFile.leftovers((m) => this.warn(m));
      this.files.prepare(journaledSpares(left.entries));
      const fresh = !existsSync(dbPath);
      this.db = CaptureDb.open(dbPath);
      if (fresh) for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) if (existsSync(f)) chmodSync(f, FILE_MODE);
      this.db.batch(() => importLegacyLog(this.db, this.dataDir, (m) => this.warn(m)));
      checkpointWhenQuiet(this.db, this.thread, () => [...this.own.values()].some((o) => !o.finished));
    }
    for (const s of this.db.latestSessions()) this.sessions.note(s.agent ?? undefined, s.last_at, s.id);
    this.retention = new Retention(this.db, this.opts.retention, (id) => this.removeRow(id), (m) => this.warn(m));
    this.analysis = new AnalysisService(this, this.db, this.opts, (m) => this.warn(m), this.thread);
    // What stopped processes journaled but never wrote as rows is written now; then their exchanges still streaming
    // are settled from what their body files hold (./recovery.ts), like any row a stopped process left streaming.
    if (!left) return;
    const { entries, files } = left;
    if (entries.size === 0 || this.diskWrite(() => (this.db.batch(() => replayJournal(this.db, entries)), true)) !== undefined) removeJournals(files, (op) => this.diskWrite(op));
    this.journalFile.open();
    for (const row of this.db.streaming()) if (!processAlive(row.pid)) this.settleStopped(row.x, row.reqBytes);
    this.flushLog();
    this.retention.apply();
    this.flushLog();
    await this.files.refill(this.opts.spareFiles ?? DEFAULT_SPARE_FILES, () => newId(Date.now()));
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
    const { response, chunks } = decodeFrames(this.files.read(id));
    return { bytes: response, chunks };
  }

  readResponseFrames(id: string): Iterable<ResponseFrame> | undefined {
    return this.get(id) ? this.files.readFrames(id) : undefined;
  }

  readDelivered(id: string): Uint8Array | undefined {
    return this.get(id) ? this.files.readDelivered(id) : undefined;
  }

  readAnalysis(id: string): StoredAnalysis | undefined {
    return isCaptureId(id) ? this.analysis.read(id) : undefined;
  }

  lastComparisons(model?: string): StoredComparison[] {
    return this.db.comparisons(model) as StoredComparison[];
  }

  putComparisons(verdicts: readonly StoredComparison[]): void {
    if (this.readOnly || verdicts.length === 0) return;
    this.diskWrite(() => this.db.batch(() => verdicts.forEach((v) => this.db.putComparison(v.model, v.provider, v.at, v))));
  }

  providerSlugs(): SlugEntry[] {
    return this.db.providerSlugs() as SlugEntry[];
  }

  learnProviderSlugs(entries: readonly SlugEntry[]): void {
    if (this.readOnly || entries.length === 0) return;
    this.diskWrite(() => this.db.batch(() => entries.forEach((e) => this.db.putProviderSlug(nameKey(e.name), e.name, e.slug, e.source, e.at))));
  }

  onDidChange(listener: (e: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ── writing ────────────────────────────────────────────────────────────────────────────────────────────────

  begin(init: BeginInit): ExchangeWriter {
    if (this.readOnly) throw new UserError(`the capture store in ${this.dataDir} is open read-only`);
    const startedAt = init.startedAt ?? Date.now();
    const t0 = performance.now() - (Date.now() - startedAt);
    const id = newId(startedAt);
    const redact: RedactOptions = { patterns: this.opts.redactPatterns };
    // Keys in the request body are masked to the same length by the writer, slice by slice, off the forwarding path.
    const body = init.requestBody;
    const x = startExchange(init, id, init.sessionId ?? this.sessions.assign(init.agent, startedAt, `s${id}`), startedAt, redact);
    const request = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const reqBytes = request?.length ?? 0;
    this.own.set(id, { x, reqBytes });
    this.retention.added(reqBytes);
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
    if (this.get(id)) this.removeRow(id);
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
    this.flushLog();
    this.db.close();
    this.journalFile.close();
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
    const ids = this.rows.flush();
    if (ids.length === 0) return;
    this.journalFile.written(ids);
    for (const id of ids) {
      const o = this.own.get(id);
      // A listener of the final change (a view that queries the store) can flush before `finished` runs: the entry
      // stays until then, or the exchange would never be analysed.
      if (o && o.finished && !this.rows.has(id)) this.own.delete(id);
    }
  }

  diskWrite<T>(op: () => T): T | undefined {
    return this.guard(op);
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

  /** One batch of rows in one transaction; false when the disk refused it. */
  private writeRows(ids: readonly string[]): boolean {
    const done = this.diskWrite(() => {
      this.db.batch(() => {
        for (const id of ids) {
          const o = this.own.get(id);
          if (o) this.db.put(o.ended && o.x.state === 'streaming' ? { ...o.x, ...o.ended, state: 'complete', error: undefined } : o.x, o.reqBytes, process.pid);
        }
      });
      return true; // (not `undefined`, which means the disk refused)
    });
    return done !== undefined;
  }

  private settleStopped(x: CapturedExchange, reqBytes: number): void {
    this.own.set(x.id, { x, reqBytes, finished: true }); // ended long ago: written once, then let go
    this.patch(x, stoppedOutcome(x, decodeFrames(this.files.read(x.id))));
  }

  private removeRow(id: string): void {
    const x = this.own.get(id)?.x ?? this.db.get(id)?.x;
    this.own.delete(id);
    this.rows.delete(id);
    this.journalFile.written([id]); // its journal lines must not bring it back (nor keep the journal from emptying)
    // Written at once (deleting is rare): a query right after must not find it.
    this.diskWrite(() => this.db.remove(id));
    this.files.remove(id);
    this.cache.delete(id);
    if (x) this.emit('deleted', x);
  }

  private warn(msg: string): void {
    this.opts.onWarning?.(msg);
  }
}

export { frameHeader };
