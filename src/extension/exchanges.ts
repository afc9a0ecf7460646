/**
 * The exchanges a user opens, cached, and shared by the exchange panel, the raw-stream documents, the Problems panel
 * and the token view. Their analysis is the one the store's analysis service stored (capture/analysis.ts): read, never
 * run again here, so every view shows the same findings.
 *
 * The Problems panel lists the findings of every open exchange and, open or not, of the newest broken captures
 * (problems.ts), kept current as captures arrive, are analysed and are deleted.
 */
import * as vscode from 'vscode';
import type { ExchangeAnalysis } from '../core/analyze';
import { exchangeModel } from '../core/capture/describe';
import type { CaptureStore } from '../core/capture/store';
import type { CapturedExchange } from '../core/model';
import type { ExchangeView, WirePageView } from '../../webview/protocol';
import { repairSummary } from '../core/repair/describe';
import { openExchange } from './openExchange';
import { problemCaptures, problemRecords, type ProblemRecord } from './problems';
import { readWirePage } from './wirePage';

export const RAW_SCHEME = 'tokenscope';

export interface OpenedExchange {
  exchange: CapturedExchange;
  /** The analysis, its streamed response without wire events (the view holds the ones it shows). */
  result?: ExchangeAnalysis;
  /** Why `result` is missing. */
  unavailable?: string;
  view: ExchangeView;
  /** The raw-stream document the Problems panel points at. */
  uri: vscode.Uri;
}

/** `tokenscope:/<id>/<model>.txt`: the native text of one response, read-only. */
function rawUri(id: string, model = 'response'): vscode.Uri {
  return vscode.Uri.from({ scheme: RAW_SCHEME, path: `/${id}/${model.replace(/[^\w.-]+/g, '_')}.txt` });
}

/** An exchange's raw-stream document, named by the model that answered (else the one requested). */
function rawUriOf(x: CapturedExchange): vscode.Uri {
  return rawUri(x.id, exchangeModel(x));
}

/** Between a store change and the Problems panel following it. */
const PROBLEMS_DELAY_MS = 500;
/** Stored analyses read per turn of the event loop while the Problems panel catches up. */
const PROBLEMS_PER_TURN = 10;

export function idOfRawUri(uri: vscode.Uri): string | undefined {
  return uri.scheme === RAW_SCHEME ? uri.path.split('/')[1] : undefined;
}

const SEVERITY = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

export class Exchanges implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly cache = new Map<string, OpenedExchange>();
  private readonly docChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.docChanged.event;
  readonly diagnostics = vscode.languages.createDiagnosticCollection('tokenscope');
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Exchanges whose Problems entries an open exchange published (until its panel closes). */
  private readonly opened = new Set<string>();
  /** The newest broken captures whose Problems entries are published from their stored analysis (problems.ts). */
  private readonly listed = new Set<string>();
  /** Listed captures analysed again since: their entries are read afresh by the next sync. */
  private readonly stale = new Set<string>();
  private problemsTimer: NodeJS.Timeout | undefined;
  private problemsRun: Promise<void> | undefined;
  private problemsAgain = false;

  constructor(
    private readonly store: () => CaptureStore | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(RAW_SCHEME, this), this.diagnostics, this.docChanged);
  }

  /** Drops cached analysis (the exchange changed or was deleted). */
  forget(id: string): void {
    this.cache.delete(id);
  }

  async open(id: string): Promise<OpenedExchange | undefined> {
    const cached = this.cache.get(id);
    if (cached && cached.exchange.state !== 'streaming') return cached;
    const core = await openExchange(this.store(), id, (m, e) => this.log.error(m, e));
    if (!core) return undefined;
    const opened: OpenedExchange = { ...core, uri: rawUriOf(core.exchange) };
    this.cache.set(id, opened);
    if (this.cache.size > 32) this.cache.delete(this.cache.keys().next().value!);
    this.publishDiagnostics(opened);
    return opened;
  }

  /** The Wire tab's events from `from` on, read from the stored body (never kept here). */
  wirePage(id: string, from: number): Promise<WirePageView> {
    return readWirePage(this.store(), id, from);
  }

  /** Findings as diagnostics on the raw-stream document, so the Problems panel lists them and F8 walks them. */
  private publishDiagnostics(o: OpenedExchange): void {
    this.opened.add(o.exchange.id);
    this.setDiagnostics(o.exchange.id, o.uri, problemRecords(o.view.findings, o.view.native?.text ?? '', o.view.repaired));
    this.docChanged.fire(o.uri);
  }

  /** The exchange's Problems entries, replacing any it had (under another document name while it streamed). */
  private setDiagnostics(id: string, uri: vscode.Uri, records: readonly ProblemRecord[]): void {
    this.deleteDiagnostics(id);
    this.diagnostics.set(
      uri,
      records.map((r) => {
        const d = new vscode.Diagnostic(
          new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character),
          r.message,
          SEVERITY[r.severity],
        );
        d.source = 'tokenscope';
        d.code = r.code;
        return d;
      }),
    );
  }

  private deleteDiagnostics(id: string): void {
    this.diagnostics.forEach((uri) => {
      if (idOfRawUri(uri) === id) this.diagnostics.delete(uri);
    });
  }

  /**
   * Its panel closed, or it is about to be deleted: the exchange's Problems entries go, unless it is one of the newest
   * broken captures the panel lists anyway.
   */
  clearDiagnostics(id: string): void {
    this.opened.delete(id);
    if (!this.listed.has(id)) this.deleteDiagnostics(id);
  }

  /** A capture was added, changed (analysed) or deleted: the Problems panel follows, shortly after. */
  storeChanged(kind: 'added' | 'updated' | 'deleted', id: string): void {
    if (kind === 'deleted') {
      this.forget(id);
      this.opened.delete(id);
      this.listed.delete(id);
      this.stale.delete(id);
      this.deleteDiagnostics(id);
    } else if (kind === 'updated' && this.listed.has(id)) this.stale.add(id);
    this.problemsTimer ??= setTimeout(() => {
      this.problemsTimer = undefined;
      void this.syncProblems();
    }, PROBLEMS_DELAY_MS);
  }

  /**
   * Lists the findings of the newest broken captures (problems.ts) from their stored analyses, a few per turn of the
   * event loop, and drops those of captures no longer among them. One run at a time; a change during a run is
   * picked up by the next.
   */
  syncProblems(): Promise<void> {
    if (this.problemsRun) {
      this.problemsAgain = true;
      return this.problemsRun;
    }
    this.problemsRun = (async () => {
      do {
        this.problemsAgain = false;
        await this.listProblems();
      } while (this.problemsAgain);
    })().finally(() => (this.problemsRun = undefined));
    return this.problemsRun;
  }

  private async listProblems(): Promise<void> {
    const store = this.store();
    const wanted = store ? problemCaptures((q) => store.query(q)) : [];
    const ids = new Set(wanted.map((x) => x.id));
    for (const id of [...this.listed]) {
      if (ids.has(id)) continue;
      this.listed.delete(id);
      this.stale.delete(id);
      if (!this.opened.has(id)) this.deleteDiagnostics(id);
    }
    let n = 0;
    for (const x of wanted) {
      if (this.listed.has(x.id) && !this.stale.delete(x.id)) continue;
      if (++n % PROBLEMS_PER_TURN === 0) await new Promise((r) => setImmediate(r));
      if (this.store() !== store || !store) return;
      this.listed.add(x.id);
      if (this.opened.has(x.id)) continue; // its open panel's entries are there already
      const stored = store.readAnalysis(x.id);
      if (!stored) {
        this.listed.delete(x.id); // not analysed yet: its analysis brings it back (`updated`)
        continue;
      }
      const records = problemRecords(stored.analysis.findings, stored.analysis.native.text, x.repair && repairSummary(x.repair));
      this.setDiagnostics(x.id, rawUriOf(x), records);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const id = idOfRawUri(uri);
    const o = id ? await this.open(id) : undefined;
    if (!o) return `Tokenscope: exchange ${id ?? uri.path} is not in the capture store (deleted, or captured elsewhere).\n`;
    if (o.view.native) return o.view.native.text;
    // Without analysis, the raw body is the best honest view.
    const body = this.store()?.readResponse(o.exchange.id);
    return body ? new TextDecoder().decode(body.bytes) : '';
  }

  dispose(): void {
    clearTimeout(this.problemsTimer);
    for (const s of this.subscriptions) s.dispose();
  }
}
