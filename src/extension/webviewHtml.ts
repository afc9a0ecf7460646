/**
 * The exchange webview's HTML shell. Pure (no `vscode` import) so the CSP is unit-tested: nothing but our own
 * bundle runs (script nonce), nothing loads from anywhere but the extension's media folder, and no inline style or
 * script is ever allowed, so model output that slips into markup still could not execute.
 */
import { randomBytes } from 'node:crypto';

export interface ShellOptions {
  /** `webview.cspSource`. */
  cspSource: string;
  /** Webview URIs of the bundle and stylesheets. */
  script: string;
  styles: string[];
  /** For the codicon font: vscode-elements finds it by this link id. */
  codiconStyle: string;
  title: string;
  nonce?: string;
}

export function newNonce(): string {
  return randomBytes(18).toString('base64url');
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource}`,
    `font-src ${cspSource}`,
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function webviewShell(o: ShellOptions): string {
  const nonce = o.nonce ?? newNonce();
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(contentSecurityPolicy(o.cspSource, nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(o.codiconStyle)}" id="vscode-codicon-stylesheet">
${o.styles.map((s) => `<link rel="stylesheet" href="${escapeAttr(s)}">`).join('\n')}
<title>${escapeAttr(o.title)}</title>
</head>
<body>
<div id="app" aria-live="polite">Loading…</div>
<script nonce="${nonce}" src="${escapeAttr(o.script)}"></script>
</body>
</html>`;
}
