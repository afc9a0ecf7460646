/**
 * Paths outside every route are answered by the proxy itself: `GET /` and `/health` say what is listening and which
 * routes it forwards, anything else is a 404 that lists them. None of them reaches an upstream or becomes a capture.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { repoRoot } from '../../helpers/shared';
import { exited, rawRequest, serveChild, startUpstream, tempDir } from '../../unit/proxy/local-upstream';

const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version as string;

async function captureCount(dataDir: string): Promise<number> {
  let out = '';
  const code = await main(['captures', '--data-dir', dataDir, '--json'], { out: (t) => (out += t), err: () => undefined });
  assert.equal(code, 0);
  return (JSON.parse(out) as unknown[]).length;
}

test('serve answers /, /health and unknown paths locally: never forwarded, never captured', async () => {
  const seen: string[] = [];
  const up = await startUpstream((req, res) => {
    seen.push(req.url!);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
  });
  const data = tempDir();
  // Every route, the default one included, leads to the counting upstream.
  const s = await serveChild([
    '--port',
    '0',
    '--data-dir',
    data.dir,
    '--upstream',
    up.url,
    '--openrouter-url',
    up.url,
    '--sglang-url',
    up.url,
    '--anthropic-url',
    up.url,
    '--openai-url',
    up.url,
    '--custom',
    `lab=${up.url}`,
  ]);
  try {
    for (const path of ['/', '/health', '/health?probe=1']) {
      for (const method of ['GET', 'HEAD']) {
        const r = await rawRequest(`${s.url}${path}`, { method });
        assert.equal(r.status, 200, `${method} ${path}`);
        assert.match(String(r.headers['content-type']), /^application\/json/, `${method} ${path}`);
        if (method === 'HEAD') continue;
        const body = JSON.parse(r.body.toString());
        assert.equal(body.tokenscope, version, `${method} ${path}`);
        assert.deepEqual(body.routes, ['/openrouter/', '/sglang/', '/anthropic/', '/openai/', '/u/lab/', '/v1/']);
      }
    }
    for (const [method, path] of [
      ['GET', '/favicon.ico'],
      ['POST', '/chat/completions'],
      ['GET', '/openrouterx/v1/models'],
      ['GET', '/u/nope/v1/models'],
      ['POST', '/'],
      ['GET', '/v2/models'],
    ]) {
      const r = await rawRequest(`${s.url}${path}`, {
        method,
        ...(method === 'POST' ? { body: '{"model":"m"}', headers: { 'content-type': 'application/json' } } : {}),
      });
      assert.equal(r.status, 404, `${method} ${path}`);
      const message = JSON.parse(r.body.toString()).error.message as string;
      assert.match(message, /^Tokenscope has no route for \//, `${method} ${path}`);
      for (const route of ['/openrouter/', '/sglang/', '/anthropic/', '/openai/', '/u/lab/', '/v1/'])
        assert.ok(message.includes(route), `${path}: ${message}`);
    }
    // An Anthropic client gets the 404 in its own shape.
    const anthropic = await rawRequest(`${s.url}/messages`, {
      method: 'POST',
      body: '{}',
      headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    });
    assert.equal(anthropic.status, 404);
    assert.equal(JSON.parse(anthropic.body.toString()).type, 'error');
    assert.deepEqual(seen, [], 'nothing outside a route reached the upstream');
    // A foreign Host is still refused before anything else.
    assert.equal((await rawRequest(`${s.url}/health`, { headers: { host: 'evil.example' } })).status, 403);

    // The routes themselves still forward, and are captured.
    for (const path of ['/v1/models', '/openrouter/v1/models', '/u/lab/v1/models', '/sglang/health'])
      assert.equal((await rawRequest(`${s.url}${path}`)).status, 200, path);
    assert.deepEqual(seen, ['/v1/models', '/v1/models', '/v1/models', '/health']);
  } finally {
    s.child.kill('SIGTERM');
    await exited(s.child);
    await up.close();
  }
  try {
    assert.equal(await captureCount(data.dir), 4, 'only the four forwarded requests were captured');
  } finally {
    data.remove();
  }
});
