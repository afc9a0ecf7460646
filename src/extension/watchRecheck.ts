/**
 * "Re-check Watched" without `vscode` (watchCommands.ts wires it to commands, settings, notifications and a progress
 * bar; tests drive it directly): re-checks every watched case, says each verdict when asked, and in the background
 * (every `intervalMinutes`) speaks only when a case's verdict changed since its last check.
 */
import type { CaptureStore } from '../core/capture/store';
import type { OpenRouterClient } from '../core/upstream/openrouter';
import { runWatch } from '../core/watch/check';
import { openWatchList, type CheckResult, type Verdict, type WatchCase } from '../core/watch/list';

const WORDS: Record<Verdict, string> = {
  'still-broken': 'still broken',
  fixed: 'fixed',
  'broken-differently': 'broken differently',
  unchecked: 'not checked',
};

export function summary(c: WatchCase, r: CheckResult): string {
  const broke = r.samples.filter((s) => !s.ok || s.errorRules.length > 0).length;
  return `${c.id} ${c.model ?? ''} on ${c.target}: ${WORDS[r.verdict]}${r.verdict === 'unchecked' ? ` (${r.reason ?? 'nothing sent'})` : ` (${broke}/${r.samples.length} samples broke)`}`;
}

export interface RecheckUi {
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
  /** Runs `work` with a visible progress report (the notification's progress bar). */
  progress(title: string, work: (report: (message: string) => void) => Promise<void>): Promise<void>;
  log: { info(line: string): void; error(line: string): void };
}

export interface RecheckDeps {
  store(): CaptureStore | undefined;
  openrouter(): Promise<OpenRouterClient>;
  /** `tokenscope.watch.samples`. */
  samples(): number;
  ui: RecheckUi;
}

export class WatchRechecker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: RecheckDeps) {}

  /** Re-checks in the background every `minutes` (0: never). */
  schedule(minutes: number): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (minutes > 0) this.timer = setInterval(() => void this.recheck(true), Math.max(1, minutes) * 60_000);
  }

  /** Re-checks every case (one run at a time). In the background (`quiet`), only a changed verdict makes a notification. */
  recheck(quiet: boolean): Promise<void> {
    this.running ??= this.run(quiet).finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(quiet: boolean): Promise<void> {
    const { ui } = this.deps;
    const store = this.deps.store();
    if (!store) return;
    const samples = Math.min(20, Math.max(1, Math.floor(this.deps.samples() || 1)));
    // The lines to say, with whether each case is broken now (a fixed case's "(was still broken)" is no warning).
    const changed: { line: string; broken: boolean }[] = [];
    const all: { line: string; broken: boolean }[] = [];
    const list = openWatchList(store.dataDir);
    try {
      if (list.list().length === 0) {
        if (!quiet) ui.info('Tokenscope: no watched cases. Right-click a broken exchange → Watch This Exchange.');
        return;
      }
    } catch (e) {
      ui.log.error(`watch: ${(e as Error).message.split('\n')[0]}`);
      if (!quiet) ui.error(`Tokenscope: ${(e as Error).message.split('\n')[0]}`);
      return;
    }
    const work = async (report?: (message: string) => void) => {
      const openrouter = await this.deps.openrouter();
      await runWatch(list, {
        store,
        openrouter,
        samples,
        onResult: (c, r, previous) => {
          const line = summary(c, r);
          const was = previous !== undefined && previous !== r.verdict ? ` (was ${WORDS[previous]})` : '';
          ui.log.info(`watch: ${line}${was}`);
          const broken = r.verdict === 'still-broken' || r.verdict === 'broken-differently';
          all.push({ line, broken });
          if (was) changed.push({ line: line + was, broken });
          report?.(line);
        },
      });
    };
    try {
      if (quiet) await work();
      else await ui.progress('Tokenscope: re-checking watched cases', work);
    } catch (e) {
      const msg = (e as Error).message.split('\n')[0];
      ui.log.error(`watch: ${msg}`);
      if (!quiet) ui.error(`Tokenscope: ${msg}`);
      return;
    }
    const lines = quiet ? changed : all;
    if (lines.length === 0) return;
    const text = `Tokenscope watch: ${lines.map((l) => l.line).join('; ')}`;
    if (lines.some((l) => l.broken)) ui.warn(text);
    else ui.info(text);
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
