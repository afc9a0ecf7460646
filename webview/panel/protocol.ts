/**
 * What every Tokenscope webview panel's protocol has in common (the exchange view's webview/protocol.ts, the
 * comparison's webview/compare/protocol.ts), and the host side's src/extension/webviewPanel.ts relies on:
 *
 * - the webview posts `ready` each time it (re)starts, and the host answers with a whole snapshot of what it shows;
 * - a request (a webview message with a `seq`) is answered by the host message of the same `type` and `seq`;
 * - an action that fails on the host is reported with `error`, which the panel shows (./error.ts);
 * - every message from the webview is checked field by field before the host acts on it (`messageGuard`).
 */

export interface ReadyMessage {
  type: 'ready';
}

/** An action the webview asked for failed on the host: one line, shown in the panel. `seq`: the request's, if it was one. */
export interface PanelErrorMessage {
  type: 'error';
  message: string;
  seq?: number;
}

export const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
export const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** One check per message type, over the message's fields; every type of the union must have one. */
export type FieldChecks<W extends { type: string }> = { readonly [K in W['type']]: (m: Record<string, unknown>) => boolean };

/** A guard that lets through a message whose `type` is known and whose fields pass that type's check. */
export function messageGuard<W extends { type: string }>(checks: FieldChecks<W>): (m: unknown) => m is W {
  return (m: unknown): m is W => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
    const o = m as Record<string, unknown>;
    return typeof o.type === 'string' && Object.hasOwn(checks, o.type) && checks[o.type as W['type']](o);
  };
}
