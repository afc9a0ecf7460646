/**
 * Read-only documents for VS Code's diff editor, so any two exchanges can be compared with the editor users know.
 *
 * - Raw stream (the model's native text, special tokens spelled as the model emitted them): the `tokenscope:`
 *   documents the exchange view already serves (src/extension/exchanges.ts reads only the id from the path, so the
 *   file name here is free to say which sample it is).
 * - Wire: the response body exactly as received (SSE events, the provider's own field names), from this module's
 *   `tokenscope-wire:` provider.
 */
import * as vscode from 'vscode';
import type { CaptureStore } from '../../core/capture/store';
import { RAW_SCHEME } from '../exchanges';

export const WIRE_SCHEME = 'tokenscope-wire';

/** `fireworks #2` → `fireworks-2`: the diff editor shows the file names, so they say which sample is which. */
const fileName = (label: string) => label.replace(/\s*#\s*/g, '-').replace(/[^\w.-]+/g, '_') || 'exchange';

export function rawDocumentUri(id: string, label: string): vscode.Uri {
  return vscode.Uri.from({ scheme: RAW_SCHEME, path: `/${id}/${fileName(label)}.txt` });
}

export function wireDocumentUri(id: string, label: string): vscode.Uri {
  return vscode.Uri.from({ scheme: WIRE_SCHEME, path: `/${id}/${fileName(label)}.sse` });
}

export class WireDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly store: () => CaptureStore | undefined) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    const id = uri.path.split('/')[1] ?? '';
    const x = this.store()?.get(id);
    const body = x && this.store()?.readResponse(id);
    if (!x || !body) return `Tokenscope: exchange ${id} is not in the capture store (deleted, or captured elsewhere).\n`;
    const head = `HTTP ${x.status ?? '(no response)'} from ${x.upstreamUrl}${x.error ? ` · ${x.error}` : ''}\n\n`;
    return head + new TextDecoder().decode(body.bytes);
  }
}

/** Opens two exchanges side by side in the diff editor: `raw` native text or `wire` bytes. */
export async function openDiff(
  kind: 'raw' | 'wire',
  left: { id: string; label: string },
  right: { id: string; label: string },
): Promise<void> {
  const uri = kind === 'raw' ? rawDocumentUri : wireDocumentUri;
  const what = kind === 'raw' ? 'raw stream' : 'wire';
  await vscode.commands.executeCommand(
    'vscode.diff',
    uri(left.id, left.label),
    uri(right.id, right.label),
    `${left.label} ↔ ${right.label} (${what})`,
    {
      preview: false,
    },
  );
}
