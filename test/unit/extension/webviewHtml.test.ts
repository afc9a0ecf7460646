import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentSecurityPolicy, webviewShell } from '../../../src/extension/webviewHtml';

describe('exchange webview shell', () => {
  const html = webviewShell({
    cspSource: 'https://x.vscode-cdn.net',
    script: 'https://x.vscode-cdn.net/media/webview.js',
    styles: ['https://x.vscode-cdn.net/media/webview.css'],
    codiconStyle: 'https://x.vscode-cdn.net/media/codicon.css',
    title: 'a "title" <b>',
    nonce: 'N0nce',
  });

  it('allows nothing by default and scripts only with the nonce', () => {
    const csp = contentSecurityPolicy('https://x.vscode-cdn.net', 'N0nce');
    assert.match(csp, /^default-src 'none'; /);
    assert.match(csp, /script-src 'nonce-N0nce'$/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.ok(html.includes(`content="${csp.replace(/'/g, "'")}"`));
  });

  it('has exactly one script, carrying the nonce, and escapes the title', () => {
    assert.equal(html.match(/<script/g)?.length, 1);
    assert.match(html, /<script nonce="N0nce" src="https:\/\/x\.vscode-cdn\.net\/media\/webview\.js"><\/script>/);
    assert.match(html, /<title>a &quot;title&quot; &lt;b&gt;<\/title>/);
  });

  it('makes a fresh nonce per page', () => {
    const opts = { cspSource: 's', script: 'j', styles: [], codiconStyle: 'c', title: 't' };
    const nonce = (h: string) => /nonce="([^"]+)"/.exec(h)![1];
    assert.notEqual(nonce(webviewShell(opts)), nonce(webviewShell(opts)));
  });
});
