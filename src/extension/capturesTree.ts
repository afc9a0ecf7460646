/** The Captures tree: sessions → exchanges, refreshed live from the capture store. Wording lives in viewModel.ts. */
import * as vscode from 'vscode';
import type { CapturedExchange } from '../core/model';
import { exchangeRow, groupSessions, type LiveInfo, type SessionNode } from './viewModel';

type Node = SessionNode | { kind: 'exchange'; exchange: CapturedExchange };

const COLORS = {
  error: new vscode.ThemeColor('testing.iconFailed'),
  warning: new vscode.ThemeColor('testing.iconQueued'),
  ok: new vscode.ThemeColor('testing.iconPassed'),
  muted: new vscode.ThemeColor('disabledForeground'),
};

export class CapturesTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private sessions: SessionNode[] = [];
  private brokenOnly = false;
  private pending: NodeJS.Timeout | undefined;
  readonly view: vscode.TreeView<Node>;

  /** Redraws once a second while an exchange streams, so its bytes and seconds so far keep moving. */
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly list: () => CapturedExchange[],
    private readonly live: (id: string) => LiveInfo | undefined = () => undefined,
  ) {
    this.view = vscode.window.createTreeView('tokenscope.captures', { treeDataProvider: this, showCollapseAll: true });
    this.rebuild();
  }

  setBrokenOnly(on: boolean): void {
    this.brokenOnly = on;
    void vscode.commands.executeCommand('setContext', 'tokenscope.brokenOnly', on);
    this.view.description = on ? 'broken only' : undefined;
    this.refresh();
  }

  /** Coalesces bursts of store changes (a streaming exchange updates often) into one redraw per 150 ms. */
  refresh(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.rebuild();
      this.changed.fire(undefined);
    }, 150);
  }

  private rebuild(): void {
    const all = this.list();
    this.sessions = groupSessions(all, this.brokenOnly);
    const streaming = all.some((x) => x.state === 'streaming');
    if (streaming && !this.ticker) this.ticker = setInterval(() => this.refresh(), 1000);
    else if (!streaming && this.ticker) (clearInterval(this.ticker), (this.ticker = undefined));
    const broken = this.sessions.reduce((n, s) => n + s.broken, 0);
    this.view.badge = broken ? { value: broken, tooltip: `${broken} broken exchange${broken === 1 ? '' : 's'}` } : undefined;
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.sessions;
    if (node.kind === 'session') return node.exchanges.map((exchange) => ({ kind: 'exchange', exchange }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'session') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `session:${node.id}`;
      item.description = node.description;
      item.tooltip = node.tooltip;
      item.iconPath = new vscode.ThemeIcon('history');
      item.contextValue = 'session';
      return item;
    }
    const row = exchangeRow(node.exchange, node.exchange.state === 'streaming' ? this.live(node.exchange.id) : undefined);
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `exchange:${node.exchange.id}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = row.contextValue;
    item.iconPath = new vscode.ThemeIcon(row.icon.spin ? `${row.icon.id}~spin` : row.icon.id, row.icon.color && COLORS[row.icon.color]);
    // No arguments: VS Code keeps a tree item command's arguments only until the row is redrawn, so a click that
    // lands while the tree refreshes (an exchange streaming or just analysed) would fail with "Actual command not
    // found". The command reads the clicked row from the selection instead, which survives a redraw.
    item.command = { command: 'tokenscope.open', title: 'Open' };
    return item;
  }

  dispose(): void {
    clearTimeout(this.pending);
    clearInterval(this.ticker);
    this.changed.dispose();
    this.view.dispose();
  }
}

/** The exchange id a tree command was invoked on (context menu passes the node; Open passes the id or, from a click, nothing). */
export function exchangeIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && (arg as Node).kind === 'exchange') return (arg as { exchange: CapturedExchange }).exchange.id;
  return undefined;
}
