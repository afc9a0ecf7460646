/**
 * The Providers view (the scorecard of core/providers/scorecard.ts as a tree: model → served provider) and the
 * policy actions "Avoid this provider for this model", "Prefer…" and "Only…", from the view or from an exchange's
 * context menu. An action writes the policies stored in the data dir (core/policy/stored.ts, as `tokenscope policy set`
 * does); every proxy capturing to it applies them from its next request.
 */
import * as vscode from 'vscode';
import type { CaptureStore } from '../core/capture/store';
import type { CaptureReader, CapturedExchange } from '../core/model';
import { withStoredAction, type Policies, type PolicyAction } from '../core/policy/policy';
import { policyFilePath, updateStoredPolicies } from '../core/policy/stored';
import { ProviderDirectory, resolveSlug } from '../core/policy/slugs';
import type { OpenRouterClient } from '../core/upstream/openrouter';
import { scorecard, type ScorecardRow } from '../core/providers/scorecard';
import { Command, registerCommand, View } from './contributions';
import {
  captureCounts,
  policyWord,
  providerDescription,
  providerLabel,
  providersDescription,
  providersEmptyMessage,
  slugLine,
} from './providersText';

type Node =
  | { kind: 'model'; model: string; rows: ScorecardRow[] }
  | { kind: 'provider'; row: ScorecardRow }
  | { kind: 'message'; text: string };

const ICON_COLOR = {
  bad: new vscode.ThemeColor('testing.iconFailed'),
  some: new vscode.ThemeColor('testing.iconQueued'),
  ok: new vscode.ThemeColor('testing.iconPassed'),
};

export class ProvidersView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[] = [];
  private pending: NodeJS.Timeout | undefined;
  private slugs = new ProviderDirectory();
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly store: () => CaptureReader | undefined,
    private readonly policies: () => Policies,
    /** The OpenRouter client (its key from SecretStorage), to read provider slugs; undefined without a key. */
    private readonly openrouter: () => Promise<OpenRouterClient | undefined> = async () => undefined,
    /** Called once an action has stored a policy (the caller looks at the stored policies again at once). */
    private readonly written: () => void = () => undefined,
  ) {
    this.view = vscode.window.createTreeView(View.Providers, { treeDataProvider: this, showCollapseAll: true });
    const action = (a: PolicyAction) => (arg: unknown) => this.apply(arg, a);
    this.disposables.push(
      this.view,
      registerCommand(vscode.commands, Command.AvoidProvider, action('avoid')),
      registerCommand(vscode.commands, Command.PreferProvider, action('prefer')),
      registerCommand(vscode.commands, Command.OnlyProvider, action('only')),
      registerCommand(vscode.commands, Command.RefreshProviders, () => this.refresh(0)),
      this.view.onDidChangeVisibility((e) => e.visible && this.refresh(0)),
    );
  }

  /**
   * Follows a store that was just opened (undefined: none): redraws now, since the view may have been drawn while no
   * store was open yet (VS Code restoring the sidebar at startup, a capture folder being reopened), then after each of
   * its changes.
   */
  watch(store: Pick<CaptureStore, 'onDidChange'> | undefined): void {
    this.unwatch?.();
    this.unwatch = store?.onDidChange(() => this.refresh());
    this.refresh(0);
  }

  /**
   * Redraws at most every 2 s (the scorecard reads request bodies), and only while the view is visible: hidden, it
   * redraws when it is shown again (onDidChangeVisibility).
   */
  refresh(delay = 2000): void {
    if (!this.view.visible) return;
    if (delay === 0 && this.pending) clearTimeout(this.pending), (this.pending = undefined);
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.changed.fire(undefined);
    }, delay);
  }

  getChildren(node?: Node): Node[] {
    if (node?.kind === 'model') return node.rows.map((row) => ({ kind: 'provider', row }));
    if (node) return [];
    const reader = this.store();
    if (!reader) return [];
    this.slugs = new ProviderDirectory((reader as Partial<CaptureStore>).providerSlugs?.() ?? []);
    const byModel = new Map<string, ScorecardRow[]>();
    for (const r of scorecard(reader)) byModel.set(r.model, [...(byModel.get(r.model) ?? []), r]);
    const counts = captureCounts(reader.list());
    this.view.description = providersDescription(counts);
    if (byModel.size === 0) {
      // Captures, but none to score: say what they are, rather than the welcome's "nothing yet".
      const text = providersEmptyMessage(counts);
      return text ? [{ kind: 'message', text }] : [];
    }
    return [...byModel].map(([model, rows]) => ({ kind: 'model', model, rows }));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'message') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.id = 'message';
      item.tooltip = `${node.text} The scorecard counts the agent's own exchanges that name a model and the provider that served them.`;
      item.iconPath = new vscode.ThemeIcon('info');
      return item;
    }
    if (node.kind === 'model') {
      const item = new vscode.TreeItem(node.model, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `model:${node.model}`;
      const turns = node.rows.reduce((n, r) => n + r.toolTurns, 0);
      item.description = `${node.rows.length} provider${node.rows.length === 1 ? '' : 's'} · ${turns} tool turn${turns === 1 ? '' : 's'}`;
      item.iconPath = new vscode.ThemeIcon('symbol-class');
      item.contextValue = 'providerModel';
      return item;
    }
    const r = node.row;
    const word = policyWord(this.policies(), r.model, r.provider, this.slugs);
    const item = new vscode.TreeItem(providerLabel(r), vscode.TreeItemCollapsibleState.None);
    item.id = `provider:${r.model}:${r.provider}`;
    item.description = providerDescription(r, word);
    item.tooltip = new vscode.MarkdownString(
      [
        `**${r.provider}** serving \`${r.model}\``,
        `- ${slugLine(r)}`,
        `- tool-call turns: ${r.toolTurns}, broken: ${r.brokenTurns} (${Math.round(r.brokenShare * 100)}%)`,
        `- top rules: ${r.topRules.map((t) => `${t.rule} ×${t.turns}`).join(', ') || 'none'}`,
        `- repaired turns: ${r.repairedTurns}`,
        `- median time to first token: ${r.ttftMsP50 ?? '–'} ms`,
        `- last seen: ${new Date(r.lastSeen).toLocaleString()}`,
        `- last comparison: ${r.lastComparison ? `${r.lastComparison.verdict}${r.lastComparison.rules.length ? ` (${r.lastComparison.rules.join(', ')})` : ''}, ${r.lastComparison.samples} samples on ${r.lastComparison.slug}, ${new Date(r.lastComparison.at).toLocaleString()}` : 'none (Tokenscope: Compare Providers…)'}`,
        word ? `- policy: ${word}` : '',
      ].join('\n'),
    );
    // A provider only compared (no agent turns) is judged by its comparison.
    const share = r.toolTurns === 0 && r.lastComparison ? (r.lastComparison.verdict === 'clean' ? 0 : 1) : r.brokenShare;
    item.iconPath = new vscode.ThemeIcon(
      share > 0.2 ? 'error' : share > 0 ? 'warning' : 'pass',
      share > 0.2 ? ICON_COLOR.bad : share > 0 ? ICON_COLOR.some : ICON_COLOR.ok,
    );
    item.contextValue = 'provider';
    return item;
  }

  private async apply(arg: unknown, action: PolicyAction): Promise<void> {
    const target = targetOf(arg, this.store());
    if (!target) {
      void vscode.window.showWarningMessage(
        'Tokenscope: this exchange names no model or no served provider, so there is no policy to set.',
      );
      return;
    }
    const store = this.store() as CaptureStore | undefined;
    const client = await this.openrouter().catch(() => undefined);
    const slug = await resolveSlug(store, client, target.model, target.provider);
    if (!store) {
      void vscode.window.showErrorMessage('Tokenscope: no capture store is open, so there is nowhere to keep the policy.');
      return;
    }
    try {
      await updateStoredPolicies(store.dataDir, (stored) => withStoredAction(stored, this.policies(), target.model, slug.slug, action));
    } catch (e) {
      void vscode.window.showErrorMessage(`Tokenscope: the policy was not set: ${(e as Error).message.split('\n')[0]}`);
      return;
    }
    this.written();
    const verb = { avoid: 'avoids', prefer: 'prefers', only: 'uses only' }[action];
    const guess = slug.known
      ? ''
      : ` The slug "${slug.slug}" is derived from the name "${target.provider}" (${slug.why}); check it against OpenRouter's provider list.`;
    const message = `Tokenscope: requests for ${target.model} on OpenRouter routes now ${verb} ${target.provider} (slug ${slug.slug}, stored in ${policyFilePath(store.dataDir)}).${guess}`;
    void (slug.known ? vscode.window.showInformationMessage(message) : vscode.window.showWarningMessage(message));
    this.refresh(0);
  }

  dispose(): void {
    this.unwatch?.();
    clearTimeout(this.pending);
    this.changed.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** (model, provider) from a Providers view row, a Captures tree exchange or an exchange id. */
function targetOf(arg: unknown, reader: CaptureReader | undefined): { model: string; provider: string } | undefined {
  const a = arg as { kind?: string; row?: ScorecardRow; exchange?: CapturedExchange } | string | undefined;
  if (a && typeof a === 'object' && a.kind === 'provider' && a.row)
    return a.row.slug ? { model: a.row.model, provider: a.row.provider } : undefined;
  const x = typeof a === 'string' ? reader?.get(a) : a && typeof a === 'object' && a.kind === 'exchange' ? a.exchange : undefined;
  const model = x?.summary?.model ?? x?.requestModel;
  const provider = x?.servedProvider ?? x?.summary?.provider;
  return model && provider ? { model, provider } : undefined;
}
