/** Re-run…, Export Repro… and Open Repro…: thin VS Code flows over src/core/upstream and src/core/export. */
import * as vscode from 'vscode';
import type { CaptureStore } from '../core/capture/store';
import {
  defaultFileName,
  EXPORT_EXTENSIONS,
  exportToFile,
  importText,
  markdownIssue,
  prepareRepro,
  previewRedactions,
  readCapture,
  replayPin,
  withReplaySlug,
  type CaptureInput,
  type ExportFormat,
  type Repro,
  type UserPattern,
} from '../core/export/index';
import { UserError } from '../core/model';
import type { OpenRouterClient } from '../core/upstream/openrouter';
import { rerun } from '../core/upstream/rerun';
import { targetLabel, type Target } from '../core/upstream/run';
import { SGLANG_DEFAULT_URL } from '../core/upstream/sglang';
import { providerPickItem } from './compare/matrix';

export interface ReproDeps {
  store: () => CaptureStore | undefined;
  openrouter: () => Promise<OpenRouterClient>;
  sglangUrl: () => string | undefined;
  patterns: () => UserPattern[];
  version: string;
  openExchange: (id: string) => unknown;
  log: vscode.LogOutputChannel;
}

/** One line for the user; unexpected errors also go to the log with their stack. */
async function guarded(what: string, log: vscode.LogOutputChannel, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    const message = (e instanceof Error ? e.message : String(e)).split('\n')[0];
    if (!(e instanceof UserError)) log.error(`${what} failed`, e instanceof Error ? e : new Error(message));
    void vscode.window.showErrorMessage(`Tokenscope: ${message}`);
  }
}

function requireStore(deps: ReproDeps): CaptureStore {
  const store = deps.store();
  if (!store) throw new UserError('the capture store is not open (see the Tokenscope log)');
  return store;
}

export function rerunExchange(deps: ReproDeps, id: string | undefined): Promise<void> {
  return guarded('Re-run', deps.log, async () => {
    if (!id) throw new UserError('pick an exchange in the Captures tree to re-run');
    const store = requireStore(deps);
    const sglang = deps.sglangUrl() ?? SGLANG_DEFAULT_URL;
    const picks: (vscode.QuickPickItem & { target?: Target; askSlug?: boolean })[] = [
      { label: 'OpenRouter', description: 'its own provider routing', target: { kind: 'openrouter' } },
      { label: 'OpenRouter, pinned to a provider…', description: 'from the live list of providers serving the model', askSlug: true },
      { label: 'SGLang (Chat Completions)', description: sglang, target: { kind: 'sglang', url: sglang, api: 'chat' } },
      { label: 'SGLang (/generate, exact token ids)', description: sglang, target: { kind: 'sglang', url: sglang, api: 'native' } },
    ];
    const pick = await vscode.window.showQuickPick(picks, { title: 'Re-run the exchange on…' });
    if (!pick) return;
    let target = pick.target;
    const openrouter = target?.kind === 'openrouter' || pick.askSlug ? await deps.openrouter() : undefined;
    if (pick.askSlug) {
      const slug = await pickProvider(openrouter!, store, id, deps.log);
      if (!slug) return;
      target = { kind: 'openrouter', provider: slug };
    }
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Tokenscope: re-running on ${targetLabel(target!)}`, cancellable: true },
      (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return rerun(store, id, target!, { openrouter, signal: abort.signal });
      },
    );
    if (outcome.cancelled) return;
    if (outcome.exchangeId) await deps.openExchange(outcome.exchangeId);
    if (!outcome.ok)
      void vscode.window.showWarningMessage(
        `Tokenscope: the re-run on ${outcome.target} failed: ${outcome.error ?? `HTTP ${outcome.status}`}`,
      );
  });
}

/**
 * The provider to pin: picked from OpenRouter's live list for the capture's model (slug, quantization, price,
 * uptime). When the list cannot be had (no model in the capture, OpenRouter unreachable) the slug is typed instead.
 */
async function pickProvider(
  client: OpenRouterClient,
  store: CaptureStore,
  id: string,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const x = store.get(id);
  const model = x?.requestModel ?? x?.summary?.model;
  let why = 'the capture names no model';
  if (model) {
    try {
      const endpoints = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Tokenscope: providers serving ${model}…` },
        () => client.endpoints(model),
      );
      if (endpoints.length) {
        const chosen = await vscode.window.showQuickPick(
          endpoints.map((e) => ({ ...providerPickItem(e), slug: e.slug })),
          { title: `Re-run on one provider of ${model} (pinned, no fallbacks)`, matchOnDescription: true, matchOnDetail: true },
        );
        return chosen?.slug;
      }
      why = `no provider serves ${model} on OpenRouter right now`;
    } catch (e) {
      why = (e instanceof Error ? e.message : String(e)).split('\n')[0];
      log.warn(`provider list for ${model}: ${why}`);
    }
  }
  const slug = await vscode.window.showInputBox({
    title: 'OpenRouter provider slug',
    prompt: `No live provider list (${why}). Type the routing slug: fireworks, chutes, novita…`,
  });
  return slug?.trim() || undefined;
}

const FORMAT_PICKS: { label: string; detail: string; format: ExportFormat }[] = [
  { label: 'Repro bundle', detail: 'Everything Tokenscope knows, re-openable with Open Repro… and the CLI', format: 'bundle' },
  {
    label: 'Markdown issue',
    detail: 'For a bug report to a provider or an agent: findings, excerpts, how to reproduce',
    format: 'markdown',
  },
  { label: 'curl script', detail: 'Replays the request (your key from the environment)', format: 'curl' },
  { label: 'HAR', detail: 'For browser dev tools and HTTP tooling', format: 'har' },
  { label: 'K2 Vendor Verifier sample', detail: 'One JSONL line for K2VV', format: 'k2vv' },
  { label: 'promptfoo test', detail: 'A promptfoo config asserting the tool call', format: 'promptfoo' },
];

export function exportRepro(deps: ReproDeps, id: string | undefined): Promise<void> {
  return guarded('Export Repro', deps.log, async () => {
    if (!id) throw new UserError('pick an exchange in the Captures tree to export');
    const store = requireStore(deps);
    const pick = await vscode.window.showQuickPick(FORMAT_PICKS, { title: 'Export a redacted repro as…' });
    if (!pick) return;
    const input = pick.format === 'har' ? readCapture(store, id) : await withSlug(deps, store, readCapture(store, id));
    const patterns = deps.patterns();
    // Show what will be redacted before anything is written.
    const redactions = previewRedactions(input, { patterns });
    const summary = redactions.length
      ? redactions.map((r) => `${r.label} ×${r.count} in ${r.where}`).join('\n')
      : 'Nothing left to redact: auth headers, cookies and key-shaped strings were already removed when the exchange was captured.';
    const ok = await vscode.window.showInformationMessage(
      'Tokenscope: export this exchange?',
      { modal: true, detail: `Redacted:\n${summary}` },
      'Export',
    );
    if (ok !== 'Export') return;
    const repro = prepareRepro(input, { patterns, tokenscopeVersion: deps.version });
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const name = defaultFileName([repro], pick.format);
    const uri = await vscode.window.showSaveDialog({
      title: 'Save the repro',
      defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
      filters: { [pick.label]: [EXPORT_EXTENSIONS[pick.format].replace(/^\./, '')] },
    });
    if (!uri) return;
    exportToFile([repro], pick.format, uri.fsPath);
    if (pick.format !== 'har') warnIfGuessed(repro);
    const open = await vscode.window.showInformationMessage(`Tokenscope: saved ${uri.fsPath}`, 'Open');
    if (open) await vscode.window.showTextDocument(uri);
  });
}

/** "Copy as GitHub Issue": the redacted Markdown issue body (title first) on the clipboard, nothing written to disk. */
export function copyIssue(deps: ReproDeps, id: string | undefined): Promise<void> {
  return guarded('Copy as GitHub Issue', deps.log, async () => {
    if (!id) throw new UserError('pick an exchange in the Captures tree to copy as an issue');
    const store = requireStore(deps);
    const repro = prepareRepro(await withSlug(deps, store, readCapture(store, id)), {
      patterns: deps.patterns(),
      tokenscopeVersion: deps.version,
    });
    warnIfGuessed(repro);
    const { title, body } = markdownIssue(repro);
    await vscode.env.clipboard.writeText(`# ${title}\n\n${body}`);
    void vscode.window.showInformationMessage(`Tokenscope: copied the issue "${title}" (redacted) to the clipboard.`);
  });
}

/** The capture with its served provider's OpenRouter slug read from the model's endpoint listing when the store lacks it. */
async function withSlug(deps: ReproDeps, store: CaptureStore, input: CaptureInput): Promise<CaptureInput> {
  const client = await deps.openrouter().catch(() => undefined);
  const why = client ? undefined : 'no OpenRouter API key (Tokenscope: Set OpenRouter API Key…)';
  return withReplaySlug(input, store, client, { why, signal: AbortSignal.timeout(15_000) });
}

/** Says so when the replay's provider slug is derived from the served provider's name. */
function warnIfGuessed(repro: Repro): void {
  const pin = replayPin(repro);
  if (pin?.derivedFrom) {
    void vscode.window.showWarningMessage(
      `Tokenscope: the replay's provider slug "${pin.slug}" is a guess, derived from the name "${pin.derivedFrom}" (${pin.why}); check it on the model's OpenRouter page.`,
    );
  }
}

export function openRepro(deps: ReproDeps): Promise<void> {
  return guarded('Open Repro', deps.log, async () => {
    const store = requireStore(deps);
    const [uri] =
      (await vscode.window.showOpenDialog({
        title: 'Open a Tokenscope repro bundle or a HAR',
        canSelectMany: false,
        filters: { 'Repro or HAR': ['json', 'har'] },
      })) ?? [];
    if (!uri) return;
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    const { imported, skipped } = await importText(store, text, uri.fsPath);
    if (skipped.length) void vscode.window.showWarningMessage(`Tokenscope: ${skipped.length} entries were skipped (see the log).`);
    for (const s of skipped) deps.log.warn(`import ${uri.fsPath}: skipped ${JSON.stringify(s)}`);
    if (imported[0]) await deps.openExchange(imported[0].id);
    else throw new UserError(`${uri.fsPath} holds no exchange Tokenscope can show`);
  });
}
