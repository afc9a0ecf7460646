/**
 * Raw ⇄ Delivered: a repaired exchange's upstream bytes beside the bytes repair mode delivered, in VS Code's diff
 * editor, as two read-only virtual documents (`tokenscope-body:/ID/upstream` and `…/delivered`).
 */
import * as vscode from 'vscode';
import type { CaptureStore } from '../core/capture/store';

const SCHEME = 'tokenscope-body';

export class DeliveredDiff implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly store: () => CaptureStore | undefined) {
    this.disposables = [
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      vscode.commands.registerCommand('tokenscope.diffDelivered', (arg: unknown) => this.open(idOf(arg))),
    ];
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const [, id, which] = uri.path.split('/');
    const store = this.store();
    const bytes = which === 'delivered' ? store?.readDelivered(id) : store?.readResponse(id)?.bytes;
    return bytes ? Buffer.from(bytes).toString('utf8') : `(no ${which} bytes stored for ${id})`;
  }

  async open(id: string | undefined): Promise<void> {
    const x = id ? this.store()?.get(id) : undefined;
    if (!x) return;
    if (!x.repair) {
      void vscode.window.showInformationMessage('Tokenscope: repair mode did not change this exchange; the agent got the upstream bytes as they were.');
      return;
    }
    const uri = (which: string) => vscode.Uri.from({ scheme: SCHEME, path: `/${x.id}/${which}` });
    await vscode.commands.executeCommand('vscode.diff', uri('upstream'), uri('delivered'), `${x.requestModel ?? x.id}: Raw ⇄ Delivered`);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function idOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  const x = (arg as { exchange?: { id?: string } } | undefined)?.exchange;
  return typeof x?.id === 'string' ? x.id : undefined;
}
