import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { DEFAULT_TIMEOUTS, startProxy } from '../../../src/core/proxy/server';
import { proxySettings, readSettings } from '../../../src/extension/settings';
import { rawRequest, startUpstream, tempDir } from '../proxy/local-upstream';

const from =
  (o: Record<string, unknown>) =>
  <T>(k: string) =>
    o[k] as T | undefined;

describe('extension settings', () => {
  it('has working defaults', () => {
    const s = readSettings(from({}));
    assert.equal(s.port, 8719);
    assert.equal(s.autostart, true);
    assert.deepEqual(s.upstreams, {});
    assert.equal(s.tokenizerFolder, undefined);
  });

  it('maps upstream names onto routes, named or custom, and the SGLang URL', () => {
    const s = readSettings(
      from({ upstreams: { openrouter: 'http://127.0.0.1:9/api/', lab: 'http://10.0.0.2:8000' }, 'sglang.url': 'http://127.0.0.1:30000' }),
    );
    assert.deepEqual(s.upstreams, {
      openrouter: 'http://127.0.0.1:9/api',
      custom: { lab: 'http://10.0.0.2:8000' },
      sglang: 'http://127.0.0.1:30000',
    });
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

describe('proxy timeout settings', () => {
  it('default to the proxy defaults and ignore a value that is not a positive number of seconds', () => {
    assert.deepEqual(readSettings(from({})).timeouts, DEFAULT_TIMEOUTS);
    const s = readSettings(from({ 'proxy.upstreamTimeout': 30, 'proxy.idleTimeout': -1, 'proxy.headerTimeout': 'soon' }));
    assert.deepEqual(s.timeouts, { ...DEFAULT_TIMEOUTS, upstreamHeadersMs: 30_000 });
  });

  it('reach the proxy the extension starts: an upstream that sends no headers gets a 504 after the configured time', {
    timeout: 15_000,
  }, async () => {
    const up = await startUpstream((req) => req.resume()); // never answers
    const tmp = tempDir();
    const store = await openStore(tmp.dir, {});
    const settings = readSettings(
      from({ 'proxy.port': 0, upstreams: { default: up.url }, 'proxy.upstreamTimeout': 0.3, 'proxy.headerTimeout': 5 }),
    );
    const proxy = await startProxy({ ...proxySettings(settings), store });
    try {
      const start = performance.now();
      const res = await rawRequest(`${proxy.url}/v1/chat/completions`, {
        body: '{"model":"m","messages":[]}',
        headers: { 'content-type': 'application/json' },
      });
      const ms = performance.now() - start;
      assert.equal(res.status, 504);
      assert.match(JSON.parse(res.body.toString()).error.message, /no response headers within 300 ms/);
      assert.ok(ms >= 280 && ms < 5000, `answered after ${ms.toFixed(0)} ms (setting: 0.3 s)`);
    } finally {
      await proxy.close();
      await store.close();
      await up.close();
      tmp.remove();
    }
  });
});

describe('upstream connection setting', () => {
  it('defaults to 256 and ignores a value out of range', () => {
    assert.equal(readSettings(from({})).upstreamConnections, 256);
    assert.equal(readSettings(from({ 'proxy.upstreamConnections': 0 })).upstreamConnections, 256);
    assert.equal(readSettings(from({ 'proxy.upstreamConnections': 2.5 })).upstreamConnections, 256);
    assert.equal(readSettings(from({ 'proxy.upstreamConnections': 8 })).upstreamConnections, 8);
  });

  it('reaches the proxy the extension starts: past the limit a request waits, within the upstream timeout', {
    timeout: 15_000,
  }, async () => {
    let calls = 0;
    const up = await startUpstream((req, res) => {
      req.resume();
      calls++;
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: {}\n\n');
      const t = setTimeout(() => res.end(), 2000);
      res.once('close', () => clearTimeout(t));
    });
    const tmp = tempDir();
    const store = await openStore(tmp.dir, {});
    const settings = readSettings(
      from({ 'proxy.port': 0, upstreams: { default: up.url }, 'proxy.upstreamTimeout': 0.3, 'proxy.upstreamConnections': 1 }),
    );
    const proxy = await startProxy({ ...proxySettings(settings), store });
    try {
      const first = rawRequest(`${proxy.url}/v1/stream`);
      while (calls === 0) await new Promise((r) => setTimeout(r, 5));
      const res = await rawRequest(`${proxy.url}/v1/stream`);
      assert.equal(res.status, 504);
      assert.match(JSON.parse(res.body.toString()).error.message, /came free within 300 ms: all 1 were in use/);
      assert.equal(calls, 1);
      assert.equal((await first).status, 200);
    } finally {
      await proxy.close();
      await store.close();
      await up.close();
      tmp.remove();
    }
  });
});
