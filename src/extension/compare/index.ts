/**
 * "Compare Providers…" and "Diff Exchanges…": the VS Code side of the provider comparison. The comparison itself is
 * the core's (src/core/upstream/compare.ts); this module asks the user what to compare, shows progress with a
 * cancel button, streams results into the matrix panel and opens samples side by side.
 *
 * extension.ts wires it with `registerCompare(context, deps)` and routes the Captures tree's Compare command to the
 * returned `runCompare`.
 */
import * as vscode from 'vscode';
import { exchangeModel, exchangeProvider, findingsText, localTime } from '../../core/capture/describe';
import type { CaptureStore } from '../../core/capture/store';
import { UserError } from '../../core/model';
import { compareProviders, DEFAULT_CONCURRENCY, DEFAULT_SAMPLES } from '../../core/upstream/compare';
import { isAbort } from '../../core/upstream/http';
import type { OpenRouterClient, ProviderEndpoint } from '../../core/upstream/openrouter';
import { capturedChatRequest } from '../../core/upstream/rerun';
import type { CompareHostMessage, DiffKind } from '../../../webview/compare/protocol';
import type { TokenStreamView } from '../../../webview/protocol';
import { exchangeIdOf } from '../capturesTree';
import { Command, readSetting, registerCommand, runCommand } from '../contributions';
import { openDiff, WIRE_SCHEME, WireDocuments } from './documents';
import { defaultReference, parseCount, providerPickItem, type CompareState } from './matrix';
import { ComparePanel } from './panel';
import { alignTokenStreams } from './tokenDiff';

const MAX_SAMPLES = 50;
const MAX_CONCURRENCY = 256;

export interface CompareDeps {
  store: () => CaptureStore | undefined;
  /** A client with the user's key (SecretStorage or OPENROUTER_API_KEY); rejects with a UserError when there is none. */
  openrouter: () => Promise<OpenRouterClient>;
  openExchange: (id: string) => void;
  log: vscode.LogOutputChannel;
  /** An exchange's token stream, for the token diff. Without it, "Token diff" opens both exchanges instead. */
  tokens?: (exchangeId: string) => Promise<{ stream?: TokenStreamView; reason?: string }>;
  /** Told when a comparison ended and its verdicts are stored (the Providers view redraws). */
  onCompared?: () => void;
}

export interface CompareCommands {
  /** Compare Providers… for a captured exchange (asks for one when no id is given). */
  runCompare(exchangeId?: string): Promise<void>;
  /** Two exchanges' raw streams in the diff editor (asks for the missing ones). */
  diffExchanges(left?: string, right?: string): Promise<void>;
}

export function registerCompare(context: vscode.ExtensionContext, deps: CompareDeps): CompareCommands {
  const flow = new CompareFlow(context.extensionUri, deps);
  const ids = (args: unknown[]) =>
    args
      .flat()
      .map(exchangeIdOf)
      .filter((id): id is string => !!id);
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(WIRE_SCHEME, new WireDocuments(deps.store)),
    registerCommand(vscode.commands, Command.CompareProviders, (arg) => flow.runCompare(exchangeIdOf(arg))),
    // From a tree with several rows selected, VS Code passes (clicked row, selected rows).
    registerCommand(vscode.commands, Command.DiffExchanges, (...args) => {
      const [left, right] = [...new Set(ids(args))];
      return flow.diffExchanges(left, right);
    }),
  );
  return { runCompare: (id) => flow.runCompare(id), diffExchanges: (a, b) => flow.diffExchanges(a, b) };
}

/** One line for the user; unexpected errors also go to the log with their stack. */
function report(e: unknown, log: vscode.LogOutputChannel, what: string): void {
  const message = (e instanceof Error ? e.message : String(e)).split('\n')[0];
  if (!(e instanceof UserError)) log.error(`${what} failed`, e instanceof Error ? e : new Error(message));
  void vscode.window.showErrorMessage(`Tokenscope: ${message}`);
}

class CompareFlow {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: CompareDeps,
  ) {}

  async runCompare(exchangeId?: string): Promise<void> {
    try {
      await this.compare(exchangeId);
    } catch (e) {
      report(e, this.deps.log, 'Compare Providers');
    }
  }

  async diffExchanges(left?: string, right?: string): Promise<void> {
    try {
      const store = this.requireStore();
      let ids = [left, right].filter((id): id is string => !!id);
      if (ids.length < 2) {
        const picked = await this.pickExchanges(store, 2 - ids.length, ids);
        if (!picked) return;
        ids = [...ids, ...picked];
      }
      const [a, b] = ids.map((id) => ({ id, label: exchangeLabel(store, id) }));
      await openDiff('raw', a, b);
    } catch (e) {
      report(e, this.deps.log, 'Diff Exchanges');
    }
  }

  private requireStore(): CaptureStore {
    const store = this.deps.store();
    if (!store) throw new UserError('the capture store is not open (see Tokenscope: Show Log)');
    return store;
  }

  private async compare(exchangeId?: string): Promise<void> {
    const store = this.requireStore();
    const id = exchangeId ?? (await this.pickExchanges(store, 1, []))?.[0];
    if (!id) return;
    const { id: sourceId, body } = capturedChatRequest(store, id);
    const model = typeof body.model === 'string' ? body.model : undefined;
    if (!model) throw new UserError(`capture ${sourceId} names no model`);

    let client: OpenRouterClient;
    try {
      client = await this.deps.openrouter();
    } catch (e) {
      if (!(e instanceof UserError)) throw e;
      const action = await vscode.window.showErrorMessage(`Tokenscope: ${e.message}`, 'Set OpenRouter API Key');
      if (action) await runCommand(vscode.commands, Command.SetOpenRouterKey);
      return;
    }

    const endpoints = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Tokenscope: listing the providers of ${model}…`, cancellable: true },
      (_p, token) => {
        const ac = new AbortController();
        token.onCancellationRequested(() => ac.abort());
        return client.endpoints(model, ac.signal).catch((e: unknown) => {
          if (isAbort(e, ac.signal)) return undefined;
          throw e;
        });
      },
    );
    if (!endpoints) return;
    if (endpoints.length === 0) throw new UserError(`no provider serves ${model} on OpenRouter right now`);

    const chosen = await pickProviders(model, endpoints);
    if (!chosen?.length) return;
    const samples = await askSamples(readSetting(vscode.workspace, 'compare.samples') ?? DEFAULT_SAMPLES);
    if (samples === undefined) return;
    const concurrencySetting = readSetting(vscode.workspace, 'compare.concurrency');
    const concurrency =
      Number.isInteger(concurrencySetting) && concurrencySetting! >= 1
        ? Math.min(concurrencySetting!, MAX_CONCURRENCY)
        : DEFAULT_CONCURRENCY;

    const providers = chosen.map((e) => ({ slug: e.slug, endpoint: e }));
    const source = store.get(sourceId);
    const state: CompareState = {
      model,
      sourceExchangeId: sourceId,
      reference: defaultReference(providers, source && exchangeProvider(source)),
      samples,
      concurrency,
      state: 'running',
      progress: { done: 0, total: providers.length * samples, running: 0, failed: 0 },
      providers,
      results: new Map(),
    };
    const panel = new ComparePanel(this.extensionUri, state, {
      openExchange: (x) => this.deps.openExchange(x),
      diff: (kind, l, r, post) => this.diff(kind, l, r, post),
      log: this.deps.log,
    });
    this.deps.log.info(
      `comparing ${model} across ${providers.length} providers × ${samples} samples (concurrency ${concurrency}), from ${sourceId}`,
    );

    await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Tokenscope: comparing ${providers.length} providers of ${model}`,
        cancellable: true,
      },
      async (progress, token) => {
        token.onCancellationRequested(() => panel.abort.abort());
        let reported = 0;
        try {
          const result = await compareProviders({
            request: body,
            client,
            model,
            providers: providers.map((p) => p.slug),
            samples,
            concurrency,
            reference: state.reference,
            store,
            parentId: sourceId,
            signal: panel.abort.signal,
            onProgress: (p) => {
              panel.progress(p);
              const percent = p.total ? (100 * p.done) / p.total : 0;
              progress.report({
                increment: percent - reported,
                message: `${p.done}/${p.total} done · ${p.running} running${p.failed ? ` · ${p.failed} failed` : ''}`,
              });
              reported = percent;
            },
            onSample: (_sample, row) => panel.sample(row),
          });
          panel.finish(result);
          this.deps.onCompared?.();
          const failed = result.providers.reduce((n, p) => n + p.failed, 0);
          this.deps.log.info(
            `comparison of ${model} ${result.cancelled ? 'cancelled' : 'finished'} in ${Math.round(result.wallMs)} ms, ${failed} failed samples`,
          );
        } catch (e) {
          const message = (e instanceof Error ? e.message : String(e)).split('\n')[0];
          panel.fail(message);
          if (!panel.abort.signal.aborted) report(e, this.deps.log, 'Compare Providers');
        }
      },
    );
  }

  private async diff(
    kind: DiffKind,
    left: { id: string; label: string },
    right: { id: string; label: string },
    post: (m: CompareHostMessage) => void,
  ): Promise<void> {
    if (kind !== 'tokens') return openDiff(kind, left, right);
    const tokens = this.deps.tokens;
    if (!tokens) {
      // No tokenizer access: the two exchange views, each with its own token view, are the next best thing.
      this.deps.openExchange(left.id);
      this.deps.openExchange(right.id);
      return;
    }
    post({ type: 'tokenDiff', pending: true });
    const load = (id: string) =>
      tokens(id).catch((e: Error) => {
        this.deps.log.error(`tokenizing ${id} failed`, e);
        return { stream: undefined, reason: `tokenizing failed: ${e.message.split('\n')[0]}` };
      });
    const [a, b] = await Promise.all([load(left.id), load(right.id)]);
    if (!a.stream && !b.stream) {
      post({ type: 'tokenDiff', reason: `Neither sample has a token stream: ${a.reason ?? b.reason ?? 'no response'}` });
      return;
    }
    post({ type: 'tokenDiff', diff: alignTokenStreams({ ...left, exchangeId: left.id, ...a }, { ...right, exchangeId: right.id, ...b }) });
  }

  /** Recent exchanges to choose `count` from (newest first), excluding `except`. */
  private async pickExchanges(store: CaptureStore, count: number, except: string[]): Promise<string[] | undefined> {
    const items = store
      .list()
      .filter((x) => !except.includes(x.id))
      .sort((a, b) => b.startedAt - a.startedAt)
      .slice(0, 200)
      .map((x) => ({
        label: exchangeModel(x) ?? x.path,
        description: [exchangeProvider(x), localTime(x.startedAt)].filter(Boolean).join(' · '),
        detail: `${x.status ?? 'no response'} · ${findingsText(x.summary)} · ${x.id}`,
        id: x.id,
      }));
    if (items.length < count)
      throw new UserError(count === 1 ? 'there are no captured exchanges yet' : 'pick two exchanges: there are not enough captured yet');
    if (count === 1) {
      const one = await vscode.window.showQuickPick(items, {
        title: 'Tokenscope: pick an exchange',
        matchOnDescription: true,
        matchOnDetail: true,
      });
      return one && [one.id];
    }
    const many = await vscode.window.showQuickPick(items, {
      title: 'Tokenscope: pick two exchanges to compare',
      canPickMany: true,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!many) return undefined;
    if (many.length !== count)
      throw new UserError(`pick exactly ${count} exchange${count === 1 ? '' : 's'} to compare (${many.length} picked)`);
    return many.map((m) => m.id);
  }
}

function exchangeLabel(store: CaptureStore, id: string): string {
  const x = store.get(id);
  return `${(x && exchangeProvider(x)) ?? x?.route ?? 'exchange'}-${id.slice(-6)}`;
}

async function pickProviders(model: string, endpoints: ProviderEndpoint[]): Promise<ProviderEndpoint[] | undefined> {
  const items = endpoints.map((e) => ({ ...providerPickItem(e), picked: true, endpoint: e }));
  const picked = await vscode.window.showQuickPick(items, {
    title: `Tokenscope: compare ${model} across providers`,
    placeHolder: 'Every provider serving the model is selected; untick the ones to leave out',
    canPickMany: true,
    matchOnDescription: true,
    ignoreFocusOut: true,
  });
  return picked?.map((p) => p.endpoint);
}

async function askSamples(initial: number): Promise<number | undefined> {
  const value = await vscode.window.showInputBox({
    title: 'Tokenscope: samples per provider',
    prompt: 'How many times to send the request to each provider (trigger agreement pairs sample k with the reference’s sample k)',
    value: String(Number.isInteger(initial) && initial >= 1 ? Math.min(initial, MAX_SAMPLES) : DEFAULT_SAMPLES),
    ignoreFocusOut: true,
    validateInput: (v) => {
      const n = parseCount(v, 'Samples', MAX_SAMPLES);
      return typeof n === 'string' ? n : undefined;
    },
  });
  if (value === undefined) return undefined;
  const n = parseCount(value, 'Samples', MAX_SAMPLES);
  return typeof n === 'number' ? n : undefined;
}
