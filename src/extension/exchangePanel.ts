/**
 * The exchange webview panel (one per exchange). The host owns all data: the webview asks with `ready` after every
 * (re)load and gets a full snapshot, so hiding the panel costs nothing and no retainContextWhenHidden is needed.
 */
import * as vscode from 'vscode';
import { isWebviewMessage, type HostMessage, type TokenStreamView, type WebviewMessage } from '../../webview/protocol';
import type { Exchanges, OpenedExchange } from './exchanges';
import { webviewShell } from './webviewHtml';

export const PANEL_VIEW_TYPE = 'tokenscope.exchange';

/** Tokens for an opened exchange, or why there are none. Tokenizing runs off the extension host's thread. */
export type TokenSource = (o: OpenedExchange) => Promise<{ stream?: TokenStreamView; reason?: string }>;

export class ExchangePanels implements vscode.Disposable {
  private readonly panels = new Map<string, Panel>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly exchanges: Exchanges,
    private readonly tokens: TokenSource,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async show(id: string): Promise<void> {
    const existing = this.panels.get(id);
    if (existing) {
      existing.panel.reveal();
      return;
    }
    const opened = await this.exchanges.open(id);
    if (!opened) {
      void vscode.window.showWarningMessage(`Tokenscope: exchange ${id} is no longer in the capture store.`);
      return;
    }
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const panel = vscode.window.createWebviewPanel(PANEL_VIEW_TYPE, opened.view.title, vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [media],
    });
    panel.iconPath = vscode.Uri.joinPath(media, 'tokenscope.svg');
    const p = new Panel(panel, opened, this.tokens, this.log);
    this.panels.set(id, p);
    panel.onDidDispose(() => {
      this.panels.delete(id);
      this.exchanges.clearDiagnostics(id);
    });
    const asUri = (f: string) => panel.webview.asWebviewUri(vscode.Uri.joinPath(media, f)).toString();
    panel.webview.html = webviewShell({
      cspSource: panel.webview.cspSource,
      script: asUri('webview.js'),
      styles: [asUri('webview.css')],
      codiconStyle: asUri('codicon.css'),
      title: opened.view.title,
    });
  }

  /** The exchange changed in the store (analysis finished, or it was deleted): refresh open panels. */
  async changed(id: string, deleted: boolean): Promise<void> {
    const p = this.panels.get(id);
    if (!p) return;
    if (deleted) {
      p.panel.dispose();
      return;
    }
    this.exchanges.forget(id);
    const opened = await this.exchanges.open(id);
    if (opened) p.update(opened);
  }

  dispose(): void {
    for (const p of this.panels.values()) p.panel.dispose();
  }
}

class Panel {
  private tokens: Promise<{ stream?: TokenStreamView; reason?: string }>;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private opened: OpenedExchange,
    private readonly tokenSource: TokenSource,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.tokens = this.tokenize();
    panel.webview.onDidReceiveMessage((m: unknown) => {
      if (isWebviewMessage(m)) void this.onMessage(m);
    });
  }

  private tokenize(): Promise<{ stream?: TokenStreamView; reason?: string }> {
    return this.tokenSource(this.opened).catch((e: Error) => {
      this.log.error(`tokenizing ${this.opened.exchange.id} failed`, e);
      return { reason: `Tokenizing failed: ${e.message.split('\n')[0]}` };
    });
  }

  update(opened: OpenedExchange): void {
    this.opened = opened;
    this.panel.title = opened.view.title;
    this.tokens = this.tokenize();
    void this.sendSnapshot();
  }

  post(m: HostMessage): Thenable<boolean> {
    return this.panel.webview.postMessage(m);
  }

  private async sendSnapshot(): Promise<void> {
    await this.post({ type: 'exchange', exchange: this.opened.view });
    const t = await this.tokens;
    await this.post({ type: 'tokens', ...t });
  }

  private async onMessage(m: WebviewMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        return this.sendSnapshot();
      case 'openRaw': {
        const doc = await vscode.workspace.openTextDocument(this.opened.uri);
        const pos = doc.positionAt(m.offset ?? 0);
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, selection: new vscode.Range(pos, pos) });
        return;
      }
      case 'command': {
        const command = { rerun: 'tokenscope.rerun', compare: 'tokenscope.compareProviders', export: 'tokenscope.export', diffDelivered: 'tokenscope.diffDelivered' }[m.command];
        await vscode.commands.executeCommand(command, this.opened.exchange.id);
        return;
      }
    }
  }
}
