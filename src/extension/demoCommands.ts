/**
 * "See a broken tool call now" (the walkthrough's first step) and "Clear Demo Captures": the same demo as
 * `tokenscope demo`, inside VS Code. A demo proxy of its own (a free port, so the user's proxy and agents are left
 * alone) in front of the built-in local upstream replays the demo cases into the extension's capture store; the
 * broken exchange then opens in the token view. Nothing leaves 127.0.0.1 and no key is needed.
 */
import * as vscode from 'vscode';
import type { CaptureStore } from '../core/capture/store';
import { brokenResult, clearDemoCaptures, isDemoCapture, replayDemo, startDemoProxy } from '../core/demo/index';
import type { CapturedExchange } from '../core/model';
import { Command, ContextKey, focusViewCommand, registerCommand, runCommand, setContextKey, View } from './contributions';

export interface DemoDeps {
  store(): CaptureStore | undefined;
  openExchange(id: string): Promise<void>;
  /** Drops an exchange's Problems entries (before it is deleted). */
  clearDiagnostics(id: string): void;
  log: vscode.LogOutputChannel;
}

export class DemoCommands implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private running: Promise<void> | undefined;
  private hasDemo: boolean | undefined;

  constructor(private readonly deps: DemoDeps) {
    this.disposables.push(
      registerCommand(vscode.commands, Command.RunDemo, () => (this.running ??= this.run().finally(() => (this.running = undefined)))),
      registerCommand(vscode.commands, Command.ClearDemoCaptures, () => this.clear()),
    );
  }

  /** Keeps the `tokenscope.hasDemoCaptures` context key (it shows "Clear Demo Captures" in the view's menu) current. */
  update(list: readonly CapturedExchange[]): void {
    const has = list.some(isDemoCapture);
    if (has === this.hasDemo) return;
    this.hasDemo = has;
    void setContextKey(vscode.commands, ContextKey.HasDemoCaptures, has);
  }

  private async run(): Promise<void> {
    const store = this.deps.store();
    if (!store) {
      void vscode.window.showErrorMessage(
        'Tokenscope: the capture store is not open, so the demo has nowhere to go (see Tokenscope: Show Log).',
      );
      return;
    }
    try {
      const results = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: 'Tokenscope: replaying broken tool calls from the built-in demo upstream…',
        },
        async () => {
          const demo = await startDemoProxy({ store, log: (l) => this.deps.log.info(`demo: ${l}`) });
          try {
            return await replayDemo(demo, store, { userAgent: 'tokenscope-demo (VS Code)' });
          } finally {
            await demo.close();
          }
        },
      );
      // A count only when every capture's analysis is in: never a "0 broken" for an analysis still to come.
      const analysed = results.every((r) => r.exchange.summary);
      const broken = results.filter((r) => (r.exchange.summary?.counts.error ?? 0) > 0).length;
      this.deps.log.info(`demo: ${results.length} exchanges captured (${results.map((r) => `${r.case.id} ${r.exchange.id}`).join(', ')})`);
      await vscode.commands.executeCommand(focusViewCommand(View.Captures));
      const first = brokenResult(results);
      if (first) await this.deps.openExchange(first.exchange.id);
      void vscode.window
        .showInformationMessage(
          `Tokenscope demo: ${results.length} exchanges from the built-in local upstream ("Demo (local)")${analysed ? `, ${broken} broken` : ''}. The first one is open: its tool-call section never ends. Nothing left this machine.`,
          'Clear Demo Captures',
        )
        .then((a) => a && runCommand(vscode.commands, Command.ClearDemoCaptures));
    } catch (e) {
      const msg = (e as Error).message.split('\n')[0];
      this.deps.log.error(`demo failed: ${msg}`);
      void vscode.window.showErrorMessage(`Tokenscope demo failed: ${msg}`);
    }
  }

  private async clear(): Promise<void> {
    const store = this.deps.store();
    if (!store) return;
    for (const x of store.list()) if (isDemoCapture(x)) this.deps.clearDiagnostics(x.id);
    const n = await clearDemoCaptures(store);
    void vscode.window.showInformationMessage(
      n ? `Tokenscope: removed ${n} demo capture${n === 1 ? '' : 's'}.` : 'Tokenscope: there are no demo captures.',
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
