/**
 * The Captures tree: sessions → exchanges, refreshed live from the capture store, optionally filtered like
 * `tokenscope captures` (captureFilter.ts). Wording lives in viewModel.ts.
 */
import * as vscode from 'vscode';
import type { ExchangeQuery } from '../core/capture/database';
import type { CapturedExchange } from '../core/model';
import type { ProviderDirectory } from '../core/policy/slugs';
import { FILTER_HELP, filterDescription, filterQuery, filterText, parseFilter, type CaptureFilter } from './captureFilter';
import { asCommand, Command, ContextKey, setContextKey, View } from './contributions';
import { settledSelection } from './treeSelection';
import { emptyTreeMessage, exchangeRow, groupSessions, type LiveInfo, type SessionNode } from './viewModel';

type Node = SessionNode | { kind: 'exchange'; exchange: CapturedExchange } | { kind: 'message'; text: string };

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
  /** Why the tree shows no exchange although there are some (emptyTreeMessage): drawn as its only row. */
  private message: string | undefined;
  private brokenOnly = false;
  private filter: CaptureFilter | undefined;
  private pending: NodeJS.Timeout | undefined;
  /** When the tree was last redrawn (see treeSelection.ts). */
  private redrawnAt = 0;
  readonly view: vscode.TreeView<Node>;

  /** Redraws once a second while an exchange streams, so its bytes and seconds so far keep moving. */
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly list: () => CapturedExchange[],
    private readonly live: (id: string) => LiveInfo | undefined,
    /** The store's indexed query (what `tokenscope captures` runs), for a filtered tree. */
    private readonly query: (q: ExchangeQuery) => CapturedExchange[],
    /**
     * OpenRouter's provider slugs the store keeps: whether a row's served provider honoured its policy is judged by
     * slug, as `show` and the exchange view judge it (core/policy/describe.ts `exchangePolicy`).
     */
    private readonly slugs: () => ProviderDirectory | undefined,
  ) {
    this.view = vscode.window.createTreeView(View.Captures, { treeDataProvider: this, showCollapseAll: true });
    this.rebuild();
  }

  setBrokenOnly(on: boolean): void {
    this.brokenOnly = on;
    void setContextKey(vscode.commands, ContextKey.BrokenOnly, on);
    this.describe();
    this.refresh();
  }

  /** The active filter (undefined: every exchange), shown in the view's description. */
  setFilter(filter: CaptureFilter | undefined): void {
    this.filter = filter;
    void setContextKey(vscode.commands, ContextKey.Filtered, filter !== undefined);
    this.describe();
    this.refresh();
  }

  get activeFilter(): CaptureFilter | undefined {
    return this.filter;
  }

  private describe(): void {
    const f = filterDescription(this.filter);
    this.view.description = [this.brokenOnly && 'broken only', f && `filter: ${f}`].filter(Boolean).join(' · ') || undefined;
  }

  /** Coalesces bursts of store changes (a streaming exchange updates often) into one redraw per 150 ms. */
  refresh(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.rebuild();
      this.redrawnAt = Date.now();
      this.changed.fire(undefined);
    }, 150);
  }

  /** The exchange of the selected row, waiting out a redraw that has just emptied VS Code's view of it. */
  selectedExchangeId(): Promise<string | undefined> {
    return settledSelection(
      () => exchangeIdOf(this.view.selection[0]),
      () => this.redrawnAt,
    );
  }

  private rebuild(): void {
    const all = this.filter ? this.query(filterQuery(this.filter)) : this.list();
    this.sessions = groupSessions(all, this.brokenOnly);
    this.message = emptyTreeMessage({
      shown: this.sessions.length,
      filter: filterDescription(this.filter),
      brokenOnly: this.brokenOnly,
      anyCaptured: all.length > 0,
    });
    const streaming = all.some((x) => x.state === 'streaming');
    if (streaming && !this.ticker) this.ticker = setInterval(() => this.refresh(), 1000);
    else if (!streaming && this.ticker) clearInterval(this.ticker), (this.ticker = undefined);
    const broken = this.sessions.reduce((n, s) => n + s.broken, 0);
    this.view.badge = broken ? { value: broken, tooltip: `${broken} broken exchange${broken === 1 ? '' : 's'}` } : undefined;
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.message ? [{ kind: 'message', text: this.message }] : this.sessions;
    if (node.kind === 'session') return node.exchanges.map((exchange) => ({ kind: 'exchange', exchange }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'message') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.id = 'message';
      item.iconPath = new vscode.ThemeIcon('filter');
      item.tooltip = this.filter
        ? `${node.text} Click to edit the filter; Clear Capture Filter in the view's title bar lists every exchange.`
        : `${node.text} Click to list every exchange.`;
      item.command = this.filter ? asCommand(Command.FilterCaptures) : asCommand(Command.ShowAll);
      return item;
    }
    if (node.kind === 'session') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `session:${node.id}`;
      item.description = node.description;
      item.tooltip = node.tooltip;
      item.iconPath = new vscode.ThemeIcon('history');
      item.contextValue = 'session';
      return item;
    }
    const row = exchangeRow(node.exchange, node.exchange.state === 'streaming' ? this.live(node.exchange.id) : undefined, this.slugs());
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `exchange:${node.exchange.id}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = row.contextValue;
    item.iconPath = new vscode.ThemeIcon(row.icon.spin ? `${row.icon.id}~spin` : row.icon.id, row.icon.color && COLORS[row.icon.color]);
    // No arguments: VS Code keeps a tree item command's arguments only until the row is redrawn, so a click that
    // lands while the tree refreshes (an exchange streaming or just analysed) would fail with "Actual command not
    // found". The command reads the clicked row from the selection instead (selectedExchangeId), which survives one.
    item.command = asCommand(Command.Open);
    return item;
  }

  dispose(): void {
    clearTimeout(this.pending);
    clearInterval(this.ticker);
    this.changed.dispose();
    this.view.dispose();
  }
}

/** Asks for a filter (the `captures` flags, the current one to edit) and applies it; an empty one clears it. */
export async function filterCaptures(tree: CapturesTree): Promise<void> {
  const text = await vscode.window.showInputBox({
    title: 'Filter captures',
    prompt: `The filters of \`tokenscope captures\`: ${FILTER_HELP}. Empty shows every exchange.`,
    placeHolder: '--broken --model moonshotai/kimi-k2-0905 --since 1h',
    value: filterText(tree.activeFilter),
    ignoreFocusOut: true,
    validateInput: (v) => {
      try {
        parseFilter(v);
        return undefined;
      } catch (e) {
        return (e as Error).message;
      }
    },
  });
  if (text === undefined) return;
  tree.setFilter(parseFilter(text));
}

/** The exchange id a tree command was invoked on (context menu passes the node; Open passes the id or, from a click, nothing). */
export function exchangeIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && (arg as Node).kind === 'exchange') return (arg as { exchange: CapturedExchange }).exchange.id;
  return undefined;
}
