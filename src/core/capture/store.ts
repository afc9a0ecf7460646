/**
 * The capture store: an embedded, crash-safe record of every exchange that crossed the proxy.
 *
 * Format and file layout: ./log.ts. The whole index (metadata of every exchange, without bodies) lives in memory,
 * rebuilt from the log at open, so listing is a sorted-array read; bodies are read from disk on demand.
 * Response bytes are written synchronously, straight to the kernel, before the proxy forwards them, so a killed
 * process loses nothing the client saw. Nothing else sits on the forwarding path: body files come from a small pool
 * created in advance off that path, and log records are batched, reaching the kernel on the next turn of the event
 * loop or before the exchange's next response bytes, whichever comes first. A failing disk (ENOSPC…) pauses
 * capturing with one warning; the proxy keeps forwarding.
 */
import { chmodSync, close, closeSync, constants, existsSync, fstatSync, mkdirSync, open, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync, writevSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UserError, type CaptureReader, type CapturedExchange, type ChunkTiming } from '../model';
import { maskSecrets, redactHeaders, redactText, redactUrl, type RedactOptions } from '../redact';
import { analyzeExchange, type ExchangeAnalysis } from '../analyze';
import { BODIES_DIR, FRAME_HEADER, LOG_FILE, SPARE_DIR, decodeFrames, decodeRecord, encodeRecord, frameHeader, isCaptureId, type LogRecord } from './log';
import { Sessions } from './sessions';

export interface StoreOptions {
  /** Oldest finished exchanges are dropped beyond these. Defaults: 2 GiB, 30 days. */
  retention?: { maxBytes?: number; maxAgeDays?: number };
  /** One-line warnings: corrupt log lines, disk errors. */
  onWarning?: (msg: string) => void;
  /** Run the analysis on each finished exchange and store its summary (default true). */
  analyze?: boolean;
  /**
   * Called after each finished exchange's analysis with the full result (the CLI prints findings from it);
   * `undefined` when it was not analysed (body over 32 MiB, or the analysis failed: a warning says why).
   */
  onAnalyzed?: (exchange: CapturedExchange, result: ExchangeAnalysis | undefined) => void;
  /** Extra user patterns for the redaction step. */
  redactPatterns?: RedactOptions['patterns'];
  /** Idle gap that starts a new session, ms (default 30 min). */
  sessionIdleMs?: number;
  /** Body files created ahead of need, so an exchange's start does not wait for the disk (default 4; 0: on demand). */
  spareFiles?: number;
  /**
   * Open for reading only (`captures`, `show`, `lint ID`, `export`): nothing in the data dir is created, renamed,
   * deleted or rewritten, so a running proxy's files are never touched. `begin` and `delete` throw.
   */
  readOnly?: boolean;
  /** The most decoded response bytes kept per exchange (default 64 MiB): the rest still reaches the client. */
  maxBodyBytes?: number;
}

export type StoreChange = { kind: 'added' | 'updated' | 'deleted'; exchange: CapturedExchange };

export interface BeginInit {
  route: string;
  upstreamUrl: string;
  method: string;
  path: string;
  requestHeaders: Record<string, string | string[] | undefined>;
  requestBody?: Uint8Array | string;
  agent?: string;
  /** The agent's own session (proxy/session.ts), when it names one; else the idle window groups the exchange. */
  sessionId?: string;
  parentId?: string;
  target?: string;
  startedAt?: number;
}

/** Fields the proxy learns about an exchange besides its bytes. */
export type ExchangeAnnotations = Partial<Pick<CapturedExchange, 'requestModel' | 'generationId' | 'pin' | 'servedProvider' | 'repair' | 'policy'>>;

export interface ExchangeWriter {
  readonly id: string;
  /** `ttfbMs`: the recorded time to first byte, when replaying a recorded exchange (import); default: now. */
  responseStarted(status: number, headers: Record<string, string | string[] | undefined>, ttfbMs?: number): void;
  /** Decoded response bytes, in arrival order. `t`: recorded arrival time (ms since start), for imports; default: now. */
  chunk(bytes: Uint8Array, t?: number): void;
  /**
   * Chunks that arrive together (one read from the upstream): from `cork` to `uncork` their frames are gathered and
   * reach the kernel in one syscall at `uncork`, still synchronously, before the caller forwards them.
   */
  cork(): void;
  uncork(): void;
  annotate(fields: ExchangeAnnotations): void;
  /**
   * The bytes delivered to the client when a response stage (repair mode) changed them; the upstream's bytes stay the
   * exchange's body. Written once, before `finish`, masked like the body.
   */
  delivered(bytes: Uint8Array): void;
  /** `endedAt`: the recorded end (epoch ms), for imports; default: now. */
  finish(opts?: { error?: string; incomplete?: boolean; endedAt?: number }): Promise<CapturedExchange>;
}

export interface CaptureStore extends CaptureReader {
  readonly dataDir: string;
  /** The bytes delivered to the client, when they differ from the upstream's (repair mode); undefined otherwise. */
  readDelivered(id: string): Uint8Array | undefined;
  begin(init: BeginInit): ExchangeWriter;
  delete(id: string): Promise<void>;
  onDidChange(listener: (e: StoreChange) => void): () => void;
  /** Resolves once every queued analysis has run (tests, CLI shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_MAX_BYTES = 2 * 1024 ** 3;
const DEFAULT_MAX_AGE_DAYS = 30;
/** Bodies above this are stored but not analysed: parsing them would stall the proxy's event loop. */
const MAX_ANALYZED_BYTES = 32 * 1024 * 1024;
/** Compact the log at open when it holds this many more lines than live exchanges. */
const COMPACT_SLACK = 1000;
/** Body files created ahead of need; beyond this many exchanges starting at once, a file is created on demand. */
const DEFAULT_SPARE_FILES = 4;
/** Create, never truncate (a late open must not wipe what an earlier one wrote), and no O_APPEND: masks are patched in place. */
const BODY_FLAGS = constants.O_WRONLY | constants.O_CREAT;
/** Captures hold prompts and code: only the user reads them. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Read flags that never block (a FIFO in a body's place) and never follow a link out of the data dir. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

export function defaultDataDir(): string {
  return process.env.TOKENSCOPE_DATA_DIR || join(homedir(), '.tokenscope');
}

/** An exchange by id or unique id prefix (what users type); a UserError naming the problem otherwise. */
export function findCapture(reader: CaptureReader, idOrPrefix: string): CapturedExchange {
  const exact = reader.get(idOrPrefix);
  if (exact) return exact;
  const hits = idOrPrefix ? reader.list().filter((x) => x.id.startsWith(idOrPrefix)) : [];
  if (hits.length === 1) return reader.get(hits[0].id)!;
  if (hits.length === 0) throw new UserError(`no capture with id "${idOrPrefix}" (\`tokenscope captures\` lists them)`);
  throw new UserError(`"${idOrPrefix}" matches ${hits.length} captures; give more of the id`);
}

export async function openStore(dataDir: string, opts: StoreOptions = {}): Promise<CaptureStore> {
  const store = new FileStore(dataDir, opts);
  await store.load();
  return store;
}

let lastIdTime = 0;
let idSeq = 0;
/** Sortable, time-based, short: 9 base-36 digits of ms, a per-ms sequence, and randomness against other processes. */
function newId(now: number): string {
  if (now === lastIdTime) idSeq++;
  else (lastIdTime = now), (idSeq = 0);
  const rand = Math.floor(Math.random() * 36 ** 3).toString(36).padStart(3, '0');
  return now.toString(36).padStart(9, '0') + idSeq.toString(36).padStart(2, '0') + rand;
}

interface Entry {
  x: CapturedExchange;
  reqBytes: number;
  /** The process recording it (while it streams, another process must not call it interrupted). */
  pid?: number;
}

/** Whether a process is running (a recorder of this data dir). Unknown (no pid): not running. */
function processAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A file's bytes if it is a regular file (never a FIFO or device, never through a link); undefined otherwise. */
function readRegularFile(path: string): Buffer | undefined {
  let fd = -1;
  try {
    fd = openSync(path, READ_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    return buf.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

class FileStore implements CaptureStore {
  private readonly entries = new Map<string, Entry>();
  private sorted: CapturedExchange[] | undefined;
  private readonly listeners = new Set<(e: StoreChange) => void>();
  private readonly sessions: Sessions;
  private readonly bodies: string;
  private readonly spareDir: string;
  /** This process's spare folder (spare/<pid>). */
  private readonly ownSpares: string;
  /** Open, empty body files waiting for an exchange (StoreOptions.spareFiles). */
  private readonly spares: { path: string; fd: number }[] = [];
  private refilling: Promise<void> | undefined;
  private logFd = -1;
  /** Log records not yet written (see flushLog). */
  private pendingLog = '';
  private flushScheduled = false;
  private lastDiskWarning = 0;
  private lastAgeCheck = 0;
  /** Running total of `sizeOf` over all entries, for the size limit. */
  private totalBytes = 0;
  private readonly analysisQueue: string[] = [];
  private analysisRunning: Promise<void> | undefined;
  private closed = false;

  constructor(
    readonly dataDir: string,
    private readonly opts: StoreOptions,
  ) {
    this.bodies = join(dataDir, BODIES_DIR);
    this.spareDir = join(dataDir, SPARE_DIR);
    this.ownSpares = join(this.spareDir, String(process.pid));
    this.sessions = new Sessions(opts.sessionIdleMs);
  }

  async load(): Promise<void> {
    const readOnly = this.opts.readOnly === true;
    if (!readOnly) this.prepareDirs();
    const logPath = join(this.dataDir, LOG_FILE);
    let lines = 0;
    const text = readRegularFile(logPath)?.toString('utf8') ?? '';
    let start = 0;
    let lineNo = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      lineNo++;
      const line = text.slice(start, end);
      start = end + 1;
      if (!line.trim()) continue;
      lines++;
      const rec = decodeRecord(line);
      if (!rec) {
        this.warn(`capture log ${logPath} line ${lineNo} is corrupt and was skipped`);
        continue;
      }
      this.apply(rec);
    }
    const interrupted: Entry[] = [];
    for (const e of [...this.entries.values()].sort((a, b) => a.x.startedAt - b.x.startedAt)) {
      this.sessions.note(e.x.agent, e.x.startedAt, e.x.sessionId);
      // Still streaming in another live process (a second proxy on this data dir): not interrupted.
      if (e.x.state === 'streaming' && !processAlive(e.pid)) interrupted.push(e);
    }
    for (const e of this.entries.values()) this.totalBytes += sizeOf(e);
    // Reading changes nothing on disk: an exchange still streaming is shown as it is recorded.
    if (readOnly) return;
    // The process may have died mid-line: never let the next record glue onto a torn one.
    this.logFd = openSync(logPath, 'a', FILE_MODE);
    if (text.length > 0 && !text.endsWith('\n')) this.append('\n');
    for (const e of interrupted) this.markInterrupted(e);
    if (lines > this.entries.size + COMPACT_SLACK) this.compact(logPath);
    this.applyRetention();
    this.flushLog();
    await this.refillSpares();
  }

  /** Creates the folders (0700), makes an older data dir private, and drops spare files of processes that are gone. */
  private prepareDirs(): void {
    const fresh = !existsSync(this.dataDir);
    mkdirSync(this.bodies, { recursive: true, mode: DIR_MODE });
    if (!fresh && (statSync(this.dataDir).mode & 0o077) !== 0) {
      // Written by an earlier version with the default umask (0755/0644): make every file and folder private once.
      for (const d of readdirSync(this.dataDir, { recursive: true, withFileTypes: true })) {
        const path = join(d.parentPath, d.name);
        if (d.isDirectory()) chmodSync(path, DIR_MODE);
        else if (d.isFile()) chmodSync(path, FILE_MODE);
      }
    }
    for (const dir of [this.dataDir, this.bodies]) chmodSync(dir, DIR_MODE);
    mkdirSync(this.spareDir, { recursive: true, mode: DIR_MODE });
    chmodSync(this.spareDir, DIR_MODE);
    // Each process has its own spare folder: another live proxy's spares are open files it is about to use.
    for (const d of readdirSync(this.spareDir, { withFileTypes: true })) {
      const pid = /^\d+$/.test(d.name) ? Number(d.name) : undefined;
      if (pid === process.pid || (pid !== undefined && d.isDirectory() && processAlive(pid))) continue;
      rmSync(join(this.spareDir, d.name), { recursive: true, force: true });
    }
    mkdirSync(this.ownSpares, { recursive: true, mode: DIR_MODE });
  }

  // ── reading ────────────────────────────────────────────────────────────────────────────────────────────────

  /** Newest first. Entries carry metadata only; `get(id)` adds the request body. */
  list(): CapturedExchange[] {
    this.sorted ??= [...this.entries.values()].map((e) => e.x).sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : -1));
    return this.sorted.slice();
  }

  get(id: string): CapturedExchange | undefined {
    const e = isCaptureId(id) ? this.entries.get(id) : undefined;
    if (!e) return undefined;
    const requestBody = this.readRequest(id);
    return requestBody === undefined ? { ...e.x } : { ...e.x, requestBody };
  }

  readResponse(id: string): { bytes: Uint8Array; chunks: ChunkTiming[] } | undefined {
    if (!isCaptureId(id) || !this.entries.has(id)) return undefined;
    const { response, chunks } = decodeFrames(this.readBody(id));
    return { bytes: response, chunks };
  }

  readDelivered(id: string): Uint8Array | undefined {
    if (!this.entries.has(id)) return undefined;
    return readRegularFile(this.deliveredPath(id));
  }

  /** Writes the delivered bytes of an exchange (0600, masked). */
  writeDelivered(id: string, bytes: Uint8Array): void {
    if (!this.entries.has(id)) return;
    const masked = maskSecrets(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { patterns: this.opts.redactPatterns });
    this.diskWrite(() => writeFileSync(this.deliveredPath(id), masked, { mode: 0o600 }));
  }

  onDidChange(listener: (e: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ── writing ────────────────────────────────────────────────────────────────────────────────────────────────

  begin(init: BeginInit): ExchangeWriter {
    if (this.opts.readOnly) throw new UserError(`the capture store in ${this.dataDir} is open read-only`);
    const startedAt = init.startedAt ?? Date.now();
    const t0 = performance.now() - (Date.now() - startedAt);
    const id = newId(startedAt);
    const redact: RedactOptions = { patterns: this.opts.redactPatterns };
    const body = init.requestBody === undefined ? undefined : redactText(typeof init.requestBody === 'string' ? init.requestBody : Buffer.from(init.requestBody).toString('utf8'), redact);
    const x: CapturedExchange = {
      id,
      sessionId: init.sessionId ?? this.sessions.assign(init.agent, startedAt, `s${id}`),
      startedAt,
      state: 'streaming',
      route: init.route,
      upstreamUrl: redactUrl(init.upstreamUrl, redact),
      method: init.method,
      path: redactUrl(init.path, redact),
      requestHeaders: redactHeaders(init.requestHeaders, redact),
      ...(init.agent !== undefined && { agent: init.agent }),
      ...(init.parentId !== undefined && { parentId: init.parentId }),
      ...(init.target !== undefined && { target: init.target }),
    };
    const request = body === undefined ? undefined : Buffer.from(body);
    const reqBytes = request?.length ?? 0;
    this.entries.set(id, { x, reqBytes, pid: process.pid });
    this.totalBytes += reqBytes;
    this.sorted = undefined;
    this.record({ op: 'put', x, reqBytes, pid: process.pid });
    this.emit('added', x);
    return new Writer(this, x, t0, redact, request, this.spares.pop(), this.opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  }

  async delete(id: string): Promise<void> {
    if (this.opts.readOnly) throw new UserError(`the capture store in ${this.dataDir} is open read-only`);
    const e = this.entries.get(id);
    if (!e) return;
    this.remove(e);
  }

  async idle(): Promise<void> {
    while (this.analysisRunning) await this.analysisRunning;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.idle();
    this.closed = true;
    await this.refilling;
    for (const s of this.spares.splice(0)) this.diskWrite(() => (closeSync(s.fd), rmSync(s.path, { force: true })));
    this.flushLog();
    if (this.logFd >= 0) closeSync(this.logFd);
    this.logFd = -1;
    this.listeners.clear();
  }

  // ── internals used by Writer ───────────────────────────────────────────────────────────────────────────────

  /** Merges fields into an exchange, persists them and tells listeners. */
  patch(x: CapturedExchange, fields: Partial<CapturedExchange>): void {
    merge(x, fields);
    this.sorted = undefined;
    if (!this.entries.has(x.id)) return; // deleted while streaming: keep nothing
    this.record({ op: 'patch', id: x.id, x: fields });
    this.emit('updated', x);
  }

  /** Opens an exchange's body file for writing; -1 when the disk refuses. */
  openBody(id: string): number {
    return this.diskWrite(() => openSync(this.bodyPath(id), BODY_FLAGS, FILE_MODE)) ?? -1;
  }

  /** The same, off the event loop: creating a file costs up to a millisecond on a busy disk. Errors surface on the sync path. */
  openBodyAsync(id: string): Promise<number> {
    return new Promise((resolve) => open(this.bodyPath(id), BODY_FLAGS, FILE_MODE, (err, fd) => resolve(err ? -1 : fd)));
  }

  /** Gives a spare body file its exchange's name; false when the disk refuses or the exchange was deleted meanwhile. */
  adoptSpare(spare: string, id: string): boolean {
    const target = this.entries.has(id) ? this.bodyPath(id) : undefined;
    if (!target) this.diskWrite(() => rmSync(spare, { force: true }));
    return target !== undefined && (this.diskWrite(() => (renameSync(spare, target), true)) ?? false);
  }

  /** Writes the batched log records. Runs before an exchange's response bytes are written, so its record precedes them. */
  flushLog(): void {
    if (!this.pendingLog || this.logFd < 0) return;
    const text = this.pendingLog;
    this.pendingLog = '';
    this.append(text);
  }

  /** Runs one synchronous disk write; a failure becomes a throttled warning, never an exception. */
  diskWrite<T>(op: () => T): T | undefined {
    try {
      return op();
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const now = Date.now();
      if (now - this.lastDiskWarning > 60_000) {
        this.lastDiskWarning = now;
        const why = err.code === 'ENOSPC' ? 'the disk is full' : `${err.code ?? 'error'}: ${err.message.split('\n')[0]}`;
        this.warn(`capture store in ${this.dataDir}: ${why}; captures are incomplete until it recovers (the proxy keeps forwarding)`);
      }
      return undefined;
    }
  }

  finished(x: CapturedExchange): void {
    // Replace the spare this exchange used, now that its response is out.
    if (!this.closed) setImmediate(() => void this.refillSpares());
    if (!this.entries.has(x.id)) return;
    this.totalBytes += (x.responseBytes ?? 0) + SIZE_ALLOWANCE;
    this.applyRetention(x.id);
    if (this.opts.analyze !== false && x.status !== undefined) {
      this.analysisQueue.push(x.id);
      this.analysisRunning ??= this.drainAnalysis();
    }
  }

  // ── private ────────────────────────────────────────────────────────────────────────────────────────────────

  private apply(rec: LogRecord): void {
    const id = rec.op === 'put' ? rec.x.id : rec.id;
    // An id becomes a file name: one that is not an id (`../../victim`) never reaches a path.
    if (!isCaptureId(id)) {
      this.warn(`capture log record with the invalid id ${JSON.stringify(String(id).slice(0, 40))} was skipped`);
      return;
    }
    if (rec.op === 'put') {
      this.entries.set(id, { x: rec.x, reqBytes: rec.reqBytes ?? 0, pid: rec.pid });
    } else if (rec.op === 'patch') {
      const e = this.entries.get(id);
      if (e) merge(e.x, rec.x);
    } else {
      this.entries.delete(rec.id);
    }
  }

  private markInterrupted(e: Entry): void {
    const chunks = this.readResponse(e.x.id)?.chunks ?? [];
    const last = chunks.at(-1);
    const bytes = last ? last.offset + last.length : 0;
    this.patch(e.x, {
      state: 'incomplete',
      responseBytes: bytes,
      endedAt: e.x.startedAt + Math.round(last?.t ?? 0),
      error: `interrupted: Tokenscope stopped while the ${e.x.status === undefined ? 'request was pending' : 'response was streaming'} (${bytes} bytes kept)`,
    });
  }

  /** Rewrites the log with one `put` per live exchange (write a copy, then rename over the old one). */
  private compact(logPath: string): void {
    const tmp = `${logPath}.compact`;
    const body = [...this.entries.values()].map((e) => encodeRecord({ op: 'put', x: e.x, reqBytes: e.reqBytes, pid: e.pid })).join('');
    if (this.diskWrite(() => (writeFileSync(tmp, body, { mode: FILE_MODE }), true)) === undefined) {
      rmSync(tmp, { force: true });
      return;
    }
    closeSync(this.logFd);
    renameSync(tmp, logPath);
    this.logFd = openSync(logPath, 'a', FILE_MODE);
  }

  /**
   * Drops the oldest finished exchanges beyond the limits, and says what it removed. Cheap when nothing is due: size
   * is a running total, age is checked once a minute. `keep`: the exchange that just finished, never removed to make
   * room for itself (its body is already capped at maxBodyBytes), so one big capture cannot wipe the others.
   */
  private applyRetention(keep?: string): void {
    const maxBytes = this.opts.retention?.maxBytes ?? DEFAULT_MAX_BYTES;
    const now = Date.now();
    const ageDue = now - this.lastAgeCheck >= 60_000;
    if (this.totalBytes <= maxBytes && !ageDue) return;
    if (ageDue) this.lastAgeCheck = now;
    const maxAgeDays = this.opts.retention?.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS;
    const cutoff = maxAgeDays > 0 ? now - maxAgeDays * 86_400_000 : -Infinity;
    const newest = this.list()[0]?.id;
    let old = 0;
    let big = 0;
    let freed = 0;
    for (const x of this.list().reverse()) {
      const tooOld = x.startedAt < cutoff;
      if (!tooOld && this.totalBytes <= maxBytes) break;
      if (x.state === 'streaming' || x.id === keep || x.id === newest) continue;
      const e = this.entries.get(x.id)!;
      freed += sizeOf(e);
      if (tooOld) old++;
      else big++;
      this.remove(e);
    }
    const parts = [old && `${old} older than ${maxAgeDays} days`, big && `${big} oldest to stay under ${mib(maxBytes)}`].filter(Boolean);
    if (parts.length) this.warn(`retention removed ${old + big} capture${old + big === 1 ? '' : 's'} (${parts.join(', ')}; ${mib(freed)} freed)`);
  }

  private remove(e: Entry): void {
    this.entries.delete(e.x.id);
    this.totalBytes -= e.x.state === 'streaming' ? e.reqBytes : sizeOf(e);
    this.sorted = undefined;
    this.record({ op: 'del', id: e.x.id });
    this.diskWrite(() => rmSync(this.bodyPath(e.x.id), { force: true }));
    if (e.x.repair) this.diskWrite(() => rmSync(this.deliveredPath(e.x.id), { force: true }));
    this.emit('deleted', e.x);
  }

  private async drainAnalysis(): Promise<void> {
    try {
      while (this.analysisQueue.length > 0) {
        // Yield first: analysis never runs inside the forwarding call stack.
        await new Promise((r) => setImmediate(r));
        const id = this.analysisQueue.shift()!;
        const e = this.entries.get(id);
        if (!e) continue;
        let result: ExchangeAnalysis | undefined;
        if ((e.x.responseBytes ?? 0) <= MAX_ANALYZED_BYTES) {
          try {
            const res = this.readResponse(id)!;
            result = analyzeExchange({ ...e.x, requestBody: this.get(id)?.requestBody }, res.bytes, res.chunks);
            this.patch(e.x, { summary: result.summary });
          } catch (err) {
            this.warn(`analysis of ${id} failed: ${(err as Error).message?.split('\n')[0]}`);
          }
        }
        this.opts.onAnalyzed?.(e.x, result);
      }
    } finally {
      this.analysisRunning = undefined;
    }
  }

  private record(rec: LogRecord): void {
    if (this.logFd < 0) return;
    this.pendingLog += encodeRecord(rec);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushLog();
    });
  }

  /** Tops the spare body files up, one async create at a time, off the forwarding path. */
  private refillSpares(): Promise<void> {
    this.refilling ??= (async () => {
      try {
        while (!this.closed && this.spares.length < (this.opts.spareFiles ?? DEFAULT_SPARE_FILES)) {
          const path = join(this.ownSpares, `${newId(Date.now())}.cap`);
          const fd = await new Promise<number>((resolve) => open(path, BODY_FLAGS | constants.O_EXCL, FILE_MODE, (err, n) => resolve(err ? -1 : n)));
          if (fd < 0) return; // the disk refuses: exchanges create their files on demand and report any failure
          if (this.closed) this.diskWrite(() => (closeSync(fd), rmSync(path, { force: true })));
          else this.spares.push({ path, fd });
        }
      } finally {
        this.refilling = undefined;
      }
    })();
    return this.refilling;
  }

  private append(text: string): void {
    this.diskWrite(() => writeSync(this.logFd, text));
  }

  private emit(kind: StoreChange['kind'], exchange: CapturedExchange): void {
    for (const l of this.listeners) {
      try {
        l({ kind, exchange });
      } catch (e) {
        this.warn(`capture listener failed: ${(e as Error).message}`);
      }
    }
  }

  private warn(msg: string): void {
    this.opts.onWarning?.(msg);
  }

  private bodyPath(id: string): string {
    if (!isCaptureId(id)) throw new UserError(`invalid capture id ${JSON.stringify(String(id).slice(0, 40))}`);
    return join(this.bodies, `${id}.cap`);
  }

  private deliveredPath(id: string): string {
    return join(this.bodies, `${id}.delivered`);
  }

  private readBody(id: string): Uint8Array {
    // Only a regular file: anything else in its place (a device, a pipe) could block forever. None yet: empty.
    return readRegularFile(this.bodyPath(id)) ?? new Uint8Array(0);
  }

  /** The request frame alone (it comes first), without reading the response. */
  private readRequest(id: string): string | undefined {
    let fd = -1;
    try {
      fd = openSync(this.bodyPath(id), READ_FLAGS);
      if (!fstatSync(fd).isFile()) return undefined;
      const head = Buffer.alloc(FRAME_HEADER);
      if (readSync(fd, head, 0, FRAME_HEADER, 0) < FRAME_HEADER || head[0] !== 'Q'.charCodeAt(0)) return undefined;
      const body = Buffer.alloc(head.readUInt32LE(1));
      const n = readSync(fd, body, 0, body.length, FRAME_HEADER);
      return body.subarray(0, n).toString('utf8');
    } catch {
      return undefined;
    } finally {
      if (fd >= 0) closeSync(fd);
    }
  }

}

/** Merges fields into an exchange; `null` clears a field (a finished exchange's error from an earlier state). */
function merge(x: CapturedExchange, fields: Partial<CapturedExchange>): void {
  const target = x as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(fields)) {
    if (v === null) delete target[k];
    else if (v !== undefined) target[k] = v;
  }
}

/** Rough bytes per exchange for frame headers and log records, besides the bodies. */
const SIZE_ALLOWANCE = 1024;

function mib(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`;
}

function sizeOf(e: Entry): number {
  return (e.x.responseBytes ?? 0) + e.reqBytes + SIZE_ALLOWANCE;
}

/**
 * Raw bytes kept before a run of key characters at the end of a response: room for what a pattern needs around a key
 * (`Bearer `, `"api_key": "`), and for a key cut just before the quote that ends it (`"api_key": "…\` | `"`).
 */
const MASK_CONTEXT = 128;
/** The most raw bytes kept for masking; a longer run of key characters is no key. */
const MAX_TAIL = 64 * 1024;

/** A byte that can be part of a key (the characters of redact.ts's key patterns): a run of them may go on in the next chunk. */
function isKeyByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f || b === 0x2d || b === 0x2e || b === 0x2b || b === 0x2f || b === 0x3d || b === 0x7e;
}

/** Where the run of key bytes ending at `end` starts (looking back at most MAX_TAIL bytes from the end of `bytes`). */
function runStart(bytes: Uint8Array, end: number): number {
  let i = end;
  while (i > 0 && isKeyByte(bytes[i - 1]) && bytes.length - i < MAX_TAIL) i--;
  return i;
}

/** Where a response chunk's bytes sit in the body file. */
interface FrameAt {
  offset: number;
  pos: number;
  length: number;
}

/**
 * Writes one exchange as it streams. Response chunks are written with key-shaped strings masked to the same length
 * (redact.ts maskSecrets), so offsets and chunk timing stay exact; the bytes forwarded to the client are not touched.
 */
class Writer implements ExchangeWriter {
  private fd = -1;
  /** The spare file this exchange writes to, until it is renamed to the exchange's own name. */
  private spare: string | undefined;
  /** The request frame, until it is on disk (it comes first in the file). */
  private request: Buffer | undefined;
  /** Where the next frame goes in the file (positioned writes: masks are patched in place). */
  private pos = 0;
  private offset = 0;
  /**
   * The end of the response from response offset `start`: as received (`raw`) and as written (`written`, masked), with
   * the frames that hold it. The next chunk is scanned together with it, so a key cut by a chunk boundary is found whole.
   */
  private tail: { start: number; raw: Buffer; written: Buffer; frames: FrameAt[] } = { start: 0, raw: Buffer.alloc(0), written: Buffer.alloc(0), frames: [] };
  /** While corked: the parts gathered for one write at `gatheredPos`, and the response offset before them. */
  private gathered: Uint8Array[] | undefined;
  private gatheredPos = 0;
  private gatheredOffset = 0;
  /** Set when the disk refused a write: the rest of this body is not kept, and the capture says so. */
  private diskFailed = false;
  private done = false;
  /** Decoded response bytes received, kept or not (past maxBytes they only reach the client). */
  private received = 0;

  constructor(
    private readonly store: FileStore,
    private readonly x: CapturedExchange,
    private readonly t0: number,
    private readonly redact: RedactOptions,
    request: Buffer | undefined,
    spare: { path: string; fd: number } | undefined,
    private readonly maxBytes: number,
  ) {
    if (request) this.request = Buffer.concat([frameHeader('Q', request.length, 0), request]);
    if (spare) {
      this.fd = spare.fd;
      this.spare = spare.path;
    } else {
      // No spare left (many exchanges at once): create the file while the upstream thinks. Should the first chunk
      // come sooner, chunk() opens it itself and the late descriptor is closed unused.
      void store.openBodyAsync(x.id).then((fd) => {
        if (fd < 0) return;
        if (this.fd >= 0 || this.done) close(fd, () => undefined);
        else this.fd = fd;
      });
    }
    // Naming the file and writing the request frame wait for the next turn of the loop: the request goes upstream first.
    setImmediate(() => {
      if (!this.done) this.ready(false);
    });
  }

  get id(): string {
    return this.x.id;
  }

  responseStarted(status: number, headers: Record<string, string | string[] | undefined>, ttfbMs?: number): void {
    if (this.done) return;
    this.store.patch(this.x, { status, responseHeaders: redactHeaders(headers, this.redact), ttfbMs: ttfbMs ?? round(performance.now() - this.t0) });
  }

  /**
   * Masks and writes one chunk. Scanned with the tail of what came before, a key cut by the chunk boundary is found
   * whole and its part already on disk is patched in place. What remains: until the next chunk arrives (for good, if
   * the process dies first), the start of a key too short to look like one yet is on disk as it came.
   */
  chunk(bytes: Uint8Array, at?: number): void {
    if (this.done || this.diskFailed || bytes.length === 0) return;
    this.received += bytes.length;
    // Past the cap nothing more is kept (2 MB of gzip can inflate to gigabytes); `finish` records the cut.
    const room = this.maxBytes - this.offset;
    if (room <= 0) return;
    if (bytes.length > room) bytes = bytes.subarray(0, room);
    const t = at ?? performance.now() - this.t0;
    if (!this.ready(true)) return;
    this.store.flushLog(); // the exchange's record reaches the log before its bytes reach the body file
    const { raw } = this.tail;
    const all = Buffer.concat([raw, bytes]);
    const masked = maskSecrets(all, this.redact);
    // A patch lands in frames already on disk: gathered ones go first.
    if (masked !== all && raw.length > 0 && !(this.writeGathered() && this.patchTail(masked.subarray(0, raw.length)))) return;
    const out = masked.subarray(raw.length);
    const frame = { offset: this.offset, pos: this.pos + FRAME_HEADER, length: out.length };
    // One frame, one syscall: the bytes and their arrival time reach the kernel together.
    if (!this.write([frameHeader('R', out.length, t), out])) return;
    this.offset += out.length;
    this.keepTail(all, out, frame);
  }

  cork(): void {
    this.gathered ??= [];
  }

  uncork(): void {
    this.writeGathered();
    this.gathered = undefined;
  }

  annotate(fields: ExchangeAnnotations): void {
    if (!this.done) this.store.patch(this.x, fields);
  }

  delivered(bytes: Uint8Array): void {
    if (!this.done) this.store.writeDelivered(this.x.id, bytes);
  }

  async finish(opts: { error?: string; incomplete?: boolean; endedAt?: number } = {}): Promise<CapturedExchange> {
    if (this.done) return { ...this.x };
    if (this.request || this.spare) this.ready(true); // no response bytes came: the request body still gets stored
    this.uncork();
    this.done = true;
    const fd = this.fd;
    if (fd >= 0) this.store.diskWrite(() => closeSync(fd));
    this.fd = -1;
    this.tail = { start: 0, raw: Buffer.alloc(0), written: Buffer.alloc(0), frames: [] };
    const lost = this.diskFailed ? `the disk refused a write; only the first ${this.offset} bytes were kept` : undefined;
    const error = [opts.error, lost].filter(Boolean).join('; ') || undefined;
    const cut = !this.diskFailed && this.received > this.offset;
    this.store.patch(this.x, {
      state: opts.incomplete || this.diskFailed ? 'incomplete' : error ? 'error' : 'complete',
      endedAt: opts.endedAt ?? Date.now(),
      responseBytes: this.offset,
      // `null` clears what an earlier state left (a reader's view of it mid-stream must never stick).
      error: (error ?? null) as string | undefined,
      ...(cut && { truncated: { keptBytes: this.offset, receivedBytes: this.received } }),
    });
    this.store.finished(this.x);
    return { ...this.x };
  }

  /**
   * Gets the body file ready: open (with `create`, creating it now if no file is open yet), named after the exchange,
   * request frame written. True when response bytes can be written.
   */
  private ready(create: boolean): boolean {
    if (this.diskFailed) return false;
    if (this.fd < 0) {
      if (!create) return false;
      this.fd = this.store.openBody(this.x.id);
      if (this.fd < 0) return !(this.diskFailed = true);
    }
    if (this.spare !== undefined) {
      const ok = this.store.adoptSpare(this.spare, this.x.id);
      this.spare = undefined;
      if (!ok) return !(this.diskFailed = true);
    }
    const q = this.request;
    this.request = undefined;
    return q ? this.write([q]) : true;
  }

  /** Writes at the end of the file (gathers, while corked); false (and the rest of the body is lost) when the disk refuses. */
  private write(parts: Uint8Array[]): boolean {
    if (this.gathered) {
      if (this.gathered.length === 0) (this.gatheredPos = this.pos), (this.gatheredOffset = this.offset);
      for (const p of parts) (this.gathered.push(p), (this.pos += p.length));
      return true;
    }
    const n = this.store.diskWrite(() => writeAt(this.fd, parts, this.pos));
    if (n === undefined) return !(this.diskFailed = true);
    this.pos += n;
    return true;
  }

  /** Writes what was gathered while corked; on failure only the response bytes before it count as kept. */
  private writeGathered(): boolean {
    const parts = this.gathered;
    if (!parts?.length || this.diskFailed) return !this.diskFailed;
    this.gathered = [];
    if (this.store.diskWrite(() => writeAt(this.fd, parts, this.gatheredPos)) !== undefined) return true;
    this.offset = this.gatheredOffset;
    return !(this.diskFailed = true);
  }

  /** Rewrites the tail's bytes on disk where a new mask covers them (masks are only ever added). */
  private patchTail(masked: Uint8Array): boolean {
    const { start, raw, written, frames } = this.tail;
    let changed = false;
    for (let i = 0; i < raw.length; i++) {
      if (masked[i] !== raw[i] && masked[i] !== written[i]) {
        written[i] = masked[i];
        changed = true;
      }
    }
    for (const f of changed ? frames : []) {
      const from = Math.max(f.offset, start);
      const part = written.subarray(from - start, f.offset + f.length - start);
      if (this.store.diskWrite(() => writeAt(this.fd, [part], f.pos + from - f.offset)) === undefined) return !(this.diskFailed = true);
    }
    return true;
  }

  /** Keeps what the next chunk must be scanned with: the run of key bytes at the end, and context before it. */
  private keepTail(all: Buffer, out: Uint8Array, frame: FrameAt): void {
    const cut = runStart(all, Math.max(0, runStart(all, all.length) - MASK_CONTEXT));
    const tail = this.tail;
    const start = tail.start + cut;
    // `written` is a copy: it is patched in place and must never alias the bytes forwarded to the client or queued
    // for the disk. `raw` is only read, and `all` is this writer's own copy: a view of it is enough.
    const old = tail.written;
    const written = Buffer.allocUnsafe(all.length - cut);
    const kept = old.copy(written, 0, Math.min(cut, old.length));
    Buffer.from(out.buffer, out.byteOffset, out.byteLength).copy(written, kept, Math.max(0, cut - old.length));
    const { frames } = tail;
    frames.push(frame);
    let stale = 0;
    while (stale < frames.length && frames[stale].offset + frames[stale].length <= start) stale++;
    if (stale > 0) frames.splice(0, stale);
    tail.start = start;
    tail.raw = all.subarray(cut);
    tail.written = written;
  }
}

/** Writes every byte of `parts` at `pos` (a short write is finished); returns the byte count. */
function writeAt(fd: number, parts: Uint8Array[], pos: number): number {
  const total = parts.reduce((n, p) => n + p.length, 0);
  let n = writevSync(fd, parts, pos);
  if (n < total) {
    const rest = Buffer.concat(parts);
    while (n < total) n += writeSync(fd, rest, n, total - n, pos + n);
  }
  return total;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
