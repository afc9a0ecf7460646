/**
 * What every Tokenscope webview panel does the same way (the exchange view, the provider comparison): the panel
 * and its HTML shell (./webviewHtml.ts: our bundle only, strict CSP), the ready handshake, posting, typed
 * request/reply, the check of every message from the webview, and errors caught and shown in the panel.
 *
 * - Ready: the host owns all data. The webview posts `ready` each time it (re)loads (first load, or shown again after
 *   being hidden, since no retainContextWhenHidden is asked for) and gets a whole `snapshot()`. Until the first
 *   `ready` nothing is posted: nobody listens yet, and the snapshot will carry it.
 * - Requests: a webview message with a `seq` is answered (`reply`) by the host message of the same type and seq.
 * - Guard: a message that fails the protocol's field checks (webview/panel/protocol.ts `messageGuard`) is dropped and
 *   logged, never acted on.
 * - Errors: a handler that throws or rejects is logged with its stack, and its one-line message is posted as `error`,
 *   which the panel shows (webview/panel/error.ts). A panel closed meanwhile drops whatever is posted.
 */
import * as vscode from 'vscode';
import type { PanelErrorMessage, ReadyMessage } from '../../webview/panel/protocol';
import { UserError } from '../core/model';
import { webviewShell } from './webviewHtml';

export interface PanelOptions<W> {
  /** The panel's view type (contributions.ts `WebviewType`). */
  viewType: string;
  title: string;
  extensionUri: vscode.Uri;
  /** The webview's bundle and stylesheets, files of media/. */
  script: string;
  styles: string[];
  /** The protocol's guard: true only for a well-formed message from the webview. */
  accepts: (m: unknown) => m is W;
  log: Pick<vscode.LogOutputChannel, 'error' | 'warn'>;
}

/** A message from the webview that asks for an answer. */
export type RequestOf<W> = Extract<W, { seq: number }>;
/** What answers request `R`: the host message of the same type, without its `type` and `seq`. */
export type ReplyTo<H, R extends { type: string }> = Omit<Extract<H, { type: R['type']; seq: number }>, 'type' | 'seq'>;

/** One line of an error, for the panel. */
export function errorLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n')[0] || (e instanceof Error ? e.name : 'unknown error');
}

export abstract class WebviewPanel<H extends { type: string }, W extends { type: string }> implements vscode.Disposable {
  readonly panel: vscode.WebviewPanel;
  private ready = false;
  private closed = false;
  private readonly accepts: (m: unknown) => m is W;
  protected readonly log: PanelOptions<W>['log'];

  constructor(o: PanelOptions<W>) {
    this.accepts = o.accepts;
    this.log = o.log;
    const media = vscode.Uri.joinPath(o.extensionUri, 'media');
    this.panel = vscode.window.createWebviewPanel(o.viewType, o.title, vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [media],
    });
    this.panel.iconPath = vscode.Uri.joinPath(media, 'tokenscope.svg');
    const asUri = (f: string) => this.panel.webview.asWebviewUri(vscode.Uri.joinPath(media, f)).toString();
    this.panel.webview.html = webviewShell({
      cspSource: this.panel.webview.cspSource,
      script: asUri(o.script),
      styles: o.styles.map(asUri),
      codiconStyle: asUri('codicon.css'),
      title: o.title,
    });
    this.panel.webview.onDidReceiveMessage((m: unknown) => this.receive(m));
    this.panel.onDidDispose(() => {
      this.closed = true;
      this.onClosed();
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Everything the webview shows, posted when it says `ready`. */
  protected abstract snapshot(): void | Promise<void>;

  /** Acts on a checked message other than `ready`. What it throws is shown in the panel. */
  protected abstract handle(m: Exclude<W, ReadyMessage>): void | Promise<void>;

  /** The panel was closed (by the user or by `dispose`). */
  protected onClosed(): void {}

  /** Posts to the webview once it is listening; resolves false when the message was dropped (not ready, hidden, closed). */
  post(m: H | PanelErrorMessage): Promise<boolean> {
    if (!this.ready || this.closed) return Promise.resolve(false);
    return Promise.resolve(this.panel.webview.postMessage(m)).catch(() => false);
  }

  /** Answers a request with the host message of its type and seq. */
  protected async reply<R extends RequestOf<W>>(request: R, answer: ReplyTo<H, R>): Promise<boolean> {
    return this.post({ ...answer, type: request.type, seq: request.seq } as unknown as H);
  }

  /** Shows an error in the panel (and logs what was not the user's to fix). */
  protected failed(what: string, e: unknown, seq?: number): void {
    if (!(e instanceof UserError)) this.log.error(`${what} failed`, e instanceof Error ? e : new Error(String(e)));
    void this.post({ type: 'error', message: errorLine(e), ...(seq !== undefined && { seq }) });
  }

  /** Dispatches a message from the webview. Handlers start synchronously: a snapshot is posted before this returns. */
  private receive(m: unknown): void {
    if (!this.accepts(m)) {
      this.log.warn(`${this.panel.viewType}: ignored a malformed message from the webview: ${preview(m)}`);
      return;
    }
    const seq = (m as { seq?: unknown }).seq;
    const what = `${this.panel.viewType} ${m.type}`;
    try {
      let run: void | Promise<void>;
      if (m.type === 'ready') {
        this.ready = true;
        run = this.snapshot();
      } else run = this.handle(m as Exclude<W, ReadyMessage>);
      if (run) run.catch((e: unknown) => this.failed(what, e, typeof seq === 'number' ? seq : undefined));
    } catch (e) {
      this.failed(what, e, typeof seq === 'number' ? seq : undefined);
    }
  }

  dispose(): void {
    this.panel.dispose();
  }
}

function preview(m: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(m) ?? String(m);
  } catch {
    s = String(m);
  }
  return s.length > 120 ? `${s.slice(0, 120)}…` : s;
}
