/**
 * Raw ⇄ Delivered: a repaired exchange's upstream bytes beside the bytes repair mode delivered, in VS Code's diff
 * editor, as two read-only virtual documents (`tokenscope-body:/ID/upstream` and `…/delivered`). A stream is shown
 * event by event, the events repair passed through folded (deliveredDiffText.ts), so the diff shows what it changed.
 */
import * as vscode from 'vscode';
import type { CaptureStore } from '../core/capture/store';
import { repairSummary } from '../core/repair/describe';
import { Command, registerCommand } from './contributions';
import { deliveredDiffDocuments, type DiffDocuments } from './deliveredDiffText';

const SCHEME = 'tokenscope-body';

export class DeliveredDiff implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly disposables: vscode.Disposable[];
  /** The last exchange's documents: both sides are asked for in turn, and built together. */
  private last: { id: string; docs: DiffDocuments } | undefined;

  constructor(private readonly store: () => CaptureStore | undefined) {
    this.disposables = [
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      registerCommand(vscode.commands, Command.DiffDelivered, (arg) => this.open(idOf(arg))),
    ];
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const [, id, which] = uri.path.split('/');
    const docs = this.documents(id);
    if (!docs) return `(no ${which} bytes stored for ${id})`;
    return which === 'delivered' ? docs.delivered : docs.upstream;
  }

  private documents(id: string): DiffDocuments | undefined {
    if (this.last?.id === id) return this.last.docs;
    const store = this.store();
    const upstream = store?.readResponse(id)?.bytes;
    const delivered = store?.readDelivered(id);
    if (!upstream || !delivered) return undefined;
    const repair = store?.get(id)?.repair;
    this.last = { id, docs: deliveredDiffDocuments(upstream, delivered, repair && repairSummary(repair)) };
    return this.last.docs;
  }

  async open(id: string | undefined): Promise<void> {
    const x = id ? this.store()?.get(id) : undefined;
    if (!x) return;
    if (!x.repair) {
      void vscode.window.showInformationMessage(
        'Tokenscope: repair mode did not change this exchange; the agent got the upstream bytes as they were.',
      );
      return;
    }
    this.last = undefined; // read afresh each time the diff opens
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
