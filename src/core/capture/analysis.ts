/**
 * The analysis service: the one owner of analysis for recorded exchanges, as mitmproxy's add-ons listen to flows. The
 * store records and says when an exchange finished; this service analyses it once, off the forwarding path, and
 * stores the summary (in the exchange's row), its findings by rule (for `captures --rule`) and the full analysis,
 * which readers get from `CaptureStore.readAnalysis` instead of analysing again.
 */
import { analyzeExchange, storedResult, type ExchangeAnalysis } from '../analyze';
import type { Analysis, CaptureReader, CapturedExchange, ChunkTiming, ExchangeSummary, Finding } from '../model';
import { OFF_THREAD_BYTES, type CaptureThread } from './capture-thread';
import type { CaptureDb } from './database';
import { packAnalysis, unpackAnalysis } from './stored-form';
import type { StoreOptions } from './types';

/** Bodies above this are stored but not analysed: parsing them would stall the proxy's event loop. */
const MAX_ANALYZED_BYTES = 32 * 1024 * 1024;
/**
 * The longest an analysis waits for the response heads it would delay, and how recent a request must be to count: a
 * proxy that is never quiet still analyses, and an upstream that hangs holds nothing back for long.
 */
const QUIET_WAIT_MS = 50;
/**
 * Bumped when the stored shape or the analysis changes in a way old results should not be trusted for. (How a row
 * keeps it, each text once, is ./stored-form.ts: that needs no bump.)
 */
export const ANALYSIS_VERSION = 2;

/** What the service stores per exchange. */
export interface StoredAnalysis {
  version: number;
  summary: ExchangeSummary;
  analysis: Analysis;
}

/**
 * What the service keeps of an analysis: the summary, the findings and the stored result as JSON text. A large
 * exchange's analysis runs on the worker thread, which also writes its row: only the summary and the findings cross
 * back, so its parsed response, the text the result holds and the row never reach the proxy's thread.
 */
export interface AnalysisOutcome {
  summary: ExchangeSummary;
  findings: Finding[];
  /**
   * The StoredAnalysis as the database keeps it: serialised, each text once (./stored-form.ts). Absent when the
   * capture worker wrote the row itself (`written`): megabytes of text never cross to the proxy's thread.
   */
  stored?: string;
  /** The row (summary, findings, stored analysis) is already in the database. */
  written?: boolean;
}

export function outcomeOf(result: ExchangeAnalysis): AnalysisOutcome & { stored: string } {
  const stored: StoredAnalysis = { version: ANALYSIS_VERSION, summary: result.summary, analysis: result.analysis };
  return { summary: result.summary, findings: result.analysis.findings, stored: packAnalysis(stored) };
}

/**
 * Watches every analysis of a captured exchange (tests count them: each exchange is analysed once). Production code
 * never sets it.
 */
export const analysisProbe: { onAnalyze?: (exchange: CapturedExchange) => void } = {};

/** The one place a captured exchange is analysed: the service below, or a reader whose store holds no result yet. */
export function analyzeCaptured(exchange: CapturedExchange, responseBody: Uint8Array, chunks?: ChunkTiming[]): ExchangeAnalysis {
  analysisProbe.onAnalyze?.(exchange);
  return analyzeExchange(exchange, responseBody, chunks);
}

/** A reader that may hold stored analyses (a capture store); an imported bundle or a bare reader holds none. */
export interface AnalysisSource {
  readAnalysis?(id: string): StoredAnalysis | undefined;
}

/**
 * The full result for a reader (tree, Problems panel, token view, `show`, `tail`, exports, watch): the stored
 * analysis with the exchange's response parsed again (parsing runs no check). Only when the store holds none yet
 * (a read-only command on an exchange its writer has not analysed, an exchange no store recorded) is it analysed,
 * here, by the service's own function.
 */
export function resultFor(
  source: AnalysisSource | undefined,
  exchange: CapturedExchange,
  responseBody: Uint8Array,
  chunks?: ChunkTiming[],
): ExchangeAnalysis {
  const stored = source?.readAnalysis?.(exchange.id);
  return stored ? storedResult(exchange, responseBody, chunks, stored) : analyzeCaptured(exchange, responseBody, chunks);
}

/**
 * `resultFor`, after this process's queued analyses ran: an exchange the caller's own store just recorded is read
 * once the service stored it, never analysed a second time beside it.
 */
export async function resultWhenAnalysed(
  source: AnalysisSource & { idle?(): Promise<void>; readOnly?: boolean },
  exchange: CapturedExchange,
  responseBody: Uint8Array,
  chunks?: ChunkTiming[],
): Promise<ExchangeAnalysis> {
  if (!source.readOnly && source.idle && !source.readAnalysis?.(exchange.id)) await source.idle();
  return resultFor(source, exchange, responseBody, chunks);
}

interface Host extends CaptureReader {
  analysed(x: CapturedExchange): void;
  /**
   * Runs a write on this thread's connection now, or once another program's write lock on the database is free: the
   * proxy's thread never waits for it (./write-lock.ts). `bytes`: what the write holds in memory meanwhile.
   */
  writeSoon(op: (batch: { wait: boolean }) => void, bytes: number): void;
  /** Holds the host's batched row writes until the returned function is called (another connection is writing). */
  holdWrites(): () => void;
  /** The exchange's body file and its size (undefined when there is none). */
  bodyFile(id: string): { path: string; size: number } | undefined;
  /** Whether an exchange of this process begun at `since` (epoch ms) or later still waits for its response head. */
  awaitingResponse(since: number): boolean;
}

export class AnalysisService {
  private readonly queue: { x: CapturedExchange; recovered?: boolean }[] = [];
  private running: Promise<void> | undefined;
  constructor(
    private readonly host: Host,
    private readonly db: CaptureDb,
    private readonly opts: StoreOptions,
    private readonly warn: (msg: string) => void,
    private readonly thread: CaptureThread,
  ) {}

  /**
   * A finished exchange of this process: analysed once, soon, never inside the forwarding call stack. `recovered`: one a
   * stopped process left, settled at open: analysed and stored like the others, without `onAnalyzed`, even by a store
   * that analyses nothing else (whichever command opens the data dir first after a crash, every reader then gives
   * the same answer).
   */
  finished(x: CapturedExchange, opts: { recovered?: boolean } = {}): void {
    if ((this.opts.analyze === false && !opts.recovered) || x.status === undefined) return;
    this.queue.push({ x, recovered: opts.recovered });
    this.running ??= this.drain();
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** The stored analysis of an exchange, if it ran (any process's). */
  read(id: string): StoredAnalysis | undefined {
    const v = unpackAnalysis(this.db.analysis(id));
    return v && v.version === ANALYSIS_VERSION ? v : undefined;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // A short sleep, not a turn of the loop: the process yields its core, so the client that just got the last
        // bytes (on a busy machine it may wait for this very core) reads them before the analysis runs.
        await new Promise((r) => setTimeout(r, 1));
        await this.quietMoment();
        const { x, recovered } = this.queue.shift()!;
        let result: AnalysisOutcome | undefined;
        if ((x.responseBytes ?? 0) <= MAX_ANALYZED_BYTES) {
          try {
            result = await this.analyze(x);
            if (result) {
              x.summary = result.summary;
              const { findings, stored } = result;
              if (!result.written && stored !== undefined) {
                this.host.writeSoon(
                  (batch) =>
                    this.db.batch(() => {
                      this.db.update(x);
                      this.db.putAnalysis(x, findings, stored);
                    }, batch),
                  stored.length * 2,
                );
              }
              if (result.written || stored !== undefined) this.host.analysed(x);
            }
          } catch (err) {
            this.warn(`analysis of ${x.id} failed: ${(err as Error).message?.split('\n')[0]}`);
          }
        }
        if (!recovered) this.opts.onAnalyzed?.(x, result);
      }
    } finally {
      this.running = undefined;
    }
  }

  /**
   * Waits (up to QUIET_WAIT_MS) while a request of this process sent in the last QUIET_WAIT_MS waits for its upstream's
   * response head. An agent's next request comes a moment after its last response ended: an analysis (reading the
   * body, a commit, 0.3-1 ms here) run then landed in that request's round trip and held its first byte back as long.
   */
  private async quietMoment(): Promise<void> {
    const until = Date.now() + QUIET_WAIT_MS;
    while (Date.now() < until && this.host.awaitingResponse(Date.now() - QUIET_WAIT_MS)) await new Promise((r) => setTimeout(r, 1));
  }

  /**
   * A large exchange goes to the worker thread (in-thread when there is none); the others are analysed here. The
   * worker writes a large exchange's row on its own connection (a statement of megabytes would hold this thread for
   * 50-150 ms); meanwhile this process's batched row writes wait (the journal stands in for them), so this thread
   * never waits on the write lock the worker holds.
   */
  private async analyze(x: CapturedExchange): Promise<AnalysisOutcome | undefined> {
    const file = this.host.bodyFile(x.id);
    let release: (() => void) | undefined;
    const ready = (): CapturedExchange => {
      release ??= this.host.holdWrites();
      return x;
    };
    const db = this.db.path;
    const off =
      file && file.size > OFF_THREAD_BYTES ? this.thread.analyze(x, file.path, db === undefined ? undefined : { db, ready }) : undefined;
    if (off) {
      analysisProbe.onAnalyze?.(x);
      try {
        return await off;
      } finally {
        release?.();
      }
    }
    const full = this.host.get(x.id);
    const res = full && this.host.readResponse(x.id);
    return full && res ? outcomeOf(analyzeCaptured(full, res.bytes, res.chunks)) : undefined;
  }
}
