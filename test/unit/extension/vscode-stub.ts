/**
 * The slice of the `vscode` API the comparison's host side uses, recorded so a test can drive the flow in plain
 * Node: quick picks and input boxes answer from `ui`, webview panels record what the host posts and let the test
 * post as the webview would. `install()` makes `require('vscode')` resolve here.
 */
import Module from 'node:module';

type Listener<T> = (e: T) => unknown;

class Emitter<T> {
  private listeners: Listener<T>[] = [];
  event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static from(c: { scheme: string; path: string }): Uri {
    return new Uri(c.scheme, c.path);
  }
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path, ...parts].join('/'));
  }
  toString(): string {
    return `${this.scheme}:${this.path}`;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}
export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}
export class MarkdownString {
  constructor(readonly value = '') {}
}
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string | MarkdownString;
  contextValue?: string;
  iconPath?: unknown;
  command?: unknown;
  constructor(
    readonly label: string,
    readonly collapsibleState?: number,
  ) {}
}
export class EventEmitter<T> extends Emitter<T> {
  dispose(): void {}
}
export const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
export class Range {
  constructor(
    readonly startLine: number,
    readonly startCharacter: number,
    readonly endLine: number,
    readonly endCharacter: number,
  ) {}
}
export class Diagnostic {
  source?: string;
  code?: string;
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity: number,
  ) {}
}
export const ViewColumn = { Active: -1, Beside: -2 };
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };
export const StatusBarAlignment = { Left: 1, Right: 2 };
export const TreeItemCollapsibleState = { None: 0, Collapsed: 1, Expanded: 2 };

export class FakePanel {
  readonly posted: any[] = [];
  readonly received = new Emitter<unknown>();
  readonly disposed = new Emitter<void>();
  isDisposed = false;
  title: string;
  iconPath: unknown;
  readonly webview = {
    html: '',
    cspSource: 'https://webview.test',
    asWebviewUri: (u: Uri) => u,
    postMessage: async (m: unknown) => {
      this.posted.push(structuredClone(m));
      return true;
    },
    onDidReceiveMessage: this.received.event,
  };
  onDidDispose = this.disposed.event;
  constructor(
    readonly viewType: string,
    title: string,
  ) {
    this.title = title;
  }
  /** As the webview would post. */
  send(m: unknown): void {
    this.received.fire(m);
  }
  dispose(): void {
    this.isDisposed = true;
    this.disposed.fire();
  }
}

/** What the fake UI answers, and what it saw. */
export const ui = {
  quickPick: (items: any[], _opts: any): any => items,
  inputBox: (_opts: any): string | undefined => '2',
  /** Cancel the progress notification this many ms after it opens (undefined: never). */
  cancelProgressAfterMs: undefined as number | undefined,
  /** Cancel the progress notification once this holds, checked every 5 ms (undefined: never). */
  cancelProgressWhen: undefined as ((reports: { increment?: number; message?: string }[]) => boolean) | undefined,
  quickPicks: [] as { items: any[]; opts: any }[],
  inputBoxes: [] as any[],
  errors: [] as string[],
  progress: [] as { title: string; reports: { increment?: number; message?: string }[] }[],
  panels: [] as FakePanel[],
  executed: [] as unknown[][],
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  contentProviders: new Map<string, { provideTextDocumentContent(uri: Uri): string | Promise<string> }>(),
  /** What the diagnostic collections hold: URI text → diagnostics (the Problems panel). */
  diagnostics: new Map<string, Diagnostic[]>(),
};

export const window = {
  showQuickPick: async (items: any[], opts: any) => {
    ui.quickPicks.push({ items, opts });
    return ui.quickPick(items, opts);
  },
  showInputBox: async (opts: any) => {
    ui.inputBoxes.push(opts);
    return ui.inputBox(opts);
  },
  showErrorMessage: async (message: string) => {
    ui.errors.push(message);
    return undefined;
  },
  showWarningMessage: async () => undefined,
  showInformationMessage: async () => undefined,
  withProgress: async (opts: { title: string; cancellable?: boolean }, task: (p: unknown, token: unknown) => Promise<unknown>) => {
    const entry = { title: opts.title, reports: [] as { increment?: number; message?: string }[] };
    ui.progress.push(entry);
    const cancel = new Emitter<void>();
    const token = { isCancellationRequested: false, onCancellationRequested: cancel.event };
    const timer =
      ui.cancelProgressAfterMs !== undefined
        ? setTimeout(() => {
            token.isCancellationRequested = true;
            cancel.fire();
          }, ui.cancelProgressAfterMs)
        : undefined;
    const when = ui.cancelProgressWhen;
    const poll = when
      ? setInterval(() => {
          if (token.isCancellationRequested || !when(entry.reports)) return;
          token.isCancellationRequested = true;
          cancel.fire();
        }, 5)
      : undefined;
    try {
      return await task({ report: (r: { increment?: number; message?: string }) => entry.reports.push(r) }, token);
    } finally {
      clearTimeout(timer);
      clearInterval(poll);
    }
  },
  createTreeView: (id: string, opts: { treeDataProvider: unknown }) => ({
    id,
    ...opts,
    badge: undefined,
    description: undefined,
    message: undefined,
    /** Shown, as a view in the open sidebar is. */
    visible: true,
    onDidChangeVisibility: new Emitter<{ visible: boolean }>().event,
    dispose() {},
  }),
  createWebviewPanel: (viewType: string, title: string) => {
    const p = new FakePanel(viewType, title);
    ui.panels.push(p);
    return p;
  },
};

export const workspace = {
  getConfiguration: () => ({ get: () => undefined }),
  registerTextDocumentContentProvider: (scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) => {
    ui.contentProviders.set(scheme, provider);
    return { dispose: () => ui.contentProviders.delete(scheme) };
  },
};

export const commands = {
  registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
    ui.commands.set(id, fn);
    return { dispose: () => ui.commands.delete(id) };
  },
  executeCommand: async (...args: unknown[]) => {
    ui.executed.push(args);
    return undefined;
  },
};

export const languages = {
  createDiagnosticCollection: () => {
    const uris = new Map<string, Uri>();
    return {
      set(uri: Uri, diags: Diagnostic[]) {
        uris.set(uri.toString(), uri);
        ui.diagnostics.set(uri.toString(), diags);
      },
      delete(uri: Uri) {
        uris.delete(uri.toString());
        ui.diagnostics.delete(uri.toString());
      },
      forEach(fn: (uri: Uri, diags: Diagnostic[]) => void) {
        for (const [key, uri] of [...uris]) fn(uri, ui.diagnostics.get(key) ?? []);
      },
      dispose() {},
    };
  },
};

/** Makes `require('vscode')` load this module. */
export function install(): void {
  const m = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const original = m._resolveFilename;
  m._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? __filename : original.call(this, request, ...rest);
  };
}
