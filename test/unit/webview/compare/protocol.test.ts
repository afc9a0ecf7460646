import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCompareWebviewMessage } from '../../../../webview/compare/protocol';

describe('comparison webview messages', () => {
  it('accepts the messages the webview sends', () => {
    for (const m of [
      { type: 'ready' },
      { type: 'cancel' },
      { type: 'openExchange', id: '01J9' },
      { type: 'setReference', slug: 'fireworks' },
      { type: 'diff', kind: 'raw', left: 'a', right: 'b' },
      { type: 'diff', kind: 'wire', left: 'a', right: 'b' },
      { type: 'diff', kind: 'tokens', left: 'a', right: 'b' },
    ]) {
      assert.equal(isCompareWebviewMessage(m), true, JSON.stringify(m));
    }
  });

  it('rejects anything malformed, so the host never acts on it', () => {
    for (const m of [
      null,
      'ready',
      {},
      { type: 'openExchange' },
      { type: 'openExchange', id: '' },
      { type: 'setReference', slug: 3 },
      { type: 'diff', kind: 'html', left: 'a', right: 'b' },
      { type: 'diff', kind: 'raw', left: 'a' },
      { type: 'diff', kind: 'raw', left: 'a', right: 'a' },
      { type: 'runCommand', command: 'workbench.action.terminal.new' },
    ]) {
      assert.equal(isCompareWebviewMessage(m), false, JSON.stringify(m));
    }
  });
});
