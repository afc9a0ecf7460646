/**
 * The exchange webview panel (one per exchange). The host owns all data: the webview asks with `ready` after every
 * (re)load and gets a full snapshot, so hiding the panel costs nothing and no retainContextWhenHidden is needed.
 * What a panel posts, live and finished, is ./liveFeed.ts; this file is the VS Code side of it.
 */
import * as vscode from 'vscode';
import { UserError } from '../core/model';
import { checkTokenizerDir } from '../core/tokens/local';
import { isWebviewMessage, type HostMessage, type PanelCommand, type WebviewMessage, type WirePageView } from '../../webview/protocol';
import { Command, inspectSetting, runCommand, settingId, WebviewType, writeSetting, type CommandId } from './contributions';
import type { Exchanges, OpenedExchange } from './exchanges';
import { LivePoller, PanelFeed, withLive, type TokenSource as FeedTokenSource } from './liveFeed';
import type { LiveInfo } from './viewModel';
import { WebviewPanel } from './webviewPanel';

/** Tokens for an opened exchange, or why there are none. Tokenizing runs off the extension host's thread. */
export type TokenSource = FeedTokenSource<OpenedExchange>;

/** The command each of the view's buttons runs on its exchange. */
const PANEL_COMMAND: { readonly [K in PanelCommand]: CommandId } = {
  rerun: Command.Rerun,
  compare: Command.CompareProviders,
  export: Command.Export,
  diffDelivered: Command.DiffDelivered,
};

export class ExchangePanels implements vscode.Disposable {
  private readonly panels = new Map<string, ExchangePanel>();
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
    const live = opened.exchange.state === 'streaming' ? this.live(id) : undefined;
    const p = new ExchangePanel(this.extensionUri, live ? withLive(opened, live) : opened, this.tokens, this.log, {
      free: () => this.poller.freed(),
      wirePage: (from) => this.exchanges.wirePage(id, from),
      tokenizerArrived: () => this.retokenize(true),
      closed: () => {
        this.panels.delete(id);
        this.exchanges.clearDiagnostics(id);
      },
    });
    this.panels.set(id, p);
    if (p.feed.streaming) this.poller.watch();
  }

  /** The exchange changed in the store (analysis finished, or it was deleted): refresh open panels. */
  async changed(id: string, deleted: boolean): Promise<void> {
    const p = this.panels.get(id);
    if (!p) return;
    if (deleted) {
      p.dispose();
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
    for (const p of this.panels.values()) p.dispose();
  }
}

interface ExchangePanelHooks {
  /** The live poller may look for new bytes now (a live snapshot's tokens were posted). */
  free(): void;
  /** The Wire tab's events from `from` on (./wirePage.ts): never throws. */
  wirePage(from: number): Promise<WirePageView>;
  /** This panel downloaded a tokenizer: the other panels waiting for one try again. */
  tokenizerArrived(): void;
  closed(): void;
}

/** One exchange in one panel: the view's data is ./liveFeed.ts's PanelFeed; this class is its VS Code side. */
class ExchangePanel extends WebviewPanel<HostMessage, WebviewMessage> {
  readonly feed: PanelFeed<OpenedExchange>;

  constructor(
    extensionUri: vscode.Uri,
    opened: OpenedExchange,
    tokenSource: TokenSource,
    log: vscode.LogOutputChannel,
    private readonly hooks: ExchangePanelHooks,
  ) {
    super({
      viewType: WebviewType.Exchange,
      title: opened.view.title,
      extensionUri,
      script: 'webview.js',
      styles: ['webview.css'],
      accepts: isWebviewMessage,
      log,
    });
    this.feed = new PanelFeed(opened, tokenSource, {
      post: (m) => this.post(m),
      free: () => hooks.free(),
      title: (t) => (this.panel.title = t),
      error: (message, e) => log.error(message, e),
    });
  }

  protected override snapshot(): Promise<void> {
    return this.feed.sendSnapshot();
  }

  protected override onClosed(): void {
    this.hooks.closed();
  }

  protected override async handle(m: Exclude<WebviewMessage, { type: 'ready' }>): Promise<void> {
    const opened = this.feed.opened;
    switch (m.type) {
      case 'openRaw': {
        const doc = await vscode.workspace.openTextDocument(opened.uri);
        const pos = doc.positionAt(m.offset ?? 0);
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, selection: new vscode.Range(pos, pos) });
        return;
      }
      case 'wirePage':
        // A panel closed while the page was read drops the answer.
        await this.reply(m, { page: await this.hooks.wirePage(m.from) });
        return;
      case 'command':
        await runCommand(vscode.commands, PANEL_COMMAND[m.command], opened.exchange.id);
        return;
      case 'getTokenizer':
        if (m.how === 'download') {
          if (await this.feed.download()) this.hooks.tokenizerArrived();
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
  const now = inspectSetting(vscode.workspace, 'tokenizer.folder');
  await writeSetting(
    vscode.workspace,
    'tokenizer.folder',
    dir,
    now?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global,
  );
  void vscode.window.showInformationMessage(
    `Tokenscope: the token view now uses the tokenizer in ${dir} for every exchange (setting ${settingId('tokenizer.folder')}).`,
  );
}
