// Faults users hit through the proxy (issue #16): each one answered, in time, in the caller's API shape.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'node:http';
import { test } from 'node:test';
import { rawRequest, startRig, startUpstream, waitFor } from '../../unit/proxy/local-upstream';
import { scheduledNow } from '../../helpers/timing';

/**
 * Resolves with the status and headers and the ms they took, without waiting for the body; the request stays open.
 * The ms are timed on a clock that stands still while this thread waits for a core (other processes' turns on a
 * loaded machine); client, proxy and upstream all run on this thread, so any wait of theirs counts.
 */
function headersOnly(url: string, body?: string): Promise<{ status: number; headers: Record<string, unknown>; ms: number; close(): void }> {
  const start = scheduledNow();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: body ? 'POST' : 'GET', agent: false, headers: body ? { 'content-type': 'application/json' } : {} },
      (res) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, ms: scheduledNow() - start, close: () => req.destroy() });
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

test('response headers reach the client the moment the upstream sends them, also when no body follows', async () => {
  let release: (() => void) | undefined;
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-up': '1' });
    res.flushHeaders();
    if (req.url?.includes('late')) {
      const t = setTimeout(() => res.end('data: [DONE]\n\n'), 3000);
      release = () => clearTimeout(t);
    } // else: headers, then nothing at all
  });
  const rig = await startRig({ default: up.url });
  try {
    const late = await headersOnly(`${rig.proxy.url}/v1/late`);
    assert.equal(late.status, 200);
    assert.ok(late.ms < 1500, `headers after ${late.ms.toFixed(0)} ms, the body comes after 3000 ms`);
    late.close();
    const silent = await headersOnly(`${rig.proxy.url}/v1/silent`);
    assert.equal(silent.status, 200);
    assert.equal(silent.headers['x-up'], '1');
    silent.close();
  } finally {
    release?.();
    await rig.close();
    await up.close();
  }
});

test('a malformed %-escape or a climbing path gets a 400 at once and never reaches the upstream', async () => {
  let hits = 0;
  const up = await startUpstream((req, res) => {
    hits++;
    req.resume();
    res.end('{}');
  });
  const rig = await startRig({ default: up.url, custom: { lab: up.url } });
  try {
    for (const path of ['/%E0%A4%A/v1/models', '/v1/%ZZ/models', '/u/lab/../../x', '/u/lab/%2e%2e/%2E%2E/x', '/v1/./models']) {
      const res = await rawRequest(rig.proxy.url, { path }); // the path as given: a URL would resolve the dots
      assert.equal(res.status, 400, path);
      assert.match(JSON.parse(res.body.toString()).error.message, /cannot forward this request/, path);
    }
    const anthropic = await rawRequest(rig.proxy.url, { path: '/anthropic/%E0%A4%A/v1/messages', body: '{}' });
    assert.equal(anthropic.status, 400);
    assert.deepEqual(Object.keys(JSON.parse(anthropic.body.toString())), ['type', 'error'], 'Anthropic shape');
    assert.equal(JSON.parse(anthropic.body.toString()).error.type, 'invalid_request_error');
    assert.equal(hits, 0);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a client that never finishes its request headers is cut off after the header timeout', async () => {
  const up = await startUpstream((_req, res) => res.end('{}'));
  const rig = await startRig({ default: up.url }, {}, { timeouts: { clientHeadersMs: 300 } });
  try {
    const { port } = new URL(rig.proxy.url);
    const started = scheduledNow(); // stands still while this thread waits for a core
    const reply = await new Promise<string>((resolve, reject) => {
      const s = connect(Number(port), '127.0.0.1', () => s.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
      let got = '';
      s.on('data', (d) => (got += d));
      s.once('close', () => resolve(got));
      s.once('error', reject);
      setTimeout(() => (s.destroy(), reject(new Error('still open after 5 s'))), 5000);
    });
    const ms = scheduledNow() - started;
    assert.ok(ms < 3000, `closed after ${ms.toFixed(0)} ms`);
    assert.match(reply, /^HTTP\/1\.1 408/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test("an upstream that sends no headers in time is a 504 in the caller's shape, recorded", async () => {
  const up = await startUpstream((req) => req.resume()); // never answers
  const rig = await startRig({ default: up.url, anthropic: up.url }, {}, { timeouts: { upstreamHeadersMs: 300 } });
  try {
    const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{"model":"m","stream":true}' });
    assert.equal(res.status, 504);
    const err = JSON.parse(res.body.toString()).error;
    assert.equal(err.code, 504);
    assert.match(err.message, /sent no response headers within 300 ms/);
    const a = await rawRequest(`${rig.proxy.url}/anthropic/v1/messages`, { body: '{}' });
    assert.equal(a.status, 504);
    assert.equal(JSON.parse(a.body.toString()).error.type, 'timeout_error');
    await waitFor(() => rig.store.list().length === 2 && rig.store.list().every((x) => x.state === 'error'), 'both captures');
    assert.match(rig.store.list()[0].error ?? '', /no response headers/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('an upstream that goes silent mid-stream: SSE clients get an error event in their shape, the capture a finding', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url?.includes('messages'))
      res.write(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"claude-x","content":[],"role":"assistant"}}\n\n',
      );
    else if (req.url?.includes('responses'))
      res.write('event: response.created\ndata: {"type":"response.created","response":{"id":"r","model":"gpt-x"}}\n\n');
    else if (req.url?.includes('silent')) res.flushHeaders();
    else res.write('data: {"id":"c","model":"kimi","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
    // then silence
  });
  const rig = await startRig({ default: up.url, anthropic: up.url, openai: up.url }, {}, { timeouts: { idleMs: 300 } });
  try {
    const chat = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{"model":"kimi","stream":true}' });
    assert.equal(chat.error, undefined, 'ended cleanly');
    const last = chat.body.toString().trim().split('\n\n').at(-1)!;
    assert.match(last, /^data: \{"error":\{"message":"Tokenscope: the upstream sent nothing for 300 ms mid-stream/);
    const anth = await rawRequest(`${rig.proxy.url}/anthropic/v1/messages`, { body: '{"model":"claude-x","stream":true}' });
    assert.match(
      anth.body.toString(),
      /event: error\ndata: \{"type":"error","error":\{"type":"timeout_error","message":"Tokenscope: the upstream sent nothing/,
    );
    const resp = await rawRequest(`${rig.proxy.url}/openai/v1/responses`, { body: '{"model":"gpt-x","stream":true}' });
    assert.match(
      resp.body.toString(),
      /event: error\ndata: \{"type":"error","code":"timeout","message":"Tokenscope: the upstream sent nothing/,
    );

    const silent = await rawRequest(`${rig.proxy.url}/v1/silent/chat/completions`, { body: '{"model":"kimi","stream":true}' });
    assert.match(
      silent.body.toString(),
      /^data: \{"error":\{"message":"Tokenscope: the upstream sent nothing for 300 ms mid-stream, after 0 bytes/,
    );

    await waitFor(() => rig.store.list().length === 4 && rig.store.list().every((x) => x.summary), 'four analysed captures');
    for (const x of rig.store.list()) {
      assert.equal(x.state, 'incomplete');
      assert.match(x.error ?? '', /idle timeout/);
      // The finding says what happened: the upstream went silent and Tokenscope's idle timeout ended the response.
      const f = rig.store
        .readAnalysis(x.id)!
        .analysis.findings.find((y) => y.rule === (x.path.includes('silent') ? 'empty-response' : 'stream-unterminated'));
      assert.ok(f, `${x.path}: ${x.summary!.rules}`);
      assert.equal(f.severity, 'error');
      assert.match(
        f.message,
        /Tokenscope's idle timeout ended the response after 0\.3 s of silence \(a streaming client got an error event in its API's shape; serve --idle-timeout/,
      );
      if (x.path.includes('silent')) continue;
      assert.match(f.message, /^The upstream went silent mid-response after 1 event/);
      assert.ok(x.summary!.rules.includes('stream-unterminated'), `${x.path}: ${x.summary!.rules}`);
      assert.doesNotMatch(
        Buffer.from(rig.store.readResponse(x.id)!.bytes).toString(),
        /Tokenscope:/,
        "the capture keeps the upstream's bytes only",
      );
    }
  } finally {
    await rig.close();
    await up.close();
  }
});

test('an HTTP error answered as text or HTML is reported as the upstream error it is, not as a malformed API body', async () => {
  const page = '<html><head><title>502 Bad Gateway</title></head>\n<body>upstream connect error</body></html>\n';
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(502, { 'content-type': 'text/html' }).end(page);
  });
  const rig = await startRig({ default: up.url });
  try {
    assert.equal(
      (await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{"model":"m"}' })).body.toString(),
      page,
      'the agent gets the bytes as sent',
    );
    await waitFor(() => rig.store.list()[0]?.summary !== undefined, 'the analysed capture');
    const { findings } = rig.store.readAnalysis(rig.store.list()[0].id)!.analysis;
    assert.deepEqual(
      findings.map((f) => f.rule),
      ['upstream-error'],
    );
    assert.equal(findings[0].message, `The upstream answered HTTP 502: ${page.trim()}`);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a client that closes right after the terminal event leaves a complete exchange (Codex after response.completed)', async () => {
  const events: Record<string, string> = {
    responses:
      'event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\nevent: response.completed\ndata: {"type":"response.completed","response":{"id":"r","status":"completed"}}\n\n',
    messages: 'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    chat: 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    cut: 'data: {"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n',
  };
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(events[req.url!.split('/').pop()!]);
    // the body never ends: the client closes
  });
  const rig = await startRig({ default: up.url });
  try {
    for (const name of Object.keys(events)) {
      await new Promise<void>((resolve, reject) => {
        const req = request(`${rig.proxy.url}/v1/${name}`, { method: 'POST', agent: false }, (res) => {
          res.once('data', () => setTimeout(() => (req.destroy(), resolve()), 50));
        });
        req.once('error', (e) => (e.message.includes('socket hang up') ? undefined : reject(e)));
        req.end('{}');
      });
    }
    await waitFor(() => rig.store.list().length === 4 && rig.store.list().every((x) => x.state !== 'streaming'), 'four captures');
    const byPath = Object.fromEntries(rig.store.list().map((x) => [x.path.split('/').pop(), x]));
    for (const name of ['responses', 'messages', 'chat']) {
      assert.equal(byPath[name].state, 'complete', name);
      assert.equal(byPath[name].error, undefined, name);
    }
    assert.equal(byPath.cut.state, 'incomplete');
    assert.match(byPath.cut.error ?? '', /^the client closed the connection after/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('stopping Tokenscope mid-stream records an interruption, not a client that closed', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
  });
  const rig = await startRig({ default: up.url });
  try {
    const pending = rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{}' });
    await waitFor(() => (rig.store.list()[0]?.responseBytes ?? 0) > 0 || rig.store.list()[0]?.status === 200, 'the stream to start');
    await rig.proxy.close();
    await pending;
    const x = rig.store.list()[0];
    assert.equal(x.state, 'incomplete');
    assert.match(x.error ?? '', /^interrupted: Tokenscope stopped while the response was streaming/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a base URL query is kept, and a custom upstream named like a built-in route replaces it', async () => {
  const seen: string[] = [];
  const up = await startUpstream((req, res) => {
    seen.push(req.url!);
    req.resume();
    res.end('{}');
  });
  const rig = await startRig({ custom: { openrouter: `${up.url}/api?k=1`, lab: `${up.url}/lab?k=2` } });
  try {
    assert.equal((await rawRequest(`${rig.proxy.url}/openrouter/v1/models`)).status, 200);
    assert.equal((await rawRequest(`${rig.proxy.url}/u/lab/v1/models?limit=3`)).status, 200);
    assert.deepEqual(seen, ['/api/v1/models?k=1', '/lab/v1/models?limit=3&k=2']);
  } finally {
    await rig.close();
    await up.close();
  }
});

test("sessions follow the agent's own session header; without one, the idle window", async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.end('{}');
  });
  const rig = await startRig({ anthropic: up.url, default: up.url });
  try {
    const send = (path: string, headers: Record<string, string>) =>
      rawRequest(`${rig.proxy.url}${path}`, { body: '{}', headers: { 'user-agent': 'claude-cli/2.1.3 (external, cli)', ...headers } });
    await send('/anthropic/v1/messages', { 'x-claude-code-session-id': 'run-1' });
    await send('/anthropic/v1/messages', { 'x-claude-code-session-id': 'run-2' });
    await send('/anthropic/v1/messages', { 'x-claude-code-session-id': 'run-1' });
    await send('/v1/chat/completions', { 'user-agent': 'curl/8.5' });
    await send('/v1/chat/completions', { 'user-agent': 'curl/8.5' });
    await waitFor(() => rig.store.list().length === 5 && rig.store.list().every((x) => x.state === 'complete'), 'five captures');
    const list = rig.store.list().reverse();
    assert.equal(list[0].sessionId, list[2].sessionId, 'one Claude Code run is one session');
    assert.notEqual(list[0].sessionId, list[1].sessionId, 'two runs are two sessions');
    assert.equal(list[3].sessionId, list[4].sessionId, 'no header: the idle window groups them');
    assert.notEqual(list[3].sessionId, list[0].sessionId);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a 256 MB request body streams through without being held: the proxy grows by far less than the body', async () => {
  let got = 0;
  const up = await startUpstream((req, res) => {
    req.on('data', (c: Buffer) => (got += c.length));
    req.on('end', () => res.end('{}'));
  });
  const rig = await startRig({ default: up.url });
  const MB = 256;
  try {
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    await new Promise<void>((resolve, reject) => {
      const req = request(
        `${rig.proxy.url}/v1/chat/completions`,
        { method: 'POST', agent: false, headers: { 'content-length': String(MB * 1024 * 1024) } },
        (res) => {
          res.resume();
          res.once('end', () => resolve());
        },
      );
      req.once('error', reject);
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < MB) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    clearInterval(sampler);
    assert.equal(got, MB * 1024 * 1024, 'the upstream got all of it');
    const grewMb = (peak - before) / 1024 / 1024;
    assert.ok(grewMb < 120, `the test process (client, proxy and upstream) grew by ${grewMb.toFixed(0)} MB for a ${MB} MB body`);
    await waitFor(() => rig.store.list()[0]?.state === 'complete', 'the capture');
    assert.equal(rig.store.get(rig.store.list()[0].id)!.requestBody, undefined, 'a body over 16 MB is forwarded, not recorded');
  } finally {
    await rig.close();
    await up.close();
  }
});
