import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSettings } from '../../../src/extension/settings';

const from = (o: Record<string, unknown>) => <T>(k: string) => o[k] as T | undefined;

describe('extension settings', () => {
  it('has working defaults', () => {
    const s = readSettings(from({}));
    assert.equal(s.port, 8719);
    assert.equal(s.autostart, true);
    assert.deepEqual(s.upstreams, {});
    assert.equal(s.tokenizerFolder, undefined);
  });

  it('maps upstream names onto routes, named or custom, and the SGLang URL', () => {
    const s = readSettings(from({ upstreams: { openrouter: 'http://127.0.0.1:9/api/', lab: 'http://10.0.0.2:8000' }, 'sglang.url': 'http://127.0.0.1:30000' }));
    assert.deepEqual(s.upstreams, { openrouter: 'http://127.0.0.1:9/api', custom: { lab: 'http://10.0.0.2:8000' }, sglang: 'http://127.0.0.1:30000' });
  });

  it('reports a bad upstream or pattern in one line and ignores it', () => {
    const s = readSettings(from({ upstreams: { lab: 'ftp://x' }, 'redaction.patterns': ['(', 'sk-[a-z]+'] }));
    assert.deepEqual(s.upstreams, {});
    assert.equal(s.upstreamProblems.length, 1);
    assert.match(s.upstreamProblems[0], /must be http/);
    assert.equal(s.redactionPatterns.length, 1);
    assert.match(s.redactionProblems[0], /not a valid regular expression/);
  });

  it('resolves relative folders against the workspace and rejects an out-of-range port', () => {
    const s = readSettings(from({ 'tokenizer.folder': '../shared/tokenizers/kimi-k2', 'proxy.port': 70000 }), '/work/main');
    assert.equal(s.tokenizerFolder, '/work/shared/tokenizers/kimi-k2');
    assert.equal(s.port, 8719);
  });
});
