/**
 * The exchange webview panel (one per exchange). The host owns all data: the webview asks with `ready` after every
 * (re)load and gets a full snapshot, so hiding the panel costs nothing and no retainContextWhenHidden is needed.
 */
import * as vscode from 'vscode';
import { isWebviewMessage, type HostMessage, type LiveView, type TokenStreamView, type WebviewMessage } from '../../webview/protocol';
import type { Exchanges, OpenedExchange } from './exchanges';
import { liveText, type LiveInfo } from './viewModel';
import { webviewShell } from './webviewHtml';

export const PANEL_VIEW_TYPE = 'tokenscope.exchange';

/** Tokens for an opened exchange, or why there are none. Tokenizing runs off the extension host's thread. */
export type TokenSource = (o: OpenedExchange) => Promise<{ stream?: TokenStreamView; reason?: string }>;

/** How often an open streaming exchange is looked at: new bytes are analysed and shown within this (plus the analysis). */
const LIVE_POLL_MS = 40;
/** Between snapshots, the banner's clock and silence are refreshed this often. */
const LIVE_CLOCK_MS = 500;

function liveView(l: LiveInfo): LiveView {
  return { ...l, text: liveText(l) };
}

/** A finding that only the end of a stream can make true: not shown while the stream is still going. */
const END_ONLY_RULES = new Set(['stream-unterminated']);

function withoutEndOnly<T extends { findings: { rule: string; severity: string }[] }>(v: T): T {
  return v.findings.some((f) => END_ONLY_RULES.has(f.rule)) ? { ...v, findings: v.findings.filter((f) => !END_ONLY_RULES.has(f.rule)) } : v;
}

export class ExchangePanels implements vscode.Disposable {
  private readonly panels = new Map<string, Panel>();
  private liveTimer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly exchanges: Exchanges,
    private readonly tokens: TokenSource,
    private readonly log: vscode.LogOutputChannel,
    /** A streaming exchange's bytes so far, age and silence; undefined once it has finished. */
    private readonly live: (id: string) => LiveInfo | undefined = () => undefined,
  ) {}

  /** Polls the open panels whose exchange is still streaming; stops when none is. */
  private watchLive(): void {
    this.liveTimer ??= setInterval(() => void this.pollLive(), LIVE_POLL_MS);
  }

  private async pollLive(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      let streaming = 0;
      for (const [id, p] of this.panels) {
        if (!p.streaming) continue;
        const l = this.live(id);
        if (!l) continue; // finished: the store's change event brings the final snapshot
        streaming++;
        if (l.bytes !== p.liveBytes) {
          p.liveBytes = l.bytes;
          this.exchanges.forget(id);
          const opened = await this.exchanges.open(id);
          if (opened) p.liveUpdate({ ...opened, view: { ...opened.view, live: liveView(l) } });
        } else if (Date.now() - p.liveClockAt >= LIVE_CLOCK_MS) {
          p.liveClockAt = Date.now();
          void p.post({ type: 'live', live: liveView(l) });
        }
      }
      if (streaming === 0 && ![...this.panels.values()].some((p) => p.streaming)) {
        clearInterval(this.liveTimer);
        this.liveTimer = undefined;
      }
    } finally {
      this.polling = false;
    }
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
    const p = new Panel(panel, live ? { ...opened, view: { ...opened.view, live: liveView(live) } } : opened, this.tokens, this.log);
    this.panels.set(id, p);
    if (p.streaming) this.watchLive();
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
    if (!opened) return;
    const l = opened.exchange.state === 'streaming' ? this.live(id) : undefined;
    // Still streaming (the response head, an annotation): a live snapshot. Finished: the finished exchange, in place.
    if (l) p.liveUpdate({ ...opened, view: { ...opened.view, live: liveView(l) } });
    else p.update(opened);
    if (p.streaming) this.watchLive();
  }

  dispose(): void {
    clearInterval(this.liveTimer);
    for (const p of this.panels.values()) p.panel.dispose();
  }
}

class Panel {
  private tokens: Promise<{ stream?: TokenStreamView; reason?: string }>;
  /** Response bytes in the last live snapshot, and when the banner's clock was last sent. */
  liveBytes = -1;
  liveClockAt = 0;
  /** A live snapshot waits for the tokenizer: the newest one goes when it is free (never a queue). */
  private tokenizing = false;
  private pendingLive = false;
  /** Bumped by a full update: a live tokenization started before it must not post over it. */
  private generation = 0;

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

  get streaming(): boolean {
    return this.opened.exchange.state === 'streaming';
  }

  update(opened: OpenedExchange): void {
    this.generation++;
    this.pendingLive = false;
    this.opened = opened;
    this.panel.title = opened.view.title;
    this.tokens = this.tokenize();
    void this.sendSnapshot();
  }

  /** The stream so far: the exchange view at once, its tokens as soon as the tokenizer is free. */
  liveUpdate(opened: OpenedExchange): void {
    this.opened = opened;
    this.panel.title = opened.view.title;
    this.liveClockAt = Date.now();
    const view = withoutEndOnly(opened.view);
    const worst = (['error', 'warning', 'info'] as const).find((sev) => view.findings.some((f) => f.severity === sev));
    void this.post({ type: 'exchange', exchange: { ...view, worst } });
    if (this.tokenizing) {
      this.pendingLive = true;
      return;
    }
    this.tokenizing = true;
    const generation = this.generation;
    const run = async (): Promise<void> => {
      const t = this.tokenize();
      this.tokens = t;
      const result = await t;
      if (generation !== this.generation) return void (this.tokenizing = false);
      await this.post({ type: 'tokens', ...result, ...(result.stream && { stream: withoutEndOnly(result.stream) }) });
      if (this.pendingLive) {
        this.pendingLive = false;
        return run();
      }
      this.tokenizing = false;
    };
    void run();
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
