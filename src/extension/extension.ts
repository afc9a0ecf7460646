/**
 * Tokenscope in VS Code: starts the capture proxy with the editor, shows captures live in the activity bar, and
 * opens each exchange in a token view. This file only wires parts together; logic lives in the core and in the
 * pure view-model modules beside it.
 */
import * as vscode from 'vscode';
import { defaultDataDir, openStore, type CaptureStore } from '../core/capture/store';
import { startProxy, type ProxyHandle } from '../core/proxy/server';
import { policyStage, type Policies } from '../core/policy/policy';
import { latestModel, policyLines, policyStatus } from '../core/policy/describe';
import { ProviderDirectory } from '../core/policy/slugs';
import { LivePolicies, policyFilePath } from '../core/policy/stored';
import { repairStage, type RepairSettings } from '../core/repair/stage';
import { DeliveredDiff } from './deliveredDiff';
import { ProvidersView } from './providersView';
import { readPolicies, readRepairSettings } from './repairSettings';
import { OpenRouterClient } from '../core/upstream/openrouter';
import { copyAgentSnippet, launchAgent } from './agentCommands';
import { CapturesTree, exchangeIdOf, filterCaptures } from './capturesTree';
import { registerCompare } from './compare/index';
import {
  affectsSetting,
  Command,
  openSettings,
  registerCommand,
  settingId,
  settingReader,
  SHOW_CONTAINER_COMMAND,
  STATUS_BAR_ID,
  type CommandArgs,
  type CommandId,
} from './contributions';
import { DemoCommands } from './demoCommands';
import { copyIssue, exportRepro, openRepro, rerunExchange, type ReproDeps } from './reproCommands';
import { ExchangePanels } from './exchangePanel';
import { Exchanges } from './exchanges';
import { proxySettings, readSettings, type Settings } from './settings';
import type { DownloadProgress } from '../core/tokens/hub';
import { ExchangeTokenizer, type DownloadSink } from './tokenize';
import { OtlpBridge } from './otlpExport';
import { inFlightOf } from '../core/live/inflight';
import { WatchCommands } from './watchCommands';
import { statusBarText, statusBarTooltip, storeSignature, type ProxyStatus } from './viewModel';

/** How often the views look for captures another process added, analysed or removed (a CLI `serve`, `demo --clear`). */
const OTHER_PROCESSES_MS = 3000;

/** SecretStorage name = the variable agents read it from (src/core/agents/recipes.ts). */
const SECRET_OPENROUTER = 'OPENROUTER_API_KEY';
const SECRET_HF = 'HF_TOKEN';

/** A notification with a progress bar for one tokenizer download from the Hub; `done()` closes it. */
function downloadNotification(): DownloadSink {
  let report: ((p: DownloadProgress) => void) | undefined;
  let finish!: () => void;
  const ended = new Promise<void>((resolve) => (finish = resolve));
  let last = 0;
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Tokenscope: downloading the tokenizer' },
    (progress) => {
      report = (p) => {
        const mb = (n: number) => (n / 1e6).toFixed(1);
        const pct = p.total ? Math.floor((p.received / p.total) * 100) : undefined;
        progress.report({
          message: `${p.repo}/${p.file}: ${mb(p.received)}${p.total ? ` of ${mb(p.total)}` : ''} MB`,
          increment: pct !== undefined && pct > last ? pct - last : undefined,
        });
        if (pct !== undefined) last = pct;
      };
      return ended;
    },
  );
  return { report: (p) => report?.(p), done: () => finish() };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('Tokenscope', { log: true });
  context.subscriptions.push(log);
  const app = new App(context, log);
  context.subscriptions.push(app);
  await app.start();
}

export function deactivate(): void {
  // Everything is in context.subscriptions; App.dispose closes the proxy and the store.
}

class App implements vscode.Disposable {
  private settings: Settings;
  private store: CaptureStore | undefined;
  private proxy: ProxyHandle | undefined;
  private proxyStatus: ProxyStatus = { state: 'stopped' };
  private readonly status = vscode.window.createStatusBarItem(STATUS_BAR_ID, vscode.StatusBarAlignment.Left, 50);
  private readonly tree: CapturesTree;
  private readonly exchanges: Exchanges;
  private readonly panels: ExchangePanels;
  private readonly tokenizer: ExchangeTokenizer;
  private readonly disposables: vscode.Disposable[] = [];
  private unsubscribeStore: (() => void) | undefined;
  /** The capture list's signature when last looked at, and the timer that looks (storeSignature). */
  private signature = '';
  private readonly otherProcesses: NodeJS.Timeout;
  private readonly otlp: OtlpBridge;
  private readonly providers: ProvidersView;
  /** Repair mode and provider policy, read at start and on each settings change; the proxy's stages read these per request. */
  private repair: RepairSettings;
  private policies: Policies;
  /** The policies the proxy applies: those stored in the data dir over the setting's, followed live (core/policy/stored.ts). */
  private livePolicies: LivePolicies | undefined;
  private slugs: { at: number; dir: ProviderDirectory } | undefined;
  private readonly demo: DemoCommands;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.settings = this.readSettings();
    ({ repair: this.repair, policies: this.policies } = this.readRepairAndPolicy());
    this.status.name = 'Tokenscope';
    this.status.command = SHOW_CONTAINER_COMMAND;
    const live = (id: string) => (this.store ? inFlightOf(this.store, id) : undefined);
    this.tree = new CapturesTree(
      () => this.store?.list() ?? [],
      live,
      (q) => this.store?.query(q) ?? [],
      () => this.slugDirectory(),
    );
    this.exchanges = new Exchanges(() => this.store, log);
    this.tokenizer = new ExchangeTokenizer(vscode.Uri.joinPath(context.extensionUri, 'dist', 'tokens-worker.js').fsPath, async () => ({
      tokenizerDir: this.settings.tokenizerFolder,
      // Kimi K2's tokenizer ships in the extension: its token view works offline, on the first run.
      bundledDir: vscode.Uri.joinPath(context.extensionUri, 'tokenizers').fsPath,
      cacheDir: this.store?.dataDir,
      hfToken: await context.secrets.get(SECRET_HF),
      onWarning: (m) => log.warn(m),
      startDownload: downloadNotification,
    }));
    this.panels = new ExchangePanels(context.extensionUri, this.exchanges, (o, job) => this.tokenizer.tokens(o.result, job), log, live);
    this.otlp = new OtlpBridge(context, log, () => this.settings.redactionPatterns);
    this.providers = new ProvidersView(
      () => this.store,
      () => this.currentPolicies(),
      () => this.openRouterClient(),
      () => this.livePolicies?.check(true),
    );
    this.disposables.push(
      this.status,
      this.tree,
      this.exchanges,
      this.panels,
      this.otlp,
      this.providers,
      new DeliveredDiff(() => this.store),
    );
    this.disposables.push(new WatchCommands(context, { store: () => this.store, openrouter: () => this.openRouterClient(), log }));
    this.demo = new DemoCommands({
      store: () => this.store,
      openExchange: (id) => this.panels.show(id),
      clearDiagnostics: (id) => this.exchanges.clearDiagnostics(id),
      log,
    });
    this.disposables.push(this.demo);
    this.registerCommands();
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSetting(e)) void this.onSettingsChanged(e);
      }),
    );
    this.render();
    this.status.show();
    this.otherProcesses = setInterval(() => this.followOtherProcesses(), OTHER_PROCESSES_MS);
  }

  /** Redraws the views when the store changed under another process (no change event reaches this one then). */
  private followOtherProcesses(): void {
    // A policy another process stored (`tokenscope policy set`) is noticed here too when no request came since.
    this.livePolicies?.get();
    if (!this.store) return;
    const signature = storeSignature(this.store.list());
    if (signature === this.signature) return;
    const first = this.signature === '';
    this.signature = signature;
    if (first) return;
    this.tree.refresh();
    this.render();
    this.providers.refresh();
    void this.exchanges.syncProblems();
  }

  private readSettings(): Settings {
    const s = readSettings(settingReader(vscode.workspace), vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
    for (const p of [...s.upstreamProblems, ...s.redactionProblems]) this.log.warn(`settings: ${p}`);
    return s;
  }

  private readRepairAndPolicy(): { repair: RepairSettings; policies: Policies } {
    const get = settingReader(vscode.workspace);
    const { policies, problem } = readPolicies(get);
    if (problem) this.log.warn(`settings: ${problem}; no provider policy is applied`);
    return { repair: readRepairSettings(get), policies };
  }

  async start(): Promise<void> {
    await this.openStore();
    if (this.settings.autostart) await this.startProxy();
  }

  private async openStore(): Promise<void> {
    const dir = this.settings.captureFolder ?? defaultDataDir();
    this.livePolicies = new LivePolicies({
      dataDir: dir,
      base: () => this.policies,
      onWarning: (m) => this.log.warn(m),
      // Noticed on a request or by the timer: the views redraw after it.
      onChange: () =>
        void setImmediate(() => {
          this.slugs = undefined;
          this.providers.refresh(0);
          this.render();
        }),
    });
    try {
      this.store = await openStore(dir, {
        retention: this.settings.retentionDays ? { maxAgeDays: this.settings.retentionDays } : { maxAgeDays: Number.POSITIVE_INFINITY },
        redactPatterns: this.settings.redactionPatterns,
        maxBodyBytes: this.settings.maxBodyBytes,
        onWarning: (m) => this.log.warn(m),
      });
      this.log.info(`capture store: ${dir} (${this.store.list().length} exchanges)`);
      this.unsubscribeStore = this.store.onDidChange((e) => {
        this.tree.refresh();
        this.exchanges.storeChanged(e.kind, e.exchange.id);
        this.render();
        if (e.kind !== 'added') void this.panels.changed(e.exchange.id, e.kind === 'deleted');
      });
    } catch (e) {
      this.log.error(`cannot open the capture store in ${dir}`, e as Error);
      void vscode.window.showErrorMessage(`Tokenscope cannot open its capture store in ${dir}: ${(e as Error).message.split('\n')[0]}`);
    }
    this.tree.refresh();
    this.providers.watch(this.store);
    void this.exchanges.syncProblems();
    await this.otlp.attach(this.store);
  }

  private async startProxy(): Promise<void> {
    if (this.proxy || !this.store) return;
    this.proxyStatus = { state: 'starting' };
    this.render();
    try {
      this.proxy = await startProxy({
        ...proxySettings(this.settings),
        store: this.store,
        log: (line) => this.log.info(line),
        responseStage: repairStage(() => this.repair),
        requestStage: policyStage(() => this.currentPolicies()),
      });
      this.proxyStatus = { state: 'running', port: this.proxy.port };
      this.log.info(`capture proxy listening on ${this.proxy.url}`);
    } catch (e) {
      const reason = (e as Error).message.split('\n')[0];
      this.proxyStatus = { state: 'failed', reason };
      this.log.error(`capture proxy failed to start: ${reason}`);
      void vscode.window.showErrorMessage(`Tokenscope capture proxy failed to start: ${reason}`, 'Open Settings').then((a) => {
        if (a) void openSettings(vscode.commands, 'proxy');
      });
    }
    this.render();
  }

  private async stopProxy(): Promise<void> {
    const p = this.proxy;
    this.proxy = undefined;
    this.proxyStatus = { state: 'stopped' };
    this.render();
    await p?.close();
  }

  private async onSettingsChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    const before = this.settings;
    this.settings = this.readSettings();
    ({ repair: this.repair, policies: this.policies } = this.readRepairAndPolicy());
    if (affectsSetting(e, 'providerPolicy')) {
      this.providers.refresh(0);
      this.slugs = undefined;
      this.render();
    }
    if (affectsSetting(e, 'tokenizer')) {
      void this.tokenizer.clear();
      this.panels.retokenize();
    }
    if (affectsSetting(e, 'capture', 'redaction')) {
      const running = !!this.proxy;
      await this.stopProxy();
      this.unsubscribeStore?.();
      await this.store?.close();
      this.store = undefined;
      await this.openStore();
      if (running || this.settings.autostart) await this.startProxy();
      return;
    }
    const proxyChanged = affectsSetting(
      e,
      'proxy.port',
      'proxy.upstreamTimeout',
      'proxy.idleTimeout',
      'proxy.headerTimeout',
      'proxy.upstreamConnections',
      'upstreams',
      'sglang',
    );
    if (proxyChanged && this.proxy) {
      await this.stopProxy();
      await this.startProxy();
    } else if (!before.autostart && this.settings.autostart && !this.proxy) {
      await this.startProxy();
    }
  }

  /** Known provider slugs, read again at most every 5 s (the status bar redraws on every store change). */
  private slugDirectory(): ProviderDirectory | undefined {
    if (!this.store) return undefined;
    if (!this.slugs || Date.now() - this.slugs.at > 5000)
      this.slugs = { at: Date.now(), dir: new ProviderDirectory(this.store.providerSlugs()) };
    return this.slugs.dir;
  }

  /** The policies in force: the data dir's stored ones over the setting's (the setting's alone while no store is open). */
  private currentPolicies(): Policies {
    return this.livePolicies?.get() ?? this.policies;
  }

  private render(): void {
    const list = this.store?.list() ?? [];
    const policies = this.currentPolicies();
    const slugs = Object.keys(policies).length ? this.slugDirectory() : undefined;
    const policy = policyStatus(policies, latestModel(list), slugs);
    this.status.text = `${statusBarText(this.proxyStatus, list)}${policy ? ` · $(law) ${policy}` : ''}`;
    this.demo?.update(list);
    const sources = this.livePolicies?.sources() ?? {};
    const policyTip = policyLines(policies, slugs).map((l, i) => (sources[Object.keys(policies)[i]] === 'setting' ? `${l} [setting]` : l));
    const where = `stored in ${this.store ? policyFilePath(this.store.dataDir) : 'the data dir'}, \`tokenscope policy\`; [setting]: ${settingId('providerPolicy')}`;
    this.status.tooltip = [
      statusBarTooltip(this.proxyStatus, this.proxy?.url),
      ...(policyTip.length ? ['', `Provider policy (${where}):`, ...policyTip] : []),
    ].join('\n');
    this.status.backgroundColor = this.proxyStatus.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  private registerCommands(): void {
    const reg = <K extends CommandId>(id: K, fn: (...args: CommandArgs[K]) => unknown) =>
      this.disposables.push(registerCommand(vscode.commands, id, fn));

    reg(Command.Open, async (arg) => {
      // A click on a row passes nothing: the row clicked is the Captures tree's selection (see capturesTree.ts).
      const id = arg === undefined ? await this.tree.selectedExchangeId() : exchangeIdOf(arg);
      if (id) return this.panels.show(id);
      this.log.warn('open: no capture is selected in the Captures view');
    });
    reg(Command.Delete, async (arg) => {
      const id = exchangeIdOf(arg);
      if (!id || !this.store) return;
      this.exchanges.clearDiagnostics(id);
      await this.store.delete(id);
    });
    reg(Command.ShowBrokenOnly, () => this.tree.setBrokenOnly(true));
    reg(Command.ShowAll, () => this.tree.setBrokenOnly(false));
    reg(Command.FilterCaptures, () => filterCaptures(this.tree));
    reg(Command.ClearCaptureFilter, () => this.tree.setFilter(undefined));
    reg(Command.StartProxy, () => this.startProxy());
    reg(Command.StopProxy, () => this.stopProxy());
    reg(Command.ShowLog, () => this.log.show());
    reg(Command.CopyBaseUrl, async () => {
      if (!this.proxy)
        return vscode.window.showWarningMessage('Tokenscope: the capture proxy is not running (Tokenscope: Start Capture Proxy).');
      const url = `${this.proxy.url}/v1`;
      await vscode.env.clipboard.writeText(url);
      void vscode.window.showInformationMessage(`Tokenscope: copied ${url}`);
    });
    reg(Command.SetOpenRouterKey, async () => {
      const key = await vscode.window.showInputBox({
        title: 'OpenRouter API key',
        prompt: 'Kept in VS Code secret storage; used only for re-runs and comparisons. Leave empty to remove it.',
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key.trim()) await this.context.secrets.store(SECRET_OPENROUTER, key.trim());
      else await this.context.secrets.delete(SECRET_OPENROUTER);
      void vscode.window.showInformationMessage(key.trim() ? 'Tokenscope: OpenRouter key stored.' : 'Tokenscope: OpenRouter key removed.');
    });
    reg(Command.SetHuggingFaceToken, async () => {
      const token = await vscode.window.showInputBox({
        title: 'Hugging Face token',
        prompt: 'Kept in VS Code secret storage; sent only to the Hub, for gated tokenizer repos. Leave empty to remove it.',
        password: true,
        ignoreFocusOut: true,
      });
      if (token === undefined) return;
      if (token.trim()) await this.context.secrets.store(SECRET_HF, token.trim());
      else await this.context.secrets.delete(SECRET_HF);
      void vscode.window.showInformationMessage(
        token.trim() ? 'Tokenscope: Hugging Face token stored.' : 'Tokenscope: Hugging Face token removed.',
      );
    });
    reg(Command.LaunchAgent, () => launchAgent(this.proxy?.url, this.context.secrets));
    reg(Command.CopyAgentSnippet, () => copyAgentSnippet(this.proxy?.url));
    const repro: ReproDeps = {
      store: () => this.store,
      openrouter: () => this.openRouterClient(),
      sglangUrl: () => this.settings.upstreams.sglang,
      patterns: () => this.settings.redactionPatterns,
      version: String(this.context.extension.packageJSON.version ?? 'unknown'),
      openExchange: (id) => this.panels.show(id),
      log: this.log,
    };
    reg(Command.Rerun, (arg) => rerunExchange(repro, exchangeIdOf(arg)));
    reg(Command.Export, (arg) => exportRepro(repro, exchangeIdOf(arg)));
    reg(Command.CopyIssue, (arg) => copyIssue(repro, exchangeIdOf(arg)));
    reg(Command.OpenRepro, () => openRepro(repro));
    // Compare Providers… and Diff Exchanges… (Command.CompareProviders, Command.DiffExchanges).
    registerCompare(this.context, {
      store: () => this.store,
      openrouter: () => this.openRouterClient(),
      openExchange: (id) => void this.panels.show(id),
      log: this.log,
      tokens: async (id) => this.tokenizer.tokens((await this.exchanges.open(id))?.result),
      onCompared: () => this.providers.refresh(0),
    });
  }

  /** OpenRouter as the proxy reaches it (the setting, for tests and self-hosted gateways), with the stored key. */
  private async openRouterClient(): Promise<OpenRouterClient> {
    const apiKey = await this.context.secrets.get(SECRET_OPENROUTER);
    return new OpenRouterClient({ baseUrl: this.settings.upstreams.openrouter, apiKey });
  }

  dispose(): void {
    clearInterval(this.otherProcesses);
    for (const d of this.disposables) d.dispose();
    void this.tokenizer.dispose();
    this.unsubscribeStore?.();
    const proxy = this.proxy;
    const store = this.store;
    this.proxy = undefined;
    this.store = undefined;
    void proxy?.close().finally(() => store?.close());
    if (!proxy) void store?.close();
  }
}
