// The capture proxy end to end: passing through, refusing foreign hosts, upstream failures, aborts, pacing, a full disk,
// OpenRouter metadata, a taken port. Bodies (large, gzip, an echoed key) are in ./bodies.test.ts.
import assert from 'node:assert/strict';
import { existsSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { startProxy } from '../../../src/core/proxy/server';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { rawRequest, startRig, startUpstream, waitFor } from '../../unit/proxy/local-upstream';
import { scheduledNow } from '../../helpers/timing';

const sse = (n: number) => Array.from({ length: n }, (_, i) => `data: {"i":${i}}\n\n`);

test('a stream passes through unchanged; headers pass except hop-by-hop; the exchange is recorded', async () => {
  let seen: { url?: string; headers: Record<string, string | string[] | undefined> } = { headers: {} };
  const up = await startUpstream((req, res) => {
    seen = { url: req.url, headers: req.headers };
    req.resume();
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'x-generation-id': 'gen-42',
      'keep-alive': 'timeout=5',
      'x-upstream': 'yes',
    });
    for (const c of sse(3)) res.write(c);
    res.end('data: [DONE]\n\n');
  });
  const rig = await startRig({ anthropic: up.url });
  try {
    const body = JSON.stringify({ model: 'claude-x', stream: true, messages: [] });
    const res = await rawRequest(`${rig.proxy.url}/anthropic/v1/messages?beta=true`, {
      body,
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14',
        'x-api-key': 'sk-ant-secret0123456789abcdef',
        connection: 'keep-alive, x-drop-me',
        'x-drop-me': '1',
        'user-agent': 'claude-cli/2.0.1 (external, cli)',
      },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), sse(3).join('') + 'data: [DONE]\n\n');
    assert.equal(res.headers['x-generation-id'], 'gen-42');
    assert.equal(res.headers['x-upstream'], 'yes');
    assert.equal(seen.url, '/v1/messages?beta=true');
    assert.equal(seen.headers['anthropic-version'], '2023-06-01');
    assert.equal(seen.headers['anthropic-beta'], 'fine-grained-tool-streaming-2025-05-14');
    assert.equal(seen.headers['x-api-key'], 'sk-ant-secret0123456789abcdef', 'the key reaches the upstream');
    assert.equal(seen.headers['x-drop-me'], undefined, 'headers named in Connection are hop-by-hop');
    assert.equal(seen.headers.host, new URL(up.url).host);

    await waitFor(() => rig.store.list()[0]?.state === 'complete', 'the capture');
    const x = rig.store.get(rig.store.list()[0].id)!;
    assert.equal(x.route, 'anthropic');
    assert.equal(x.agent, 'claude-code');
    assert.equal(x.upstreamUrl, `${up.url}/v1/messages?beta=true`);
    assert.equal(x.requestHeaders['x-api-key'], '[REDACTED:x-api-key-header]');
    assert.equal(x.requestBody, body);
    assert.equal(x.requestModel, 'claude-x');
    assert.equal(x.generationId, 'gen-42');
    assert.equal(Buffer.from(rig.store.readResponse(x.id)!.bytes).toString(), res.body.toString());
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a foreign Host (DNS rebinding) or a foreign browser Origin gets 403 and never reaches the upstream', async () => {
  let hits = 0;
  const up = await startUpstream((_req, res) => {
    hits++;
    res.end('{}');
  });
  const rig = await startRig({ default: up.url });
  try {
    const evil = await rawRequest(`${rig.proxy.url}/v1/models`, { headers: { host: 'evil.example:8719' } });
    assert.equal(evil.status, 403);
    assert.match(JSON.parse(evil.body.toString()).error.message, /not a loopback name/);
    const cors = await rawRequest(`${rig.proxy.url}/v1/messages`, { body: '{}', headers: { origin: 'https://evil.example' } });
    assert.equal(cors.status, 403);
    assert.equal(JSON.parse(cors.body.toString()).type, 'error', 'Anthropic-shaped on /v1/messages');
    const local = await rawRequest(`${rig.proxy.url}/v1/models`, { headers: { origin: 'http://localhost:3000', host: 'localhost' } });
    assert.equal(local.status, 200);
    assert.equal(hits, 1);
  } finally {
    await rig.close();
    await up.close();
  }
});

test("an unreachable upstream is a 502 in the API's own error shape naming the upstream, and is recorded", async () => {
  const dead = await startUpstream(() => undefined);
  const deadUrl = dead.url;
  await dead.close(); // nothing listens there any more
  const rig = await startRig({ default: deadUrl, anthropic: deadUrl });
  try {
    const oai = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, {
      body: '{"model":"m"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(oai.status, 502);
    const e1 = JSON.parse(oai.body.toString());
    assert.match(e1.error.message, new RegExp(`could not reach the upstream ${deadUrl}.*ECONNREFUSED`));
    const ant = await rawRequest(`${rig.proxy.url}/anthropic/v1/messages`, { body: '{}', headers: { 'anthropic-version': '2023-06-01' } });
    assert.equal(ant.status, 502);
    const e2 = JSON.parse(ant.body.toString());
    assert.equal(e2.type, 'error');
    assert.equal(e2.error.type, 'api_error');
    assert.match(e2.error.message, /could not reach the upstream/);
    await waitFor(() => rig.store.list().length === 2 && rig.store.list().every((x) => x.state === 'error'), 'two error captures');
    assert.match(rig.store.list()[0].error!, /ECONNREFUSED/);
  } finally {
    await rig.close();
  }
});

test('429 and 5xx pass through with their bodies and headers', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    const status = Number(req.url!.split('/').pop());
    res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end(JSON.stringify({ error: { code: status, message: `status ${status}` } }));
  });
  const rig = await startRig({ default: up.url });
  try {
    for (const status of [429, 500, 502, 503]) {
      const res = await rawRequest(`${rig.proxy.url}/v1/x/${status}`, { body: '{}' });
      assert.equal(res.status, status);
      assert.equal(res.headers['retry-after'], '7');
      assert.equal(JSON.parse(res.body.toString()).error.message, `status ${status}`);
    }
    await waitFor(() => rig.store.list().length === 4 && rig.store.list().every((x) => x.state === 'complete'), 'captures');
  } finally {
    await rig.close();
    await up.close();
  }
});

test('an upstream reset mid-stream reaches the client as the same cut; the capture is incomplete with what arrived', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse(2).join(''));
    setTimeout(() => res.socket!.resetAndDestroy(), 30);
  });
  const rig = await startRig({ default: up.url });
  try {
    const direct = await rawRequest(`${up.url}/v1/chat/completions`, { body: '{}' });
    const proxied = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{}' });
    assert.ok(direct.error, 'the direct client sees a cut');
    assert.ok(proxied.error, 'the proxied client sees a cut too');
    assert.equal(proxied.body.toString(), direct.body.toString());
    await waitFor(() => rig.store.list()[0]?.state === 'incomplete', 'incomplete capture');
    const x = rig.store.list()[0];
    assert.match(x.error!, /upstream connection broke after 30 bytes/);
    assert.equal(Buffer.from(rig.store.readResponse(x.id)!.bytes).toString(), sse(2).join(''));
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a client abort closes the upstream connection within 100 ms and records what arrived', async () => {
  // Times are taken on a clock that stands still while this thread (client, proxy and upstream alike) waits for a
  // core: on a loaded machine other processes' turns are not the proxy's delay.
  let upstreamClosedAt = 0;
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const timer = setInterval(() => res.write('data: {"tick":1}\n\n'), 10);
    res.socket!.once('close', () => {
      upstreamClosedAt = scheduledNow();
      clearInterval(timer);
    });
  });
  const rig = await startRig({ default: up.url });
  try {
    let abortedAt = 0;
    await new Promise<void>((resolve, reject) => {
      const req = request(`${rig.proxy.url}/v1/chat/completions`, { method: 'POST', agent: false }, (res) => {
        let n = 0;
        res.on('data', () => {
          if (++n === 3) {
            abortedAt = scheduledNow();
            req.destroy();
            resolve();
          }
        });
      });
      req.once('error', (e) => (abortedAt ? undefined : reject(e)));
      req.end('{}');
    });
    // The bound is the lag below (on the scheduled clock); the wait itself is in wall time, so it is generous.
    await waitFor(() => upstreamClosedAt > 0, 'the upstream socket to close', 20_000);
    const lag = upstreamClosedAt - abortedAt;
    assert.ok(lag < 100, `upstream closed ${lag.toFixed(1)} ms after the client abort`);
    await waitFor(() => rig.store.list()[0]?.state === 'incomplete', 'incomplete capture');
    const x = rig.store.list()[0];
    assert.match(x.error!, /client closed the connection/);
    assert.ok((x.responseBytes ?? 0) >= 3 * 17);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a slow upstream is not buffered: each chunk reaches the client when it is sent', async () => {
  // Lags are timed on a clock that stands still while this thread waits for a core (see the abort test above);
  // a chunk held back by the proxy still shows its 200 ms or more.
  const sentAt: number[] = [];
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const next = () => {
      sentAt.push(scheduledNow());
      res.write(`data: {"i":${i}}\n\n`);
      if (++i < 5) setTimeout(next, 200);
      else res.end();
    };
    setTimeout(next, 300);
  });
  const rig = await startRig({ default: up.url });
  try {
    const gotAt: number[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = request(`${rig.proxy.url}/v1/chat/completions`, { method: 'POST', agent: false }, (res) => {
        res.on('data', () => gotAt.push(scheduledNow()));
        res.once('end', resolve);
      });
      req.once('error', reject);
      req.end('{}');
    });
    assert.equal(gotAt.length, 5, 'one client read per upstream chunk');
    const lags = gotAt.map((t, i) => t - sentAt[i]);
    assert.ok(Math.max(...lags) < 50, `chunk lags ${lags.map((l) => l.toFixed(1)).join(', ')} ms`);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a full disk does not stop forwarding', async (t) => {
  if (!existsSync('/dev/full')) return t.skip('/dev/full is not available to simulate ENOSPC');
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(sse(50).join(''));
  });
  // No spare files: each body file is created under its own name, which the test points at /dev/full.
  const rig = await startRig({ default: up.url }, { spareFiles: 0 });
  try {
    // Every response body file now lands on a device that answers ENOSPC.
    rig.store.onDidChange((e) => {
      if (e.kind === 'added') symlinkSync('/dev/full', join(rig.dataDir, 'bodies', `${e.exchange.id}.cap`));
    });
    for (let i = 0; i < 3; i++) {
      const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{}' });
      assert.equal(res.body.toString(), sse(50).join(''));
    }
    await waitFor(
      () => rig.store.list().length === 3 && rig.store.list().every((x) => x.state === 'incomplete'),
      'captures marked incomplete',
    );
    assert.equal(rig.warnings.length, 1, rig.warnings.join('\n'));
    assert.match(rig.warnings[0], /disk is full/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('OpenRouter: served provider, X-Generation-Id and whether the pin held are recorded', async () => {
  const emu = await startOpenRouterEmulator();
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  try {
    const ask = (provider: object) =>
      rawRequest(`${rig.proxy.url}/openrouter/v1/chat/completions`, {
        headers: { authorization: 'Bearer sk-or-v1-test0123456789abcdef', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }], provider }),
      });
    const held = await ask({ only: ['fireworks'] });
    assert.equal(held.status, 200);
    // atlas-cloud is down in the emulator: OpenRouter falls back to the next provider.
    const fell = await ask({ order: ['atlas-cloud'] });
    assert.equal(fell.status, 200);
    await waitFor(() => rig.store.list().length === 2 && rig.store.list().every((x) => x.state === 'complete'), 'captures');
    const [second, first] = rig.store.list();
    assert.equal(first.servedProvider, 'Fireworks');
    assert.deepEqual(first.pin, { requested: ['fireworks'], honoured: true });
    assert.match(first.generationId ?? '', /^gen-/);
    assert.equal(first.generationId, held.headers['x-generation-id']);
    assert.deepEqual(second.pin?.requested, ['atlas-cloud']);
    assert.equal(second.pin?.honoured, false, `served by ${second.servedProvider}`);
  } finally {
    await rig.close();
    await emu.close();
  }
});

test('a taken port is one clear message', async () => {
  const rig = await startRig({});
  try {
    await assert.rejects(startProxy({ port: rig.proxy.port, store: rig.store }), /port \d+ on 127\.0\.0\.1 is already in use.*--port/);
  } finally {
    await rig.close();
  }
});
