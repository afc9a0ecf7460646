/**
 * The regression watch list: cases (a captured request that was broken, the provider it is pinned to, the rules it
 * broke) and each case's history of re-checks. Kept beside the captures in the data dir, as `watch.json` (0600,
 * written to a temporary file and renamed over the old one, so a crash leaves the old list or the new one, never a
 * torn file). `WatchList` is the interface the rest of Tokenscope uses, so the list can move into the capture
 * database without its callers changing.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  /** Newest last, at most MAX_HISTORY. */
  history: CheckResult[];
}

export interface WatchList {
  list(): WatchCase[];
  get(id: string): WatchCase | undefined;
  /** Adds a case (its `id` is assigned); returns it. */
  add(c: Omit<WatchCase, 'id'>): WatchCase;
  update(c: WatchCase): void;
  remove(id: string): boolean;
}

export const WATCH_FILE = 'watch.json';
const MAX_HISTORY = 50;

interface FileShape {
  format: 'tokenscope.watch';
  version: 1;
  nextId: number;
  cases: WatchCase[];
}

/** The watch list of `dataDir` (the file is created on the first change). */
export function openWatchList(dataDir: string): WatchList {
  return new FileWatchList(join(dataDir, WATCH_FILE), dataDir);
}

class FileWatchList implements WatchList {
  constructor(
    private readonly path: string,
    private readonly dir: string,
  ) {}

  private read(): FileShape {
    if (!existsSync(this.path)) return { format: 'tokenscope.watch', version: 1, nextId: 1, cases: [] };
    let doc: FileShape;
    try {
      doc = JSON.parse(readFileSync(this.path, 'utf8')) as FileShape;
    } catch (e) {
      throw new UserError(`the watch list ${this.path} is unreadable (${(e as Error).message.split('\n')[0]}); move it away to start a new one`);
    }
    if (doc?.format !== 'tokenscope.watch' || !Array.isArray(doc.cases)) throw new UserError(`${this.path} is not a Tokenscope watch list`);
    return doc;
  }

  private write(doc: FileShape): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(doc, null, 1) + '\n', { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, this.path);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }

  list(): WatchCase[] {
    return this.read().cases;
  }

  get(id: string): WatchCase | undefined {
    return this.read().cases.find((c) => c.id === id);
  }

  add(c: Omit<WatchCase, 'id'>): WatchCase {
    const doc = this.read();
    const full: WatchCase = { id: `w${doc.nextId}`, ...c };
    doc.nextId++;
    doc.cases.push(full);
    this.write(doc);
    return full;
  }

  update(c: WatchCase): void {
    const doc = this.read();
    const i = doc.cases.findIndex((x) => x.id === c.id);
    if (i < 0) return; // removed meanwhile
    doc.cases[i] = { ...c, history: c.history.slice(-MAX_HISTORY) };
    this.write(doc);
  }

  remove(id: string): boolean {
    const doc = this.read();
    const before = doc.cases.length;
    doc.cases = doc.cases.filter((c) => c.id !== id);
    if (doc.cases.length === before) return false;
    this.write(doc);
    return true;
  }
}
