/**
 * The exchange webview panel (one per exchange). The host owns all data: the webview asks with `ready` after every
 * (re)load and gets a full snapshot, so hiding the panel costs nothing and no retainContextWhenHidden is needed.
 * What a panel posts, live and finished, is ./liveFeed.ts; this file is the VS Code side of it.
 */
import * as vscode from 'vscode';
import { UserError } from '../core/model';
import { checkTokenizerDir } from '../core/tokens/local';
import { isWebviewMessage, type HostMessage, type WebviewMessage, type WirePageView } from '../../webview/protocol';
import type { Exchanges, OpenedExchange } from './exchanges';
import { LivePoller, PanelFeed, withLive, type TokenSource as FeedTokenSource } from './liveFeed';
import type { LiveInfo } from './viewModel';
import { webviewShell } from './webviewHtml';

export const PANEL_VIEW_TYPE = 'tokenscope.exchange';

/** Tokens for an opened exchange, or why there are none. Tokenizing runs off the extension host's thread. */
export type TokenSource = FeedTokenSource<OpenedExchange>;

export class ExchangePanels implements vscode.Disposable {
  private readonly panels = new Map<string, Panel>();
  private readonly poller: LivePoller<OpenedExchange>;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly exchanges: Exchanges,
    private readonly tokens: TokenSource,
    private readonly log: vscode.LogOutputChannel,
    /** A streaming exchange's bytes so far, age and silence; undefined once it has finished. */
    private readonly live: (id: string) => LiveInfo | undefined = () => undefined,
  ) {
    this.poller = new LivePoller(() => [...this.panels].map(([id, p]) => [id, p.feed] as [string, PanelFeed<OpenedExchange>]), {
      live: (id) => this.live(id),
      open: (id) => {
        this.exchanges.forget(id);
        return this.exchanges.open(id);
      },
    });
  }

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
    const live = opened.exchange.state === 'streaming' ? this.live(id) : undefined;
    const p = new Panel(
      panel,
      live ? withLive(opened, live) : opened,
      this.tokens,
      this.log,
      () => this.poller.freed(),
      (from) => this.exchanges.wirePage(id, from),
      () => this.retokenize(true),
    );
    this.panels.set(id, p);
    if (p.feed.streaming) this.poller.watch();
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
    await this.poller.changed(id, p.feed);
  }

  /**
   * Tokenizes the open panels again: all of them (the tokenizer folder setting changed), or, with `missingOnly`, those
   * still waiting for a tokenizer (one was just downloaded).
   */
  retokenize(missingOnly = false): void {
    for (const p of this.panels.values()) if (!missingOnly || p.feed.needsTokenizer) void p.feed.retokenize();
  }

  dispose(): void {
    this.poller.dispose();
    for (const p of this.panels.values()) p.panel.dispose();
  }
}

class Panel {
  readonly feed: PanelFeed<OpenedExchange>;

  constructor(
    readonly panel: vscode.WebviewPanel,
    opened: OpenedExchange,
    tokenSource: TokenSource,
    log: vscode.LogOutputChannel,
    free: () => void,
    /** The Wire tab's events from `from` on (./wirePage.ts): never throws. */
    private readonly wirePage: (from: number) => Promise<WirePageView>,
    /** This panel downloaded a tokenizer: the other panels waiting for one try again. */
    private readonly tokenizerArrived: () => void,
  ) {
    this.feed = new PanelFeed(opened, tokenSource, {
      post: (m) => panel.webview.postMessage(m),
      free,
      title: (t) => (panel.title = t),
      error: (message, e) => log.error(message, e),
    });
    panel.webview.onDidReceiveMessage((m: unknown) => {
      if (isWebviewMessage(m)) void this.onMessage(m);
    });
  }

  private async onMessage(m: WebviewMessage): Promise<void> {
    const opened = this.feed.opened;
    switch (m.type) {
      case 'ready':
        return this.feed.sendSnapshot();
      case 'openRaw': {
        const doc = await vscode.workspace.openTextDocument(opened.uri);
        const pos = doc.positionAt(m.offset ?? 0);
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, selection: new vscode.Range(pos, pos) });
        return;
      }
      case 'wirePage': {
        const page = await this.wirePage(m.from);
        const answer: HostMessage = { type: 'wirePage', seq: m.seq, page };
        // A panel closed while the page was read drops the answer.
        await Promise.resolve(this.panel.webview.postMessage(answer)).catch(() => false);
        return;
      }
      case 'command': {
        const command = { rerun: 'tokenscope.rerun', compare: 'tokenscope.compareProviders', export: 'tokenscope.export', diffDelivered: 'tokenscope.diffDelivered' }[m.command];
        await vscode.commands.executeCommand(command, opened.exchange.id);
        return;
      }
      case 'getTokenizer':
        if (m.how === 'download') {
          if (await this.feed.download()) this.tokenizerArrived();
          return;
        }
        try {
          // The setting's change re-tokenizes every open panel (extension.ts).
          await chooseTokenizerFolder();
        } catch (e) {
          if (!(e instanceof UserError)) throw e;
          await this.feed.tokenizerError(e.message);
        }
        return;
    }
  }
}

/**
 * Asks for a folder holding tokenizer files and puts it in the `tokenscope.tokenizer.folder` setting (where it is set
 * now: the workspace's when it has one, else the user's). Nothing happens when the dialog is cancelled; a folder
 * without tokenizer files is a UserError and changes nothing.
 */
async function chooseTokenizerFolder(): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    canSelectMany: false,
    title: "Choose the folder holding the model's tokenizer (tokenizer.json, or tiktoken.model and tokenizer_config.json)",
    openLabel: 'Use This Tokenizer Folder',
  });
  const dir = picked?.[0]?.fsPath;
  if (!dir) return;
  checkTokenizerDir(dir);
  const cfg = vscode.workspace.getConfiguration('tokenscope');
  const now = cfg.inspect<string>('tokenizer.folder');
  await cfg.update('tokenizer.folder', dir, now?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
  void vscode.window.showInformationMessage(`Tokenscope: the token view now uses the tokenizer in ${dir} for every exchange (setting tokenscope.tokenizer.folder).`);
}
