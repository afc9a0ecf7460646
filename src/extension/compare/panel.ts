/**
 * One comparison in one webview panel. The host owns the results (CompareState); the webview is a view of them that
 * asks for a snapshot with `ready` whenever it (re)loads, so the panel needs no retainContextWhenHidden. Closing the
 * panel cancels a comparison still running.
 */
import type * as vscode from 'vscode';
import type { CompareReport, ProviderResult } from '../../core/upstream/compare';
import {
  isCompareWebviewMessage,
  type CompareHostMessage,
  type CompareWebviewMessage,
  type DiffKind,
} from '../../../webview/compare/protocol';
import { WebviewType } from '../contributions';
import { WebviewPanel } from '../webviewPanel';
import { compareView, sampleLabel, type CompareState } from './matrix';

/** Snapshots are coalesced while samples stream in: at most one post per this many ms. */
const POST_INTERVAL_MS = 100;

export interface PanelActions {
  openExchange(id: string): void;
  /** Opens two samples side by side; `tokens` answers through `post` (the webview shows the token diff). */
  diff(
    kind: DiffKind,
    left: { id: string; label: string },
    right: { id: string; label: string },
    post: (m: CompareHostMessage) => void,
  ): Promise<void>;
  log: vscode.LogOutputChannel;
}

export class ComparePanel extends WebviewPanel<CompareHostMessage, CompareWebviewMessage> {
  readonly abort = new AbortController();
  private pending: NodeJS.Timeout | undefined;
  /** The last token diff shown, re-sent when the webview reloads. */
  private tokenDiff: CompareHostMessage | undefined;

  constructor(
    extensionUri: vscode.Uri,
    private readonly state: CompareState,
    private readonly actions: PanelActions,
  ) {
    const title = `Compare: ${state.model.split('/').pop()} (${state.providers.length} providers)`;
    super({
      viewType: WebviewType.Comparison,
      title,
      extensionUri,
      script: 'compare.js',
      styles: ['compare.css'],
      accepts: isCompareWebviewMessage,
      log: actions.log,
    });
  }

  protected override onClosed(): void {
    clearTimeout(this.pending);
    this.abort.abort();
  }

  /** A sample finished: keep its provider's updated row. */
  sample(row: ProviderResult): void {
    this.state.results.set(row.slug, row);
    this.changed();
  }

  progress(p: CompareState['progress']): void {
    this.state.progress = p;
    this.changed();
  }

  finish(report: CompareReport): void {
    for (const row of report.providers) this.state.results.set(row.slug, row);
    this.state.state = report.cancelled ? 'cancelled' : 'done';
    this.state.wallMs = report.wallMs;
    this.state.progress = { ...this.state.progress, running: 0 };
    this.postSnapshot();
  }

  fail(message: string): void {
    this.state.state = this.abort.signal.aborted ? 'cancelled' : 'failed';
    this.state.error = message;
    this.state.progress = { ...this.state.progress, running: 0 };
    this.postSnapshot();
  }

  private changed(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.postSnapshot();
    }, POST_INTERVAL_MS);
  }

  private postSnapshot(): void {
    clearTimeout(this.pending);
    this.pending = undefined;
    // A hidden webview drops messages; it asks again with `ready` when shown.
    void this.post({ type: 'snapshot', view: compareView(this.state) });
  }

  private label(id: string): string {
    return sampleLabel(this.state, id) ?? id;
  }

  protected override snapshot(): void {
    this.postSnapshot();
    if (this.tokenDiff) void this.post(this.tokenDiff);
  }

  protected override async handle(m: Exclude<CompareWebviewMessage, { type: 'ready' }>): Promise<void> {
    switch (m.type) {
      case 'openExchange':
        return this.actions.openExchange(m.id);
      case 'setReference':
        if (!this.state.providers.some((p) => p.slug === m.slug)) return;
        this.state.reference = m.slug;
        return this.postSnapshot();
      case 'cancel':
        this.abort.abort();
        return;
      case 'diff':
        return this.actions.diff(m.kind, { id: m.left, label: this.label(m.left) }, { id: m.right, label: this.label(m.right) }, (h) => {
          this.tokenDiff = h;
          void this.post(h);
        });
    }
  }
}
