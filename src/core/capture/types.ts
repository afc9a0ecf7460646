/** The capture store's public shapes: what the proxy records through, and what readers (CLI, extension) read. */
import type { AnalysisOutcome, StoredAnalysis } from './analysis';
import type { RetentionClock, RetentionResult } from './retention';
import type { CaptureReader, CapturedExchange } from '../model';
import type { RedactOptions } from '../redact';
import type { ExchangeQuery } from './database';
import type { ResponseFrame } from './log';
import type { SlugEntry, SlugCache, StoredComparison } from './provider-rows';

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
   * Only exchanges this process recorded are analysed here; each is analysed once and its result stored.
   */
  onAnalyzed?: (exchange: CapturedExchange, result: AnalysisOutcome | undefined) => void;
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
  /** The clocks retention judges age and clock jumps by (tests fake them; default: the system's). */
  clock?: RetentionClock;
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
export type ExchangeAnnotations = Partial<
  Pick<
    CapturedExchange,
    | 'requestModel'
    | 'generationId'
    | 'pin'
    | 'servedProvider'
    | 'repair'
    | 'policy'
    | 'queuedMs'
    | 'requestNotKept'
    | 'notAnalysed'
    | 'websocket'
  >
>;

export interface ExchangeWriter {
  readonly id: string;
  /**
   * `ttfbMs`: the recorded time to first byte, when replaying a recorded exchange (import); default: now. With `hold`,
   * the status waits to share the journal write of the response's end (./journal.ts) until `uncork` or `ended`: the
   * caller calls one of them before the client can see any byte of the response (the proxy's relay does). The status's
   * journal line and the row's fields (the redacted headers) are recorded a turn of the loop later then, or at
   * `finish` if sooner: the body file's mark holds the status meanwhile.
   */
  responseStarted(status: number, headers: Record<string, string | string[] | undefined>, ttfbMs?: number, hold?: boolean): void;
  /** Decoded response bytes, in arrival order. `t`: recorded arrival time (ms since start), for imports; default: now. */
  chunk(bytes: Uint8Array, t?: number): void;
  /**
   * Chunks that arrive together (one read from the upstream): from `cork` to `uncork` their frames are gathered and
   * reach the kernel in one syscall at `uncork`, still synchronously, before the caller forwards them. `uncork` also
   * writes a status `responseStarted` held.
   */
  cork(): void;
  uncork(): void;
  annotate(fields: ExchangeAnnotations): void;
  /**
   * The upstream's response ended and every decoded byte went through `chunk`: the exchange's row says "complete"
   * now, synchronously, before the proxy ends the client's response, so a process killed after the client saw the
   * end never leaves it "interrupted". `finish` still records the outcome and tells listeners.
   */
  ended?(): void;
  /**
   * A response stage (repair mode) may deliver other bytes than the upstream's, which stay the exchange's body.
   * `delivering` announces them (their file is created off the forwarding path); `deliver` appends what was just
   * written to the client, masked like the body, in the same tick (a killed process loses nothing the client saw);
   * `deliveredUnchanged` says they were the upstream's after all, and the copy is not kept.
   */
  delivering(): void;
  deliver(bytes: Uint8Array): void;
  deliveredUnchanged(): void;
  /** `endedAt`: the recorded end (epoch ms), for imports; default: now. */
  finish(opts?: { error?: string; incomplete?: boolean; endedAt?: number }): Promise<CapturedExchange>;
}

export interface CaptureStore extends CaptureReader, SlugCache {
  readonly dataDir: string;
  readonly readOnly: boolean;
  /** Exchanges matching the filters, newest first (an indexed database query: fast on 100,000 exchanges). */
  query(q: ExchangeQuery): CapturedExchange[];
  /** The analysis stored for an exchange by the analysis service (./analysis.ts), if it ran: read it, never re-run it. */
  readAnalysis(id: string): StoredAnalysis | undefined;
  /** Ids starting with `prefix`, at most `limit` (what `findCapture` resolves a typed prefix with). */
  idsWithPrefix(prefix: string, limit: number): string[];
  /**
   * The response as `readResponse` has it, chunk by chunk with each chunk's arrival time, read from disk a block at a
   * time: a large body is parsed without being held whole (wire/chunked.ts). Undefined for an unknown id.
   */
  readResponseFrames(id: string): Iterable<ResponseFrame> | undefined;
  /** The bytes delivered to the client, when they differ from the upstream's (repair mode); undefined otherwise. */
  readDelivered(id: string): Uint8Array | undefined;
  begin(init: BeginInit): ExchangeWriter;
  delete(id: string): Promise<void>;
  onDidChange(listener: (e: StoreChange) => void): () => void;
  /** The verdict of the last `compare` run per model × provider slug (src/core/upstream/compare-verdicts.ts). */
  lastComparisons(model?: string): StoredComparison[];
  /** Keeps a comparison's verdicts, each replacing an older one of its model × provider (a read-only store keeps none). */
  putComparisons(verdicts: readonly StoredComparison[]): void;
  /** OpenRouter provider display names and slugs learned from its listings (src/core/policy/slugs.ts). */
  providerSlugs(): SlugEntry[];
  learnProviderSlugs(entries: readonly SlugEntry[]): void;
  /**
   * Removes every capture past the retention limits, with the user's consent (`tokenscope captures --prune`): what a
   * run holds back on its own (retention.ts). Age is judged by the captures' own times.
   */
  prune(): Promise<RetentionResult>;
  /** Resolves once every queued analysis has run (tests, CLI shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}
