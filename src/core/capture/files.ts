/**
 * The data dir's files: private modes, safe reads (regular files only, never through a link, never blocking), and the
 * per-process folders of spare body files. Layout:
 *
 *   <dataDir>/captures.db          the database (./database.ts), with its WAL files
 *   <dataDir>/bodies/<id>.cap      an exchange's bytes as frames (./log.ts), written as they arrive (./recorder.ts)
 *   <dataDir>/spare/<pid>/         empty body files one proxy process created ahead of need
 *   <dataDir>/captures.ndjson      the log of earlier versions: imported once, then left alone
 */
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  open,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { open as openAsync } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UserError } from '../model';
import { BODIES_DIR, FRAME_HEADER, LOG_FILE, SPARE_DIR, isCaptureId, responseFrames, type ResponseFrame } from './log';

/** Captures hold prompts and code: only the user reads them. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;
/** Create, never truncate (a late open must not wipe what an earlier one wrote), and no O_APPEND: masks are patched in place. */
export const BODY_FLAGS = constants.O_WRONLY | constants.O_CREAT;
/** Read flags that never block (a FIFO in a body's place) and never follow a link out of the data dir. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** Whether a process is running (a recorder of this data dir). Unknown (no pid): not running. */
export function processAlive(pid: number | undefined): boolean {
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
export function readRegularFile(path: string, maxBytes = Infinity, from = 0): Buffer | undefined {
  let fd = -1;
  try {
    fd = openSync(path, READ_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.allocUnsafe(Math.max(0, Math.min(st.size - from, maxBytes)));
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, from + n);
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

/** The same, off the event loop: a regular file's bytes from `from`, undefined when it cannot be read. */
export async function readRegularFileAsync(path: string, from = 0): Promise<Buffer | undefined> {
  let fh: Awaited<ReturnType<typeof openAsync>> | undefined;
  try {
    fh = await openAsync(path, READ_FLAGS);
    const st = await fh.stat();
    if (!st.isFile()) return undefined;
    const buf = Buffer.allocUnsafe(Math.max(0, st.size - from));
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, from + n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    return buf.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    await fh?.close();
  }
}

/**
 * Creates a folder (0700) and the missing ones above it. Unlike `mkdirSync(…, { recursive: true })`, which on Linux
 * loops for ever (at full CPU, deaf to Ctrl+C) when a folder cannot be created in a parent that exists (/proc/1), a
 * folder that cannot be made is an error at once.
 */
export function makeDir(dir: string, depth = 0): void {
  try {
    mkdirSync(dir, { mode: DIR_MODE });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (statSync(dir).isDirectory()) return;
      throw e;
    }
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir || depth > 64) throw e;
    // The parent is missing (made first), or was made by another process just now: either way, once more.
    if (!existsSync(parent)) makeDir(parent, depth + 1);
    try {
      mkdirSync(dir, { mode: DIR_MODE });
    } catch (again) {
      const c = (again as NodeJS.ErrnoException).code;
      if (c === 'ENOENT') throw Object.assign(new Error(`cannot create folders in ${parent}`), { code: 'ENOTSUP', path: parent });
      if (c !== 'EEXIST' || !statSync(dir).isDirectory()) throw again;
    }
  }
}

/**
 * Creates the folders (0700), makes a data dir of an earlier version private, and drops the spare files of processes
 * that are gone. Only for a store opened for writing.
 */
export function prepareDataDir(
  dataDir: string,
  bodies: string,
  spareDir: string,
  ownSpares: string,
  adopt: { spare: string; id: string }[] = [],
): void {
  const fresh = !existsSync(dataDir);
  makeDir(bodies);
  if (!fresh && (statSync(dataDir).mode & 0o077) !== 0) {
    // Written by an earlier version with the default umask (0755/0644): its files and folders are made private once.
    // Only Tokenscope's own: a --data-dir that points somewhere else is never walked.
    for (const name of readdirSync(dataDir)) {
      if (!OWN_NAMES.some((n) => name === n || name.startsWith(`${n}-`) || name.startsWith(`${n}.`))) continue;
      const path = join(dataDir, name);
      const st = lstatSync(path);
      if (st.isDirectory()) {
        chmodSync(path, DIR_MODE);
        for (const d of readdirSync(path, { recursive: true, withFileTypes: true })) {
          const p = join(d.parentPath, d.name);
          if (d.isDirectory()) chmodSync(p, DIR_MODE);
          else if (d.isFile()) chmodSync(p, FILE_MODE);
        }
      } else if (st.isFile()) chmodSync(path, FILE_MODE);
    }
  }
  for (const dir of [dataDir, bodies]) chmodSync(dir, DIR_MODE);
  makeDir(spareDir);
  chmodSync(spareDir, DIR_MODE);
  // Spares a stopped process was still writing exchanges to become their body files (unless one is there already).
  for (const { spare, id } of adopt) {
    const target = join(bodies, `${id}.cap`);
    try {
      if (!existsSync(target)) renameSync(join(spareDir, spare), target);
    } catch {
      // gone already (adopted, or never written to)
    }
  }
  // Each process has its own spare folder: another live proxy's spares are open files it is about to use.
  let spares: import('node:fs').Dirent[] = [];
  try {
    spares = readdirSync(spareDir, { withFileTypes: true });
  } catch {
    // removed by another process's clean stop just now: there is nothing in it
  }
  for (const d of spares) {
    const pid = /^\d+$/.test(d.name) ? Number(d.name) : undefined;
    if (pid === process.pid || (pid !== undefined && d.isDirectory() && processAlive(pid))) continue;
    rmSync(join(spareDir, d.name), { recursive: true, force: true });
  }
  makeDir(ownSpares);
}

/** The names in a data dir that are Tokenscope's (the database and its files, its folders, the log of earlier versions). */
const OWN_NAMES = ['captures.db', BODIES_DIR, SPARE_DIR, 'journal', 'tokenizers', LOG_FILE];

/** The body files of one data dir: paths checked before they are built, spares, safe reads. */
export class BodyFiles {
  readonly bodies: string;
  readonly spareDir: string;
  /** This process's spare folder (spare/<pid>). */
  readonly ownSpares: string;
  /** Open, empty body files waiting for an exchange. */
  readonly spares: { path: string; fd: number }[] = [];
  /** This process's exchanges whose body is still in the spare file they took (see `take`): reads find it there. */
  private readonly lent = new Map<string, string>();
  private refilling: Promise<void> | undefined;
  closed = false;

  constructor(
    readonly dataDir: string,
    private readonly diskWrite: <T>(op: () => T) => T | undefined,
  ) {
    this.bodies = join(dataDir, BODIES_DIR);
    this.spareDir = join(dataDir, SPARE_DIR);
    this.ownSpares = join(this.spareDir, String(process.pid));
  }

  /** Makes the data dir ready for writing; `adopt`: spares (named as `spareName` gives) that become body files first. */
  prepare(adopt: { spare: string; id: string }[] = []): void {
    prepareDataDir(this.dataDir, this.bodies, this.spareDir, this.ownSpares, adopt);
  }

  /** A spare file's name as a journal records it: `<pid>/<file>` under spare/. */
  spareName(path: string): string {
    return `${process.pid}/${basename(path)}`;
  }

  path(id: string, ext = 'cap'): string {
    if (!isCaptureId(id)) throw new UserError(`invalid capture id ${JSON.stringify(String(id).slice(0, 40))}`);
    return join(this.bodies, `${id}.${ext}`);
  }

  open(id: string): number {
    return this.diskWrite(() => openSync(this.path(id), BODY_FLAGS, FILE_MODE)) ?? -1;
  }

  /** Off the event loop: creating a file costs up to a millisecond on a busy disk. Errors surface on the sync path. */
  openAsync(id: string): Promise<number> {
    return new Promise((resolve) => open(this.path(id), BODY_FLAGS, FILE_MODE, (err, fd) => resolve(err ? -1 : fd)));
  }

  /** A spare file for exchange `id`, if one is left: its body is read from there until `adopt` names it. */
  take(id: string): { path: string; fd: number } | undefined {
    const spare = this.spares.pop();
    if (spare) this.lent.set(id, spare.path);
    return spare;
  }

  /** Gives a spare the exchange's name, or (`keep` false: the exchange was deleted) removes it. */
  adopt(spare: string, id: string, keep: boolean): boolean {
    const ok = keep
      ? (this.diskWrite(() => (renameSync(spare, this.path(id)), true)) ?? false)
      : (this.diskWrite(() => rmSync(spare, { force: true })), false);
    this.lent.delete(id);
    return ok;
  }

  /** The file an exchange's body is read from: its own, or the spare it is still in. */
  private readPath(id: string): string {
    return this.lent.get(id) ?? this.path(id);
  }

  /** The body file's path and size, if it exists. */
  stat(id: string): { path: string; size: number } | undefined {
    const path = this.readPath(id);
    try {
      return { path, size: statSync(path).size };
    } catch {
      return undefined;
    }
  }

  /** Tops the spare body files up to `count`, one async create at a time, off the forwarding path. */
  refill(count: number, name: () => string): Promise<void> {
    if (this.refilling || this.closed || this.spares.length >= count) return this.refilling ?? Promise.resolve();
    // The first await comes before any `finally`: a run that ended in the same tick would clear `refilling` before it
    // was set, latching it to a settled promise, and no spare was ever made again.
    this.refilling = (async () => {
      await Promise.resolve();
      try {
        while (!this.closed && this.spares.length < count) {
          const path = join(this.ownSpares, `${name()}.cap`);
          const fd = await new Promise<number>((resolve) =>
            open(path, BODY_FLAGS | constants.O_EXCL, FILE_MODE, (err, n) => resolve(err ? -1 : n)),
          );
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

  /** Removes the unused spare files, this process's spare folder, and the spare folder when no other process has one. */
  async close(): Promise<void> {
    this.closed = true;
    await this.refilling;
    for (const s of this.spares.splice(0)) this.diskWrite(() => (closeSync(s.fd), rmSync(s.path, { force: true })));
    for (const dir of [this.ownSpares, this.spareDir]) {
      try {
        rmdirSync(dir);
      } catch {
        // not empty (a spare an exchange still writes to, another process's folder), or never made
      }
    }
  }

  read(id: string, from = 0): Uint8Array {
    // Only a regular file: anything else in its place (a device, a pipe) could block forever. None yet: empty.
    return readRegularFile(this.readPath(id), Infinity, from) ?? new Uint8Array(0);
  }

  /** The response chunks of a body file, read a block at a time (log.ts `responseFrames`); regular files only, like `read`. */
  *readFrames(id: string): Generator<ResponseFrame> {
    let fd = -1;
    try {
      fd = openSync(this.readPath(id), READ_FLAGS);
    } catch {
      return;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return;
      yield* responseFrames(fd, st.size, (f, buf, at) => {
        try {
          return readSync(f, buf, 0, buf.length, at);
        } catch {
          return 0; // a read error ends the body where it stopped, as `read` keeps what it got
        }
      });
    } finally {
      closeSync(fd);
    }
  }

  /** The request frame alone (it comes first), without reading the response. */
  readRequest(id: string): string | undefined {
    let fd = -1;
    try {
      fd = openSync(this.readPath(id), READ_FLAGS);
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

  readDelivered(id: string): Uint8Array | undefined {
    return readRegularFile(this.path(id, 'delivered'));
  }

  /** Opens (creates) an exchange's delivered file for writing; -1 when the disk refuses. */
  openDelivered(id: string): number {
    return this.diskWrite(() => openSync(this.path(id, 'delivered'), BODY_FLAGS, FILE_MODE)) ?? -1;
  }

  openDeliveredAsync(id: string): Promise<number> {
    return new Promise((resolve) => open(this.path(id, 'delivered'), BODY_FLAGS, FILE_MODE, (err, fd) => resolve(err ? -1 : fd)));
  }

  removeDelivered(id: string): void {
    this.diskWrite(() => rmSync(this.path(id, 'delivered'), { force: true }));
  }

  remove(id: string): void {
    for (const ext of ['cap', 'delivered']) this.diskWrite(() => rmSync(this.path(id, ext), { force: true }));
  }
}

/** Writes every byte of `parts` at `pos` (a short write is finished); returns the byte count. */
export function writeAt(fd: number, parts: Uint8Array[], pos: number): number {
  const total = parts.reduce((n, p) => n + p.length, 0);
  let n = writevSync(fd, parts, pos);
  if (n < total) {
    const rest = Buffer.concat(parts);
    while (n < total) n += writeSync(fd, rest, n, total - n, pos + n);
  }
  return total;
}
