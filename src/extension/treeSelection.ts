/**
 * Reading the clicked row of a tree that redraws while the user clicks.
 *
 * When a tree is redrawn (`onDidChangeTreeData` with no element), VS Code's extension host forgets every row it
 * knew and learns them again only when the view fetches the rows anew. The selection it holds in the meantime is the
 * row's handle, which maps to nothing, so `TreeView.selection` reads empty for that moment, even though the row is
 * highlighted on screen and its command has just been run. A click during that moment would open nothing. The
 * rows come back within a few milliseconds, so an empty selection right after a redraw is read again until they have.
 */

export interface SelectionWait {
  /** How long after a redraw an empty selection is still worth waiting for (ms). */
  settleMs: number;
  /** How often to read it again (ms). */
  pollMs: number;
}

export const SELECTION_WAIT: SelectionWait = { settleMs: 3000, pollMs: 25 };

/**
 * The selected item, read again while a recent redraw may still be refilling the tree.
 * `lastRedraw` is when the tree was last redrawn (ms since the epoch, 0 for never); `read` reads the selection.
 */
export async function settledSelection<T>(
  read: () => T | undefined,
  lastRedraw: () => number,
  wait: SelectionWait = SELECTION_WAIT,
  now: () => number = Date.now,
): Promise<T | undefined> {
  for (;;) {
    const item = read();
    if (item !== undefined) return item;
    if (now() - lastRedraw() > wait.settleMs) return undefined;
    await new Promise((resolve) => setTimeout(resolve, wait.pollMs));
  }
}
