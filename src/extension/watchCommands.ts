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
import { caseFromCapture, runWatch } from '../core/watch/check';
import { openWatchList, type CheckResult, type Verdict, type WatchCase } from '../core/watch/list';
import { exchangeIdOf } from './capturesTree';

export interface WatchDeps {
  store(): CaptureStore | undefined;
  openrouter(): Promise<OpenRouterClient>;
  log: vscode.LogOutputChannel;
}

const WORDS: Record<Verdict, string> = { 'still-broken': 'still broken', fixed: 'fixed', 'broken-differently': 'broken differently', unchecked: 'not checked' };

function summary(c: WatchCase, r: CheckResult): string {
  const broke = r.samples.filter((s) => !s.ok || s.errorRules.length > 0).length;
  return `${c.id} ${c.model ?? ''} on ${c.target}: ${WORDS[r.verdict]}${r.verdict === 'unchecked' ? ` (${r.reason ?? 'nothing sent'})` : ` (${broke}/${r.samples.length} samples broke)`}`;
}

export class WatchCommands implements vscode.Disposable {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    context: vscode.ExtensionContext,
    private readonly deps: WatchDeps,
  ) {
    context.subscriptions.push(
      vscode.commands.registerCommand('tokenscope.watchExchange', (arg: unknown) => this.watchExchange(exchangeIdOf(arg))),
      vscode.commands.registerCommand('tokenscope.watchRepro', () => this.watchRepro()),
      vscode.commands.registerCommand('tokenscope.recheckWatched', () => this.recheck(false)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('tokenscope.watch')) this.schedule();
      }),
    );
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const minutes = vscode.workspace.getConfiguration('tokenscope.watch').get<number>('intervalMinutes') ?? 0;
    if (minutes > 0) this.timer = setInterval(() => void this.recheck(true), Math.max(1, minutes) * 60_000);
  }

  private add(store: CaptureStore, id: string, source?: string): void {
    const c = openWatchList(store.dataDir).add(caseFromCapture(store, id, { source }));
    void vscode.window.showInformationMessage(`Tokenscope: watching ${c.id} (${c.model ?? c.captureId} on ${c.target}; rules ${c.rules.join(', ')}). "Re-check Watched" re-runs it.`);
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
    const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Tokenscope repro bundle': ['json'] }, title: 'Watch a repro bundle' });
    const file = picked?.[0]?.fsPath;
    if (!file) return;
    try {
      const parsed = parseImport(readFileSync(file, 'utf8'), basename(file));
      if (parsed.captures.length !== 1) throw new Error(`${basename(file)} holds ${parsed.captures.length} exchanges; watch one repro bundle at a time`);
      const [x] = await importCaptures(store, parsed.captures);
      this.add(store, x.id, basename(file));
    } catch (e) {
      void vscode.window.showErrorMessage(`Tokenscope: ${(e as Error).message.split('\n')[0]}`);
    }
  }

  /** Re-checks every case. In the background (`quiet`), only a changed verdict makes a notification. */
  private recheck(quiet: boolean): Promise<void> {
    this.running ??= this.doRecheck(quiet).finally(() => (this.running = undefined));
    return this.running;
  }

  private async doRecheck(quiet: boolean): Promise<void> {
    const store = this.deps.store();
    if (!store) return;
    const list = openWatchList(store.dataDir);
    if (list.list().length === 0) {
      if (!quiet) void vscode.window.showInformationMessage('Tokenscope: no watched cases. Right-click a broken exchange → Watch This Exchange.');
      return;
    }
    const changed: string[] = [];
    const all: string[] = [];
    const work = async (progress?: vscode.Progress<{ message?: string }>) => {
      const openrouter = await this.deps.openrouter();
      await runWatch(list, {
        store,
        openrouter,
        samples: Math.min(20, Math.max(1, Math.floor(vscode.workspace.getConfiguration('tokenscope.watch').get<number>('samples') ?? 1))),
        onResult: (c, r, previous) => {
          const line = summary(c, r);
          this.deps.log.info(`watch: ${line}${previous && previous !== r.verdict ? ` (was ${WORDS[previous]})` : ''}`);
          all.push(line);
          if (previous !== undefined && previous !== r.verdict) changed.push(`${line} (was ${WORDS[previous]})`);
          progress?.report({ message: line });
        },
      });
    };
    try {
      if (quiet) await work();
      else await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Tokenscope: re-checking watched cases' }, work);
    } catch (e) {
      this.deps.log.error(`watch: ${(e as Error).message.split('\n')[0]}`);
      if (!quiet) void vscode.window.showErrorMessage(`Tokenscope: ${(e as Error).message.split('\n')[0]}`);
      return;
    }
    const lines = quiet ? changed : all;
    if (lines.length === 0) return;
    const broken = lines.some((l) => /still broken|broken differently/.test(l));
    const text = `Tokenscope watch: ${lines.join('; ')}`;
    void (broken ? vscode.window.showWarningMessage(text) : vscode.window.showInformationMessage(text));
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
