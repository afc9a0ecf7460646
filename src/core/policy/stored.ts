/**
 * Provider policies kept in the data dir (`policies.json`, beside the capture database), shared by every process that
 * uses it: `tokenscope policy set|rm` and the Providers view write them, every running proxy (a CLI `serve`, the
 * extension's) applies them from its next request. The file has the form `serve --policy FILE` reads: a JSON object
 * of model id → {ignore, order, only, allow_fallbacks}.
 *
 * Writing is safe under concurrency: a change is read-modify-write under a lock file (`policies.json.lock`, created
 * exclusively; a lock whose process is gone is broken), and the new file replaces the old one by rename, so a reader
 * sees the old policies or the new ones, never half a file. The lock is held only across synchronous code: within one
 * process two changes never interleave.
 *
 * Reading is cheap: `LivePolicies.get()` (called by the proxy per request) looks at the file's identity (inode, size,
 * mtime) at most every `checkEveryMs` (250 ms) and reads it again only when that changed. Nothing is polled.
 */
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { UserError } from '../model';
import { fsWhy } from '../fs-errors';
import { checkPolicies, loadPolicyFile, type Policies } from './policy';

export const POLICY_FILE = 'policies.json';
const LOCK_SUFFIX = '.lock';
/** A lock older than this is broken even if its process seems alive (it is held only across synchronous code). */
const LOCK_STALE_MS = 30_000;
/** How long a change waits for another process's lock before it gives up with one line. */
const LOCK_WAIT_MS = 10_000;
export const CHECK_EVERY_MS = 250;

export function policyFilePath(dataDir: string): string {
  return join(dataDir, POLICY_FILE);
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError(`cannot read the stored provider policies ${path}: ${fsWhy(e)}`);
  }
}

/** The policies stored in a data dir (none when the file is absent); a UserError when the file is malformed. */
export function readStoredPolicies(dataDir: string): Policies {
  const path = policyFilePath(dataDir);
  const text = readText(path);
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UserError(`the stored provider policies ${path} are not JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  return checkPolicies(value, path);
}

/** The policies as the file holds them: one key per model, sorted, two-space indented. */
export function policiesJson(policies: Policies): string {
  const sorted: Policies = {};
  for (const k of Object.keys(policies).sort()) sorted[k] = policies[k];
  return `${JSON.stringify(sorted, null, 2)}\n`;
}

interface LockInfo {
  pid?: number;
  token?: string;
  ino: number;
  mtimeMs: number;
}

function lockInfo(path: string): LockInfo | undefined {
  try {
    const st = statSync(path);
    let parsed: { pid?: unknown; token?: unknown } = {};
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      // being written by its holder, or damaged: judged by its age
    }
    return {
      pid: typeof parsed.pid === 'number' ? parsed.pid : undefined,
      token: typeof parsed.token === 'string' ? parsed.token : undefined,
      ino: st.ino,
      mtimeMs: st.mtimeMs,
    };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock nobody holds any more: its process is gone (or is this one, which holds none across a wait), or it is old. */
function stale(l: LockInfo, now: number): boolean {
  if (now - l.mtimeMs > LOCK_STALE_MS) return true;
  if (l.pid === undefined) return false; // its holder is writing it right now
  return l.pid === process.pid || !alive(l.pid);
}

/**
 * Removes a stale lock, unless it was replaced meanwhile: the lock is renamed aside first (only one process can), and
 * put back when what was renamed is not the lock judged stale (another process broke it and took a new one).
 */
function breakLock(path: string, seen: LockInfo): void {
  const aside = `${path}.${randomBytes(6).toString('hex')}.stale`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const got = lockInfo(aside);
  if (got && (got.ino !== seen.ino || got.token !== seen.token)) {
    try {
      linkSync(aside, path);
    } catch {
      // a third process holds a new lock: the one renamed aside is no more than a stale copy then
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone
  }
}

function tryLock(path: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, token, at: Date.now() }));
  } finally {
    closeSync(fd);
  }
  return true;
}

function unlock(path: string, token: string): void {
  if (lockInfo(path)?.token !== token) return; // broken meanwhile by another process: it is not ours to remove
  try {
    unlinkSync(path);
  } catch {
    // gone
  }
}

/** Writes `text` to `path` by rename over it (0600), flushed to disk first: a reader sees the old file or the new one. */
function replaceFile(path: string, text: string, token: string): void {
  const tmp = `${path}.${token}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // gone
    }
    throw e;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Changes the stored policies: `change` gets the current ones and returns the new ones (or throws a UserError, and
 * nothing is written). Concurrent changes from several processes are applied one after the other, none lost.
 */
export async function updateStoredPolicies(
  dataDir: string,
  change: (current: Policies) => Policies,
  waitMs = LOCK_WAIT_MS,
): Promise<{ before: Policies; after: Policies }> {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new UserError(`cannot store provider policies in ${dataDir}: ${fsWhy(e)}`);
  }
  const path = policyFilePath(dataDir);
  const lockPath = path + LOCK_SUFFIX;
  const token = randomBytes(8).toString('hex');
  const until = Date.now() + waitMs;
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    let locked: boolean;
    try {
      locked = tryLock(lockPath, token);
    } catch (e) {
      throw new UserError(`cannot store provider policies in ${dataDir}: ${fsWhy(e)}`);
    }
    if (locked) {
      // From here to the unlock nothing awaits: the change is one synchronous step.
      try {
        const before = readStoredPolicies(dataDir);
        const after = change(before);
        checkPolicies(after, path);
        if (lockInfo(lockPath)?.token !== token)
          throw new UserError(`the provider policies in ${dataDir} were not changed: another process took their lock; try again`);
        try {
          replaceFile(path, policiesJson(after), token);
        } catch (e) {
          throw new UserError(`cannot write the provider policies ${path}: ${fsWhy(e)}`);
        }
        return { before, after };
      } finally {
        unlock(lockPath, token);
      }
    }
    const held = lockInfo(lockPath);
    if (held && stale(held, Date.now())) {
      breakLock(lockPath, held);
      continue;
    }
    if (Date.now() > until)
      throw new UserError(
        `the provider policies in ${dataDir} were not changed: ${held?.pid ? `process ${held.pid}` : 'another process'} has held their lock for over ${waitMs / 1000} s; try again`,
      );
    await sleep(delay);
  }
}

/** A file's identity: changes whenever it is replaced (new inode) or edited (size, mtime); `none` when absent. */
function signature(path: string): string {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'none' : `error:${(e as NodeJS.ErrnoException).code}`;
  }
}

export interface LivePoliciesOptions {
  /** The data dir whose stored policies apply (none: only `file` and `base`). */
  dataDir?: string;
  /** A policy file (`serve --policy FILE`): read now (a UserError when it cannot be), and again whenever it changes. */
  file?: string;
  /** Policies from elsewhere (the setting `tokenscope.providerPolicy`), under the file's and the stored ones. */
  base?: () => Policies;
  checkEveryMs?: number;
  /** A file that changed and cannot be used: the policies read before stay in force, and this says so once. */
  onWarning?: (message: string) => void;
  /** The policies in force changed (called on the request that noticed: defer any work). */
  onChange?: () => void;
  now?: () => number;
}

/**
 * The policies a running proxy applies, followed live: per model key, a stored policy (`tokenscope policy set`, the
 * Providers view) takes precedence over one from `file`, which takes precedence over `base`. `get()` is what the
 * proxy calls per request: it looks at the files at most every `checkEveryMs` and reads one only when it changed.
 */
export class LivePolicies {
  private readonly every: number;
  private readonly now: () => number;
  private lastCheck = Number.NEGATIVE_INFINITY;
  private storedSig = '';
  private fileSig = '';
  private stored: Policies = {};
  private fromFile: Policies = {};
  private baseSeen: Policies | undefined;
  private combined: Policies = {};
  /** Counts each change of the combined policies (a view redraws when it moved). */
  version = 0;

  constructor(private readonly opts: LivePoliciesOptions) {
    this.every = opts.checkEveryMs ?? CHECK_EVERY_MS;
    this.now = opts.now ?? Date.now;
    if (opts.file !== undefined) {
      this.fileSig = signature(opts.file);
      this.fromFile = loadPolicyFile(opts.file);
    }
    this.check(true);
  }

  /** The policies in force now (the same object until they change). */
  get(): Policies {
    this.check();
    return this.combined;
  }

  /** Where each model key's policy comes from. */
  sources(): Record<string, 'stored' | 'file' | 'setting'> {
    this.check();
    const out: Record<string, 'stored' | 'file' | 'setting'> = {};
    for (const k of Object.keys(this.baseSeen ?? {})) out[k] = 'setting';
    for (const k of Object.keys(this.fromFile)) out[k] = 'file';
    for (const k of Object.keys(this.stored)) out[k] = 'stored';
    return out;
  }

  /** Looks for changes now when `force`, else when the last look is `checkEveryMs` old; true when the policies changed. */
  check(force = false): boolean {
    const t = this.now();
    const base = this.opts.base?.();
    let changed = base !== this.baseSeen;
    this.baseSeen = base;
    if (force || t - this.lastCheck >= this.every) {
      this.lastCheck = t;
      if (this.opts.dataDir !== undefined) changed = this.follow('stored') || changed;
      if (this.opts.file !== undefined) changed = this.follow('file') || changed;
    }
    if (!changed && this.version > 0) return false;
    this.combined = { ...(this.baseSeen ?? {}), ...this.fromFile, ...this.stored };
    if (this.version++ > 0) this.opts.onChange?.();
    return true;
  }

  private follow(which: 'stored' | 'file'): boolean {
    const path = which === 'stored' ? policyFilePath(this.opts.dataDir!) : this.opts.file!;
    const sig = signature(path);
    if (sig === (which === 'stored' ? this.storedSig : this.fileSig)) return false;
    if (which === 'stored') this.storedSig = sig;
    else this.fileSig = sig;
    try {
      if (which === 'stored') this.stored = readStoredPolicies(this.opts.dataDir!);
      else this.fromFile = loadPolicyFile(path);
      return true;
    } catch (e) {
      const what = which === 'stored' ? 'the stored provider policies' : `the policy file ${path}`;
      this.opts.onWarning?.(`${(e as Error).message.split('\n')[0]}; ${what} read before stay in force until it is fixed`);
      return false;
    }
  }
}
