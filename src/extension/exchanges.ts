/**
 * The exchanges a user opens, cached, and shared by the exchange panel, the raw-stream documents, the Problems panel
 * and the token view. Their analysis is the one the store's analysis service stored (capture/analysis.ts): read, never
 * run again here, so every view shows the same findings.
 */
import * as vscode from 'vscode';
import type { ExchangeAnalysis } from '../core/analyze';
import { exchangeModel } from '../core/capture/describe';
import type { CaptureStore } from '../core/capture/store';
import type { CapturedExchange } from '../core/model';
import type { ExchangeView, WirePageView } from '../../webview/protocol';
import { findingRange, positionAt } from './exchangeView';
import { openExchange } from './openExchange';
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
    const opened: OpenedExchange = { ...core, uri: rawUri(id, core.result?.response.model ?? exchangeModel(core.exchange)) };
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
    const text = o.view.native?.text ?? '';
    const uri = o.uri;
    const diags = o.view.findings.map((f) => {
      const r = findingRange(f, text.length);
      const a = positionAt(text, r.start);
      const b = positionAt(text, r.end);
      const d = new vscode.Diagnostic(
        new vscode.Range(a.line, a.character, b.line, b.character),
        f.expectedMarker ? `${f.message} (expected ${f.expectedMarker} here)` : f.message,
        SEVERITY[f.severity],
      );
      d.source = 'tokenscope';
      d.code = f.rule;
      return d;
    });
    // Repair mode: what the agent got instead of these bytes, as one note at the start.
    if (o.view.repaired) {
      const d = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 0), `Repair mode rewrote this response for the agent: ${o.view.repaired}. The findings are on the upstream's bytes.`, vscode.DiagnosticSeverity.Information);
      d.source = 'tokenscope';
      d.code = 'repaired';
      diags.push(d);
    }
    this.diagnostics.set(uri, diags);
    this.docChanged.fire(uri);
  }

  /** Clears the Problems entries of one exchange (its panel closed, or it was deleted). */
  clearDiagnostics(id: string): void {
    this.diagnostics.forEach((uri) => {
      if (idOfRawUri(uri) === id) this.diagnostics.delete(uri);
    });
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
    for (const s of this.subscriptions) s.dispose();
  }
}
