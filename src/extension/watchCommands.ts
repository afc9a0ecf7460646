/**
 * The regression watch in VS Code: "Watch This Exchange", "Watch Repro…" and "Re-check Watched"
 * (src/core/watch/), and an optional background re-check every `tokenscope.watch.intervalMinutes`, which speaks up
 * only when a case's verdict changes.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { CaptureStore } from '../core/capture/store';
import { readFileSync } from 'node:fs';
import { importCaptures, parseImport } from '../core/export/index';
import type { OpenRouterClient } from '../core/upstream/openrouter';
import { caseFromCapture } from '../core/watch/check';
import { openWatchList } from '../core/watch/list';
import { exchangeIdOf } from './capturesTree';
import { affectsSetting, Command, readSetting, registerCommand } from './contributions';
import { WatchRechecker } from './watchRecheck';

export interface WatchDeps {
  store(): CaptureStore | undefined;
  openrouter(): Promise<OpenRouterClient>;
  log: vscode.LogOutputChannel;
}

export class WatchCommands implements vscode.Disposable {
  private readonly rechecker: WatchRechecker;

  constructor(
    context: vscode.ExtensionContext,
    private readonly deps: WatchDeps,
  ) {
    this.rechecker = new WatchRechecker({
      store: deps.store,
      openrouter: deps.openrouter,
      samples: () => readSetting(vscode.workspace, 'watch.samples') ?? 1,
      ui: {
        info: (t) => void vscode.window.showInformationMessage(t),
        warn: (t) => void vscode.window.showWarningMessage(t),
        error: (t) => void vscode.window.showErrorMessage(t),
        progress: (title, work) =>
          Promise.resolve(
            vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, (p) =>
              work((message) => p.report({ message })),
            ),
          ),
        log: { info: (l) => deps.log.info(l), error: (l) => deps.log.error(l) },
      },
    });
    context.subscriptions.push(
      registerCommand(vscode.commands, Command.WatchExchange, (arg) => this.watchExchange(exchangeIdOf(arg))),
      registerCommand(vscode.commands, Command.WatchRepro, () => this.watchRepro()),
      registerCommand(vscode.commands, Command.RecheckWatched, () => this.rechecker.recheck(false)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSetting(e, 'watch')) this.schedule();
      }),
    );
    this.schedule();
  }

  private schedule(): void {
    this.rechecker.schedule(readSetting(vscode.workspace, 'watch.intervalMinutes') ?? 0);
  }

  private add(store: CaptureStore, id: string, source?: string): void {
    const c = openWatchList(store.dataDir).add(caseFromCapture(store, id, { source }));
    void vscode.window.showInformationMessage(
      `Tokenscope: watching ${c.id} (${c.model ?? c.captureId} on ${c.target}; rules ${c.rules.join(', ')}). "Re-check Watched" re-runs it.`,
    );
  }

  private async watchExchange(id: string | undefined): Promise<void> {
    const store = this.deps.store();
    if (!store || !id) return;
    try {
      this.add(store, id);
    } catch (e) {
      void vscode.window.showErrorMessage(`Tokenscope: ${(e as Error).message.split('\n')[0]}`);
    }
  }

  private async watchRepro(): Promise<void> {
    const store = this.deps.store();
    if (!store) return;
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { 'Tokenscope repro bundle': ['json'] },
      title: 'Watch a repro bundle',
    });
    const file = picked?.[0]?.fsPath;
    if (!file) return;
    try {
      const parsed = parseImport(readFileSync(file, 'utf8'), basename(file));
      if (parsed.captures.length !== 1)
        throw new Error(`${basename(file)} holds ${parsed.captures.length} exchanges; watch one repro bundle at a time`);
      const [x] = await importCaptures(store, parsed.captures);
      this.add(store, x.id, basename(file));
    } catch (e) {
      void vscode.window.showErrorMessage(`Tokenscope: ${(e as Error).message.split('\n')[0]}`);
    }
  }

  dispose(): void {
    this.rechecker.dispose();
  }
}
