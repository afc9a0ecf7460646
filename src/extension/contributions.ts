/**
 * Everything Tokenscope contributes to VS Code, in one typed table: command ids and titles, setting keys and their
 * types, view ids, context keys, menus and keybindings. Code names a command, a setting, a view or a context key only
 * through this module; package.json's `contributes` says the same, and test/unit/extension/contributions.test.ts
 * checks both ways (every entry here is in the manifest with the same title, icon, `when` and group, and every
 * manifest entry is here).
 *
 * No runtime `vscode` import: the accessors take the API namespace they use (`vscode.commands`,
 * `vscode.workspace`), so tests and pure modules load this file in plain Node.
 */
import type * as vscode from 'vscode';
import type { Policies } from '../core/policy/policy';
import type { RepairSettings } from '../core/repair/stage';

/** The settings' section, the activity bar container's id, and every command's category. */
export const EXTENSION_ID = 'tokenscope';
export const CATEGORY = 'Tokenscope';

// ---------------------------------------------------------------------------------------------------- commands

export const Command = {
  LaunchAgent: 'tokenscope.launchAgent',
  RunDemo: 'tokenscope.runDemo',
  ClearDemoCaptures: 'tokenscope.clearDemoCaptures',
  CopyBaseUrl: 'tokenscope.copyBaseUrl',
  CopyAgentSnippet: 'tokenscope.copyAgentSnippet',
  SetOpenRouterKey: 'tokenscope.setOpenRouterKey',
  SetHuggingFaceToken: 'tokenscope.setHuggingFaceToken',
  OpenRepro: 'tokenscope.openRepro',
  StartProxy: 'tokenscope.startProxy',
  StopProxy: 'tokenscope.stopProxy',
  ShowLog: 'tokenscope.showLog',
  ShowBrokenOnly: 'tokenscope.showBrokenOnly',
  ShowAll: 'tokenscope.showAll',
  FilterCaptures: 'tokenscope.filterCaptures',
  ClearCaptureFilter: 'tokenscope.clearCaptureFilter',
  Open: 'tokenscope.open',
  Rerun: 'tokenscope.rerun',
  CompareProviders: 'tokenscope.compareProviders',
  DiffExchanges: 'tokenscope.diffExchanges',
  Export: 'tokenscope.export',
  CopyIssue: 'tokenscope.copyIssue',
  Delete: 'tokenscope.delete',
  SetOtlpHeaders: 'tokenscope.setOtlpHeaders',
  WatchExchange: 'tokenscope.watchExchange',
  WatchRepro: 'tokenscope.watchRepro',
  RecheckWatched: 'tokenscope.recheckWatched',
  AvoidProvider: 'tokenscope.avoidProvider',
  PreferProvider: 'tokenscope.preferProvider',
  OnlyProvider: 'tokenscope.onlyProvider',
  RefreshProviders: 'tokenscope.refreshProviders',
  DiffDelivered: 'tokenscope.diffDelivered',
} as const;
export type CommandId = (typeof Command)[keyof typeof Command];

/**
 * What each command is called with. A command on a tree row gets the row (or, from a tree with several rows selected,
 * the clicked row and the selection); the exchange view and other commands pass an exchange id; nothing when run
 * from the Command Palette.
 */
export interface CommandArgs {
  [Command.LaunchAgent]: [];
  [Command.RunDemo]: [];
  [Command.ClearDemoCaptures]: [];
  [Command.CopyBaseUrl]: [];
  [Command.CopyAgentSnippet]: [];
  [Command.SetOpenRouterKey]: [];
  [Command.SetHuggingFaceToken]: [];
  [Command.OpenRepro]: [];
  [Command.StartProxy]: [];
  [Command.StopProxy]: [];
  [Command.ShowLog]: [];
  [Command.ShowBrokenOnly]: [];
  [Command.ShowAll]: [];
  [Command.FilterCaptures]: [];
  [Command.ClearCaptureFilter]: [];
  [Command.Open]: [exchange?: unknown];
  [Command.Rerun]: [exchange?: unknown];
  [Command.CompareProviders]: [exchange?: unknown];
  [Command.DiffExchanges]: unknown[];
  [Command.Export]: [exchange?: unknown];
  [Command.CopyIssue]: [exchange?: unknown];
  [Command.Delete]: [exchange?: unknown];
  [Command.SetOtlpHeaders]: [];
  [Command.WatchExchange]: [exchange?: unknown];
  [Command.WatchRepro]: [];
  [Command.RecheckWatched]: [];
  [Command.AvoidProvider]: [target?: unknown];
  [Command.PreferProvider]: [target?: unknown];
  [Command.OnlyProvider]: [target?: unknown];
  [Command.RefreshProviders]: [];
  [Command.DiffDelivered]: [exchange?: unknown];
}

/** A command as package.json's `contributes.commands` lists it (category: always Tokenscope). */
export interface CommandContribution {
  title: string;
  /** A codicon, `$(name)`. */
  icon?: string;
}

export const COMMANDS: { readonly [K in CommandId]: CommandContribution } = {
  [Command.LaunchAgent]: { title: 'Launch Agent Through Tokenscope…', icon: '$(terminal)' },
  [Command.RunDemo]: { title: 'See a Broken Tool Call Now (Demo)', icon: '$(beaker)' },
  [Command.ClearDemoCaptures]: { title: 'Clear Demo Captures', icon: '$(clear-all)' },
  [Command.CopyBaseUrl]: { title: 'Copy Base URL', icon: '$(copy)' },
  [Command.CopyAgentSnippet]: { title: 'Copy Agent Configuration Snippet…' },
  [Command.SetOpenRouterKey]: { title: 'Set OpenRouter API Key' },
  [Command.SetHuggingFaceToken]: { title: 'Set Hugging Face Token' },
  [Command.OpenRepro]: { title: 'Open Repro…' },
  [Command.StartProxy]: { title: 'Start Capture Proxy' },
  [Command.StopProxy]: { title: 'Stop Capture Proxy' },
  [Command.ShowLog]: { title: 'Show Log' },
  [Command.ShowBrokenOnly]: { title: 'Show Broken Exchanges Only', icon: '$(filter)' },
  [Command.ShowAll]: { title: 'Show All Exchanges', icon: '$(filter-filled)' },
  [Command.FilterCaptures]: { title: 'Filter Captures…', icon: '$(search)' },
  [Command.ClearCaptureFilter]: { title: 'Clear Capture Filter', icon: '$(clear-all)' },
  [Command.Open]: { title: 'Open' },
  [Command.Rerun]: { title: 'Re-run…' },
  [Command.CompareProviders]: { title: 'Compare Providers…' },
  [Command.DiffExchanges]: { title: 'Diff Exchanges…' },
  [Command.Export]: { title: 'Export Repro…' },
  [Command.CopyIssue]: { title: 'Copy as GitHub Issue' },
  [Command.Delete]: { title: 'Delete', icon: '$(trash)' },
  [Command.SetOtlpHeaders]: { title: 'Set OpenTelemetry Export Headers' },
  [Command.WatchExchange]: { title: 'Watch This Exchange', icon: '$(eye)' },
  [Command.WatchRepro]: { title: 'Watch Repro…' },
  [Command.RecheckWatched]: { title: 'Re-check Watched', icon: '$(refresh)' },
  [Command.AvoidProvider]: { title: 'Avoid This Provider for This Model', icon: '$(circle-slash)' },
  [Command.PreferProvider]: { title: 'Prefer This Provider for This Model', icon: '$(star-empty)' },
  [Command.OnlyProvider]: { title: 'Only This Provider for This Model' },
  [Command.RefreshProviders]: { title: 'Refresh Providers', icon: '$(refresh)' },
  [Command.DiffDelivered]: { title: 'Raw ⇄ Delivered', icon: '$(diff)' },
};

/** Every command id, in the table's order. */
export const ALL_COMMANDS: readonly CommandId[] = Object.keys(COMMANDS) as CommandId[];

export const isCommandId = (v: unknown): v is CommandId => typeof v === 'string' && Object.hasOwn(COMMANDS, v);

/** Registers a command with handler arguments typed by CommandArgs. */
export function registerCommand<K extends CommandId>(
  ns: typeof vscode.commands,
  id: K,
  fn: (...args: CommandArgs[K]) => unknown,
): vscode.Disposable {
  return ns.registerCommand(id, fn as (...args: unknown[]) => unknown);
}

/** Runs one of Tokenscope's commands with arguments typed by CommandArgs. */
export function runCommand<K extends CommandId>(ns: typeof vscode.commands, id: K, ...args: CommandArgs[K]): Thenable<unknown> {
  return ns.executeCommand(id, ...args);
}

/** A `Command` for a tree item or a status bar entry (title as the manifest has it). */
export function asCommand<K extends CommandId>(id: K, ...args: CommandArgs[K]): vscode.Command {
  return { command: id, title: COMMANDS[id].title, ...(args.length ? { arguments: args } : {}) };
}

// ------------------------------------------------------------------------------------------------------- views

/** The activity bar container (its id is EXTENSION_ID) and the views in it. */
export const View = {
  Captures: 'tokenscope.captures',
  Providers: 'tokenscope.providers',
} as const;
export type ViewId = (typeof View)[keyof typeof View];

export const VIEWS: { readonly [K in ViewId]: { name: string } } = {
  [View.Captures]: { name: 'Captures' },
  [View.Providers]: { name: 'Providers' },
};

/** VS Code's own command that shows a view (`<view id>.focus`). */
export function focusViewCommand(view: ViewId): string {
  return `${view}.focus`;
}

/** VS Code's own command that opens Tokenscope's activity bar container. */
export const SHOW_CONTAINER_COMMAND = `workbench.view.extension.${EXTENSION_ID}`;

/** Webview panel types and status bar item ids (not in the manifest, but ids VS Code keeps state under). */
export const WebviewType = {
  Exchange: 'tokenscope.exchange',
  Comparison: 'tokenscope.comparison',
} as const;
export const STATUS_BAR_ID = 'tokenscope.status';

// ------------------------------------------------------------------------------------------------ context keys

export const ContextKey = {
  /** The Captures view shows broken exchanges only. */
  BrokenOnly: 'tokenscope.brokenOnly',
  /** A filter is active in the Captures view. */
  Filtered: 'tokenscope.filtered',
  /** The store holds captures of the built-in demo. */
  HasDemoCaptures: 'tokenscope.hasDemoCaptures',
} as const;
export type ContextKeyId = (typeof ContextKey)[keyof typeof ContextKey];

export interface ContextKeyTypes {
  [ContextKey.BrokenOnly]: boolean;
  [ContextKey.Filtered]: boolean;
  [ContextKey.HasDemoCaptures]: boolean;
}

export function setContextKey<K extends ContextKeyId>(ns: typeof vscode.commands, key: K, value: ContextKeyTypes[K]): Thenable<unknown> {
  return ns.executeCommand('setContext', key, value);
}

// ------------------------------------------------------------------------------------------- menus, keybindings

export interface MenuItem {
  command: CommandId;
  when?: string;
  group?: string;
}
export type MenuId = 'view/title' | 'view/item/context' | 'commandPalette';

const inCaptures = `view == ${View.Captures}`;
const onExchange = `${inCaptures} && viewItem =~ /^exchange/`;
const onProvider = `view == ${View.Providers} && viewItem == provider`;

export const MENUS: { readonly [K in MenuId]: readonly MenuItem[] } = {
  'view/title': [
    { command: Command.ShowBrokenOnly, when: `${inCaptures} && !${ContextKey.BrokenOnly}`, group: 'navigation@1' },
    { command: Command.ShowAll, when: `${inCaptures} && ${ContextKey.BrokenOnly}`, group: 'navigation@1' },
    { command: Command.FilterCaptures, when: inCaptures, group: 'navigation@1' },
    { command: Command.ClearCaptureFilter, when: `${inCaptures} && ${ContextKey.Filtered}`, group: 'navigation@1' },
    { command: Command.LaunchAgent, when: inCaptures, group: 'navigation@2' },
    { command: Command.CopyBaseUrl, when: inCaptures, group: 'navigation@3' },
    { command: Command.OpenRepro, when: inCaptures, group: '1_repro' },
    { command: Command.RunDemo, when: inCaptures, group: '0_demo@1' },
    { command: Command.ClearDemoCaptures, when: `${inCaptures} && ${ContextKey.HasDemoCaptures}`, group: '0_demo@2' },
    { command: Command.SetOpenRouterKey, when: inCaptures, group: '2_settings' },
    { command: Command.RecheckWatched, when: inCaptures, group: '1_repro@2' },
    { command: Command.WatchRepro, when: inCaptures, group: '1_repro@3' },
    { command: Command.RefreshProviders, when: `view == ${View.Providers}`, group: 'navigation@1' },
  ],
  'view/item/context': [
    { command: Command.Open, when: onExchange, group: '1_open@1' },
    { command: Command.Rerun, when: onExchange, group: '2_run@1' },
    { command: Command.CompareProviders, when: onExchange, group: '2_run@2' },
    { command: Command.DiffExchanges, when: onExchange, group: '2_run@3' },
    { command: Command.Export, when: onExchange, group: '3_export@1' },
    { command: Command.CopyIssue, when: onExchange, group: '3_export@2' },
    { command: Command.Delete, when: onExchange, group: '9_delete@1' },
    { command: Command.WatchExchange, when: onExchange, group: '2_run@4' },
    { command: Command.AvoidProvider, when: onProvider, group: 'inline@1' },
    { command: Command.PreferProvider, when: onProvider, group: 'inline@2' },
    { command: Command.AvoidProvider, when: onProvider, group: '1_policy@1' },
    { command: Command.PreferProvider, when: onProvider, group: '1_policy@2' },
    { command: Command.OnlyProvider, when: onProvider, group: '1_policy@3' },
    { command: Command.AvoidProvider, when: onExchange, group: '4_policy@1' },
    { command: Command.PreferProvider, when: onExchange, group: '4_policy@2' },
    { command: Command.OnlyProvider, when: onExchange, group: '4_policy@3' },
    { command: Command.DiffDelivered, when: onExchange, group: '1_open@2' },
  ],
  // Commands that need a row to act on are hidden from the palette.
  commandPalette: [
    { command: Command.Open, when: 'false' },
    { command: Command.Rerun, when: 'false' },
    { command: Command.Export, when: 'false' },
    { command: Command.Delete, when: 'false' },
    { command: Command.ShowBrokenOnly, when: 'false' },
    { command: Command.ShowAll, when: 'false' },
    { command: Command.ClearCaptureFilter, when: ContextKey.Filtered },
    { command: Command.CopyIssue, when: 'false' },
    { command: Command.WatchExchange, when: 'false' },
    { command: Command.AvoidProvider, when: 'false' },
    { command: Command.PreferProvider, when: 'false' },
    { command: Command.OnlyProvider, when: 'false' },
    { command: Command.DiffDelivered, when: 'false' },
  ],
};

export interface Keybinding {
  command: CommandId;
  key: string;
  mac?: string;
  when?: string;
}

/** Tokenscope binds no keys of its own (F8 walks its findings through the Problems panel). */
export const KEYBINDINGS: readonly Keybinding[] = [];

// ---------------------------------------------------------------------------------------------------- settings

type JsonType = 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';
/** The JSON schema type a TypeScript setting type is declared with in the manifest. */
type JsonTypeOf<T> = T extends boolean
  ? 'boolean'
  : T extends number
    ? 'integer' | 'number'
    : T extends string
      ? 'string'
      : T extends readonly unknown[]
        ? 'array'
        : 'object';

export interface SettingSchema {
  type: JsonType;
  enum?: readonly string[];
}
/** A setting's schema, carrying its TypeScript type (checked against the JSON type here, against the manifest in the test). */
interface Setting<T> extends SettingSchema {
  readonly __type?: T;
}
function setting<T>(type: JsonTypeOf<T>, values?: readonly (T & string)[]): Setting<T> {
  return values ? { type, enum: values } : { type };
}

const OTLP_PROTOCOLS = ['', 'http/protobuf', 'http/json'] as const;
const REPAIR_TRUNCATED = ['withhold', 'passthrough'] as const satisfies readonly RepairSettings['truncated'][];

/** Every setting, by its key under `tokenscope.`, with the type its value is read as. */
export const SETTINGS = {
  'proxy.port': setting<number>('integer'),
  'proxy.autostart': setting<boolean>('boolean'),
  'proxy.upstreamTimeout': setting<number>('number'),
  'proxy.idleTimeout': setting<number>('number'),
  'proxy.headerTimeout': setting<number>('number'),
  'proxy.upstreamConnections': setting<number>('integer'),
  upstreams: setting<Record<string, string>>('object'),
  'sglang.url': setting<string>('string'),
  'tokenizer.folder': setting<string>('string'),
  'capture.folder': setting<string>('string'),
  'capture.retentionDays': setting<number>('integer'),
  'capture.maxBodyMB': setting<number>('integer'),
  'redaction.patterns': setting<string[]>('array'),
  'otlp.enabled': setting<boolean>('boolean'),
  'otlp.endpoint': setting<string>('string'),
  'otlp.protocol': setting<(typeof OTLP_PROTOCOLS)[number]>('string', OTLP_PROTOCOLS),
  'otlp.serviceName': setting<string>('string'),
  'otlp.content': setting<boolean>('boolean'),
  'watch.intervalMinutes': setting<number>('integer'),
  'watch.samples': setting<number>('integer'),
  'repair.enabled': setting<boolean>('boolean'),
  'repair.truncated': setting<RepairSettings['truncated']>('string', REPAIR_TRUNCATED),
  'repair.routes': setting<string[]>('array'),
  'repair.models': setting<string[]>('array'),
  providerPolicy: setting<Policies>('object'),
  'compare.samples': setting<number>('integer'),
  'compare.concurrency': setting<number>('integer'),
} as const;

export type SettingKey = keyof typeof SETTINGS;
/** Each setting's value as read (a user can write anything in settings.json: readers still check what they get). */
export type SettingTypes = { [K in SettingKey]: NonNullable<(typeof SETTINGS)[K]['__type']> };
/** A group of settings (`proxy` for `proxy.port`, `proxy.autostart`…). */
export type SettingSection = SettingKey extends infer K ? (K extends `${infer S}.${string}` ? S : never) : never;

/** What a pure settings reader (settings.ts, repairSettings.ts) is given: tests pass a plain object's getter. */
export type SettingGet = <K extends SettingKey>(key: K) => SettingTypes[K] | undefined;

/** The full setting id (`tokenscope.proxy.port`) of a key or a section. */
export function settingId(key: SettingKey | SettingSection): string {
  return `${EXTENSION_ID}.${key}`;
}

/** One setting's value (the manifest's default when unset). */
export function readSetting<K extends SettingKey>(ws: typeof vscode.workspace, key: K): SettingTypes[K] | undefined {
  return ws.getConfiguration(EXTENSION_ID).get<SettingTypes[K]>(key);
}

/** A SettingGet over the current configuration. */
export function settingReader(ws: typeof vscode.workspace): SettingGet {
  const cfg = ws.getConfiguration(EXTENSION_ID);
  return (key) => cfg.get(key);
}

export function inspectSetting<K extends SettingKey>(ws: typeof vscode.workspace, key: K) {
  return ws.getConfiguration(EXTENSION_ID).inspect<SettingTypes[K]>(key);
}

export function writeSetting<K extends SettingKey>(
  ws: typeof vscode.workspace,
  key: K,
  value: SettingTypes[K] | undefined,
  target: vscode.ConfigurationTarget,
): Thenable<void> {
  return ws.getConfiguration(EXTENSION_ID).update(key, value, target);
}

/** Whether a configuration change touches any of these settings or sections (none given: any Tokenscope setting). */
export function affectsSetting(e: vscode.ConfigurationChangeEvent, ...keys: (SettingKey | SettingSection)[]): boolean {
  return keys.length === 0 ? e.affectsConfiguration(EXTENSION_ID) : keys.some((k) => e.affectsConfiguration(settingId(k)));
}

/** Opens the Settings editor on a setting or a section. */
export function openSettings(ns: typeof vscode.commands, key: SettingKey | SettingSection): Thenable<unknown> {
  return ns.executeCommand('workbench.action.openSettings', settingId(key));
}
