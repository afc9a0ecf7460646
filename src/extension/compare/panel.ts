/**
 * One comparison in one webview panel. The host owns the results (CompareState); the webview is a view of them that
 * asks for a snapshot with `ready` whenever it (re)loads, so the panel needs no retainContextWhenHidden. Closing the
 * panel cancels a comparison still running.
 */
import * as vscode from 'vscode';
import type { CompareReport, ProviderResult } from '../../core/upstream/compare';
import {
  isCompareWebviewMessage,
  type CompareHostMessage,
  type CompareWebviewMessage,
  type DiffKind,
} from '../../../webview/compare/protocol';
import { webviewShell } from '../webviewHtml';
import { compareView, sampleLabel, type CompareState } from './matrix';

export const COMPARE_VIEW_TYPE = 'tokenscope.comparison';

/** Snapshots are coalesced while samples stream in: at most one post per this many ms. */
const POST_INTERVAL_MS = 100;

export interface PanelActions {
  openExchange(id: string): void;
  /** Opens two samples side by side; `tokens` answers through `post` (the webview shows the token diff). */
  diff(kind: DiffKind, left: { id: string; label: string }, right: { id: string; label: string }, post: (m: CompareHostMessage) => void): Promise<void>;
  log: vscode.LogOutputChannel;
}

export class ComparePanel {
  private readonly panel: vscode.WebviewPanel;
  readonly abort = new AbortController();
  private pending: NodeJS.Timeout | undefined;
  private disposed = false;
  /** The last token diff shown, re-sent when the webview reloads. */
  private tokenDiff: CompareHostMessage | undefined;

  constructor(
    extensionUri: vscode.Uri,
    private readonly state: CompareState,
    private readonly actions: PanelActions,
  ) {
    const media = vscode.Uri.joinPath(extensionUri, 'media');
    const title = `Compare: ${state.model.split('/').pop()} (${state.providers.length} providers)`;
    this.panel = vscode.window.createWebviewPanel(COMPARE_VIEW_TYPE, title, vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: [media] });
    this.panel.iconPath = vscode.Uri.joinPath(media, 'tokenscope.svg');
    const asUri = (f: string) => this.panel.webview.asWebviewUri(vscode.Uri.joinPath(media, f)).toString();
    this.panel.webview.html = webviewShell({
      cspSource: this.panel.webview.cspSource,
      script: asUri('compare.js'),
      styles: [asUri('compare.css')],
      codiconStyle: asUri('codicon.css'),
      title,
    });
    this.panel.webview.onDidReceiveMessage((m: unknown) => {
      if (isCompareWebviewMessage(m)) void this.onMessage(m).catch((e: Error) => actions.log.error('comparison view action failed', e));
    });
    this.panel.onDidDispose(() => {
      this.disposed = true;
      clearTimeout(this.pending);
      this.abort.abort();
    });
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

  private post(m: CompareHostMessage): void {
    // A hidden webview drops messages (postMessage resolves false); it asks again with `ready` when shown.
    if (!this.disposed) void this.panel.webview.postMessage(m);
  }

  private postSnapshot(): void {
    clearTimeout(this.pending);
    this.pending = undefined;
    this.post({ type: 'snapshot', view: compareView(this.state) });
  }

  private label(id: string): string {
    return sampleLabel(this.state, id) ?? id;
  }

  private async onMessage(m: CompareWebviewMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.postSnapshot();
        if (this.tokenDiff) this.post(this.tokenDiff);
        return;
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
          this.post(h);
        });
    }
  }
}
