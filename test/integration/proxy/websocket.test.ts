// WebSocket pass-through (the Responses API's WebSocket mode, as Codex uses it): the upgrade guarded and routed like
// HTTP, frames byte-identical both ways, each response.create captured as one exchange that `show` and `lint` read
// like the same events over SSE, refusals, unreachable and hanging upstreams, dropped sides, and shutdown.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { WebSocket } from 'undici';
import { main } from '../../../src/cli/main';
import { agentRecipe, routeKeyEnv, type TerminalLaunch } from '../../../src/core/agents/recipes';
import { operationName } from '../../../src/core/export/otlp-span';
import { containsSecret } from '../../../src/core/redact';
import { LEAKED_TEXT } from '../../fixtures/agent-upstreams';
import { frame, FixtureReader, responsesEvents, startWsUpstream, type WsUpstream } from '../../fixtures/ws-upstream';
import { runCli } from '../../helpers/agent-cli';
import { repoRoot } from '../../helpers/shared';
import { rawRequest, startRig, startUpstream, tempDir, waitFor, type Rig } from '../../unit/proxy/local-upstream';

const KEY = 'sk-proj-AbCdEfGhIjKlMnOp0123456789';
const MASK = Buffer.from([0xa1, 0xb2, 0xc3, 0xd4]);
const create = (extra: object = {}) =>
  JSON.stringify({ type: 'response.create', model: 'moonshotai/kimi-k2-0905', input: 'read hello.py', stream: true, ...extra });

/** Answers each response.create with the Responses events of `text` (in `deltas`, when given). */
function answering(text: string, deltas?: string[]) {
  return (msg: string, conn: { sendText(t: string): void }) => {
    if (JSON.parse(msg).type !== 'response.create') return;
    for (const e of responsesEvents(text, { deltas })) conn.sendText(JSON.stringify(e));
  };
}

/** An undici WebSocket through the proxy; resolves once open. */
async function openWs(
  rig: Rig,
  path = '/openai/v1/responses',
  headers: Record<string, string> = {},
): Promise<{ ws: WebSocket; messages: string[]; closed: Promise<{ code: number }> }> {
  const ws = new WebSocket(`${rig.proxy.url.replace(/^http/, 'ws')}${path}`, {
    headers: { authorization: `Bearer ${KEY}`, 'user-agent': 'codex_cli_rs/0.150.0', ...headers },
  } as never);
  const messages: string[] = [];
  ws.onmessage = (e) => messages.push(String(e.data));
  const closed = new Promise<{ code: number }>((r) =>
    ws.addEventListener('close', (e) => r({ code: (e as unknown as { code: number }).code })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('the WebSocket did not open'));
  });
  return { ws, messages, closed };
}

/** A hand-written WebSocket client on a raw socket: every byte it receives after the proxy's 101 head is kept. */
async function rawClient(
  rig: Rig,
  path = '/openai/v1/responses',
  extraHead = '',
): Promise<{ socket: Socket; head: string; after: () => Buffer; closed: Promise<void> }> {
  const socket = connect(rig.proxy.port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${rig.proxy.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${KEY}\r\n${extraHead}\r\n`,
  );
  let all = Buffer.alloc(0);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.on('data', (d: Buffer) => (all = Buffer.concat([all, d])));
  await waitFor(() => all.includes('\r\n\r\n'), 'the response head');
  const end = all.indexOf('\r\n\r\n') + 4;
  return { socket, head: all.subarray(0, end).toString('latin1'), after: () => all.subarray(end), closed };
}

async function withWs(
  behaviour: Parameters<typeof startWsUpstream>[0],
  run: (rig: Rig, up: WsUpstream) => Promise<void>,
  proxyOpts = {},
): Promise<void> {
  const up = await startWsUpstream(behaviour);
  const rig = await startRig({ openai: up.url }, {}, proxyOpts);
  try {
    await run(rig, up);
  } finally {
    await rig.close();
    await up.close();
  }
}

const finished = (rig: Rig, n: number) =>
  waitFor(() => rig.store.list().length >= n && rig.store.list().every((x) => x.state !== 'streaming'), `${n} finished exchange(s)`);
const body = (rig: Rig, id: string) => Buffer.from(rig.store.readResponse(id)!.bytes).toString('utf8');

test('a Responses WebSocket passes through: messages both ways, the key forwarded but not recorded, one exchange per response.create', async () => {
  await withWs({ onText: answering('Hello there.') }, async (rig, up) => {
    const { ws, messages } = await openWs(rig);
    ws.send(create());
    await waitFor(() => messages.length === 9, 'the first response');
    ws.send(create({ input: 'again' }));
    await waitFor(() => messages.length === 18, 'the second response');
    assert.deepEqual(messages.map((m) => JSON.parse(m).type).slice(-1), ['response.completed']);
    ws.close(1000);
    await finished(rig, 2);
    await rig.store.idle();

    const seen = up.requests[0];
    assert.equal(seen.url, '/v1/responses');
    assert.equal(seen.headers.authorization, `Bearer ${KEY}`, 'the agent key reaches the upstream');
    assert.equal(seen.headers.upgrade, 'websocket');
    assert.equal(seen.headers['sec-websocket-extensions'], undefined, 'compression is not offered upstream');
    assert.equal(seen.headers.host, new URL(up.url).host);
    assert.deepEqual(up.conns[0].messages, [create(), create({ input: 'again' })]);

    const xs = rig.store
      .list()
      .slice()
      .sort((a, b) => a.websocket!.response - b.websocket!.response);
    assert.equal(xs.length, 2, 'one exchange per response.create, none for the close');
    for (const [i, listed] of xs.entries()) {
      const x = rig.store.get(listed.id)!;
      assert.equal(x.state, 'complete');
      assert.equal(x.status, 101);
      assert.equal(x.method, 'GET');
      assert.equal(x.path, '/openai/v1/responses');
      assert.equal(x.agent, 'codex');
      assert.equal(x.requestModel, 'moonshotai/kimi-k2-0905');
      assert.deepEqual(x.websocket, { connection: xs[0].websocket!.connection, response: i + 1 });
      assert.equal(x.requestBody, i === 0 ? create() : create({ input: 'again' }));
      assert.ok(!JSON.stringify(x).includes(KEY), 'the key is not in the capture');
      assert.equal(x.responseHeaders?.['x-upstream'], 'ws-fixture');
      const events = body(rig, x.id);
      assert.ok(events.startsWith('event: response.created\ndata: {"type":"response.created"'), events.slice(0, 80));
      assert.equal((events.match(/^event: /gm) ?? []).length, 9);
      assert.equal(x.summary?.protocol, 'openai-responses');
      assert.equal(operationName(x), 'chat', 'an inference span for OpenTelemetry, as for a POST');
    }
  });
});

test('frames pass byte for byte both ways: fragmented, 16-bit and 64-bit lengths, pings; the capture joins the messages', async () => {
  const big = 'z'.repeat(100_000); // a 64-bit length
  const mid = 'm'.repeat(1000); // a 16-bit length
  await withWs(
    {
      onText: (msg, conn) => {
        if (JSON.parse(msg).type !== 'response.create') return;
        const evs = responsesEvents(`a${big}b${mid}`, { deltas: ['a', big, `b${mid}`] }).map((e) => JSON.stringify(e));
        const frames = evs.map((e) => frame(1, e));
        // The first delta fragmented in three, with a ping between fragments.
        const delta = evs[4];
        frames[4] = Buffer.concat([
          frame(1, delta.slice(0, 10), { fin: false }),
          frame(9, 'keepalive'),
          frame(0, delta.slice(10, 30), { fin: false }),
          frame(0, delta.slice(30)),
        ]);
        // Sent in odd pieces, as TCP may deliver them.
        const all = Buffer.concat(frames);
        for (let at = 0; at < all.length; at += 7919) conn.send(all.subarray(at, at + 7919));
      },
    },
    async (rig, up) => {
      const c = await rawClient(rig);
      assert.match(c.head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
      assert.match(c.head, /\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/);
      // Client frames: the request fragmented with a ping between, and a large masked message with a 64-bit length.
      const req = create({ input: big });
      const sent = Buffer.concat([
        frame(1, req.slice(0, 50), { fin: false, mask: MASK }),
        frame(9, 'p', { mask: MASK }),
        frame(0, req.slice(50), { mask: MASK }),
      ]);
      for (let at = 0; at < sent.length; at += 4099) c.socket.write(sent.subarray(at, at + 4099));
      const upSent = () => Buffer.concat(up.conns[0]?.sent ?? []);
      await waitFor(
        () => up.conns[0] !== undefined && upSent().length > 100_000 && c.after().length === upSent().length,
        'every server byte at the client',
      );
      assert.ok(c.after().equals(upSent()), 'the client got the upstream frames byte for byte');
      await waitFor(() => Buffer.concat(up.conns[0].received).length === sent.length, 'every client byte at the upstream');
      assert.ok(Buffer.concat(up.conns[0].received).equals(sent), 'the upstream got the client frames byte for byte (masks kept)');
      assert.deepEqual(up.conns[0].messages, [req]);
      // And the client side reads them as the messages the upstream meant.
      const types = new FixtureReader().push(c.after()).map((m) => (m.opcode === 1 ? JSON.parse(m.data.toString()).type : `op${m.opcode}`));
      assert.deepEqual(types.slice(0, 6), [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'op9',
        'response.output_text.delta',
      ]);

      c.socket.end(frame(8, Buffer.from([0x03, 0xe8]), { mask: MASK }));
      await c.closed;
      await finished(rig, 1);
      const x = rig.store.get(rig.store.list()[0].id)!;
      assert.equal(x.state, 'complete');
      assert.equal(x.requestBody, req, 'the fragmented request joined');
      const events = body(rig, x.id);
      assert.ok(events.includes(`"delta":"${big}"`), 'the 64-bit-length message whole');
      assert.ok(events.includes(`"delta":"b${mid}"`));
      assert.ok(events.includes('"delta":"a"'), 'the fragmented message joined');
      assert.match(events, /: server ping \(9 bytes\)\n\n/, 'a ping within the response is kept with it');
      assert.doesNotMatch(events, /client ping/, 'one before the response began is connection upkeep');
      assert.equal(rig.store.list().length, 1, 'and opens no exchange of its own');
      await rig.store.idle();
      assert.equal(rig.store.get(x.id)!.summary?.protocol, 'openai-responses');
    },
  );
});

test('show and lint find the same on a leaky Kimi K2 answer over WebSocket as over SSE', async () => {
  // The same events, over SSE from an HTTP upstream, through the same proxy.
  const deltas = [LEAKED_TEXT.slice(0, 40), LEAKED_TEXT.slice(40)];
  const evs = responsesEvents(LEAKED_TEXT, { deltas });
  const sseUp = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const e of evs) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    res.end();
  });
  const wsUp = await startWsUpstream({ onText: answering(LEAKED_TEXT, deltas) });
  const rig = await startRig({ openai: wsUp.url, custom: { sse: sseUp.url } });
  try {
    const requestBody = create();
    const { ws, messages } = await openWs(rig);
    ws.send(requestBody);
    await waitFor(() => messages.length === evs.length, 'the WebSocket response');
    ws.close();
    const httpBody = JSON.stringify(JSON.parse(requestBody), (k, v) => (k === 'type' && v === 'response.create' ? undefined : v));
    const sse = await rawRequest(`${rig.proxy.url}/u/sse/v1/responses`, {
      body: httpBody,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    });
    assert.equal(sse.status, 200);
    await finished(rig, 2);
    await rig.store.idle();
    const wsX = rig.store.list().find((x) => x.websocket)!;
    const sseX = rig.store.list().find((x) => !x.websocket)!;
    assert.equal(body(rig, wsX.id), body(rig, sseX.id), 'the stored events are the SSE stream itself');

    const cli = async (args: string[]) => {
      let out = '';
      let err = '';
      const code = await main([...args, '--data-dir', rig.dataDir], { out: (t) => (out += t), err: (t) => (err += t) });
      return { code, out, err };
    };
    const lintWs = await cli(['lint', wsX.id, '--json']);
    const lintSse = await cli(['lint', sseX.id, '--json']);
    assert.equal(lintWs.code, 1, lintWs.err);
    assert.equal(lintSse.code, 1, lintSse.err);
    const findings = (out: string) =>
      (JSON.parse(out) as { findings: { rule: string; severity: string; message: string }[] }).findings.map((f) => ({
        rule: f.rule,
        severity: f.severity,
        message: f.message,
      }));
    assert.ok(
      findings(lintWs.out).some((f) => f.severity === 'error'),
      lintWs.out,
    );
    assert.deepEqual(findings(lintWs.out), findings(lintSse.out));
    const showWs = await cli(['show', wsX.id, '--json']);
    const showSse = await cli(['show', sseX.id, '--json']);
    assert.equal(showWs.code, showSse.code);
    const parse = (out: string) => (JSON.parse(out) as { parse: unknown }).parse;
    assert.deepEqual(parse(showWs.out), parse(showSse.out));
    const text = await cli(['show', wsX.id]);
    assert.match(text.out, /tool-call|leak|Kimi/i);
  } finally {
    await rig.close();
    await wsUp.close();
    await sseUp.close();
  }
});

test('a key the model streams in pieces over WebSocket messages is masked in the capture', async () => {
  const text = `Your key is ${KEY}.`;
  const deltas = [text.slice(0, 16), text.slice(16, 24), text.slice(24)];
  await withWs({ onText: answering(text, deltas) }, async (rig) => {
    const { ws, messages } = await openWs(rig);
    ws.send(create({ input: `my key is ${KEY}` }));
    await waitFor(() => messages.length === 11, 'the response');
    assert.ok(messages.join('').includes(KEY.slice(0, 12)), 'the client gets the bytes as sent');
    ws.close();
    await finished(rig, 1);
    await rig.store.idle();
    const x = rig.store.get(rig.store.list()[0].id)!;
    const stored = body(rig, x.id);
    const joined = stored
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)))
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    assert.equal(joined.length, text.length);
    assert.ok(!containsSecret(joined), joined);
    assert.ok(!stored.includes(KEY) && !containsSecret(stored), 'no whole key anywhere in the stored events');
    assert.ok(!x.requestBody!.includes(KEY), 'nor in the request message');
    assert.ok(x.masked && x.masked.splitKeys >= 1, JSON.stringify(x.masked));
  });
});

test('an upstream that refuses the upgrade: its status and body reach the client and the capture', async () => {
  const refusal = '{"error":{"message":"websockets are not enabled for this key","type":"invalid_request_error"}}';
  await withWs(
    { refuse: { status: 403, headers: { 'content-type': 'application/json', 'x-upstream': 'no' }, body: refusal } },
    async (rig) => {
      const c = await rawClient(rig);
      await c.closed;
      assert.match(c.head, /^HTTP\/1\.1 403 /);
      assert.match(c.head, /\r\nx-upstream: no\r\n/);
      assert.equal(c.after().toString(), refusal);
      await finished(rig, 1);
      const x = rig.store.get(rig.store.list()[0].id)!;
      assert.equal(x.status, 403);
      assert.equal(body(rig, x.id), refusal);
      assert.equal(x.websocket, undefined);
      assert.ok(!JSON.stringify(x).includes(KEY));
    },
  );
});

test('an unreachable upstream gets a 502, a silent one a 504, each captured', async () => {
  const dead = await startUpstream(() => undefined);
  const deadUrl = dead.url;
  await dead.close();
  const rig = await startRig({ openai: deadUrl }, {}, { timeouts: { upstreamHeadersMs: 300 } });
  const hanging = await startWsUpstream({ hang: true });
  const rig2 = await startRig({ openai: hanging.url }, {}, { timeouts: { upstreamHeadersMs: 300 } });
  try {
    const c = await rawClient(rig);
    await c.closed;
    assert.match(c.head, /^HTTP\/1\.1 502 /);
    assert.match(JSON.parse(c.after().toString()).error.message, /could not reach the upstream/);
    await finished(rig, 1);
    assert.equal(rig.store.list()[0].status, 502);
    assert.equal(rig.store.list()[0].state, 'error');

    const t0 = Date.now();
    const h = await rawClient(rig2);
    await h.closed;
    assert.match(h.head, /^HTTP\/1\.1 504 /);
    assert.match(JSON.parse(h.after().toString()).error.message, /sent no response headers within 300 ms/);
    assert.ok(Date.now() - t0 < 10_000);
    await finished(rig2, 1);
    assert.equal(rig2.store.list()[0].status, 504);
  } finally {
    await rig.close();
    await rig2.close();
    await hanging.close();
  }
});

test('the upstream dropping mid-response closes the client; the exchange is finished incomplete', async () => {
  await withWs(
    {
      onText: (_msg, conn) => {
        const evs = responsesEvents('cut short', { deltas: ['cut', ' short'] }).slice(0, 5);
        for (const e of evs) conn.sendText(JSON.stringify(e));
        setTimeout(() => conn.socket.destroy(), 50);
      },
    },
    async (rig) => {
      const { ws, messages, closed } = await openWs(rig);
      ws.send(create());
      const { code } = await closed;
      assert.equal(code, 1006, 'closed abnormally, as the upstream left');
      assert.equal(messages.length, 5);
      await finished(rig, 1);
      const x = rig.store.get(rig.store.list()[0].id)!;
      assert.equal(x.state, 'incomplete');
      assert.match(x.error!, /^the upstream closed the connection before the response ended/);
      assert.equal((body(rig, x.id).match(/^event: /gm) ?? []).length, 5);
    },
  );
});

test('the client dropping mid-response closes the upstream; the exchange is finished incomplete (cut by the client)', async () => {
  await withWs(
    {
      onText: (_msg, conn) => {
        for (const e of responsesEvents('never ends').slice(0, 3)) conn.sendText(JSON.stringify(e));
      },
    },
    async (rig, up) => {
      const c = await rawClient(rig);
      c.socket.write(frame(1, create(), { mask: MASK }));
      await waitFor(() => c.after().length > 0 && new FixtureReader().push(c.after()).length === 3, 'three events');
      c.socket.destroy();
      await waitFor(() => up.conns[0].socket.readableEnded || up.conns[0].socket.destroyed, 'the upstream socket closed');
      await finished(rig, 1);
      const x = rig.store.get(rig.store.list()[0].id)!;
      assert.equal(x.state, 'incomplete');
      assert.match(x.error!, /^the client closed the connection/);
      await rig.store.idle();
      assert.equal(x.requestBody, create());
    },
  );
});

test('a foreign Origin or Host is refused before any upstream is reached; a bad route gets 404', async () => {
  await withWs({ onText: answering('x') }, async (rig, up) => {
    const evil = await rawClient(rig, '/openai/v1/responses', 'Origin: https://evil.example\r\n');
    await evil.closed;
    assert.match(evil.head, /^HTTP\/1\.1 403 /);
    assert.match(JSON.parse(evil.after().toString()).error.message, /Origin "https:\/\/evil.example" is not allowed/);
    const rebound = connect(rig.proxy.port, '127.0.0.1');
    let text = '';
    rebound.on('data', (d) => (text += d));
    rebound.write(
      'GET /openai/v1/responses HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await new Promise((r) => rebound.once('close', r));
    assert.match(text, /^HTTP\/1\.1 403 [\s\S]*not a loopback name/);
    const noRoute = await rawClient(rig, '/nowhere');
    await noRoute.closed;
    assert.match(noRoute.head, /^HTTP\/1\.1 404 /);
    const local = await rawClient(rig, '/openai/v1/responses', 'Origin: http://localhost:3000\r\n');
    assert.match(local.head, /^HTTP\/1\.1 101 /);
    local.socket.destroy();
    await local.closed;
    assert.equal(up.requests.length, 1, 'only the loopback origin reached the upstream');
  });
});

test('a connection open when Tokenscope stops is closed and its response recorded as interrupted', async () => {
  const up = await startWsUpstream({ onText: (_m, conn) => conn.sendText(JSON.stringify(responsesEvents('x')[0])) });
  const rig = await startRig({ openai: up.url });
  try {
    const { ws, messages, closed } = await openWs(rig);
    ws.send(create());
    await waitFor(() => messages.length === 1, 'the first event');
    await waitFor(() => rig.store.list().length === 1, 'the exchange begun');
    const id = rig.store.list()[0].id;
    await rig.proxy.close();
    await closed;
    const x = rig.store.get(id)!;
    assert.equal(x.state, 'incomplete');
    assert.match(x.error!, /^interrupted: Tokenscope stopped/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('an Upgrade other than WebSocket (h2c) is answered as the plain request it also is', async () => {
  const up = await startUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ upgrade: req.headers.upgrade ?? null, path: req.url }));
  });
  const rig = await startRig({ default: up.url });
  try {
    const res = await rawRequest(`${rig.proxy.url}/v1/models`, {
      headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAAQCAAAAAAIAAAAA' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body.toString()), { upgrade: null, path: '/v1/models' });
  } finally {
    await rig.close();
    await up.close();
  }
});

test('an https upstream is reached as wss://: the same pass-through over TLS', async (t) => {
  const dir = tempDir();
  try {
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          join(dir.dir, 'key.pem'),
          '-out',
          join(dir.dir, 'cert.pem'),
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
        ],
        { stdio: 'ignore', timeout: 20_000 },
      );
    } catch {
      t.skip('skipped: openssl is not available to make a test certificate');
      return;
    }
    const tls = { key: readFileSync(join(dir.dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir.dir, 'cert.pem'), 'utf8') };
    // The test's own certificate is not trusted by the proxy's TLS: verification is off for this test only.
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    const warn = process.emitWarning;
    process.emitWarning = () => undefined;
    try {
      await withWs({ tls, onText: answering('over TLS') }, async (rig, up) => {
        assert.match(up.url, /^https:/);
        const { ws, messages } = await openWs(rig);
        ws.send(create());
        await waitFor(() => messages.length === 9, 'the response over TLS');
        ws.close();
        await finished(rig, 1);
        assert.equal(up.conns[0].socket.constructor.name, 'TLSSocket', 'the upstream leg is TLS');
        const x = rig.store.get(rig.store.list()[0].id)!;
        assert.equal(x.state, 'complete');
        assert.equal(x.upstreamUrl, `${up.url}/v1/responses`);
      });
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
      process.emitWarning = warn;
    }
  } finally {
    dir.remove();
  }
});

test('the real Codex CLI over WebSocket (supports_websockets) through /openai: answered, captured as WebSocket exchanges, flagged', async (t) => {
  const bin = join(repoRoot, 'node_modules', '.bin', 'codex');
  if (!existsSync(bin)) return void t.skip('skipped: @openai/codex (npm devDependency) is not installed for this platform');
  const creates: Record<string, unknown>[] = [];
  const up = await startWsUpstream({
    onText: (msg, conn) => {
      const m = JSON.parse(msg);
      if (m.type !== 'response.create') return;
      creates.push(m);
      for (const e of responsesEvents(LEAKED_TEXT, { model: 'gpt-5' })) conn.sendText(JSON.stringify(e));
    },
  });
  const rig = await startRig({ openai: up.url });
  const home = tempDir('tokenscope-codex-ws-');
  try {
    const launch = agentRecipe('codex', { proxyUrl: rig.proxy.url, route: 'openai', model: 'gpt-5' }).launch as TerminalLaunch;
    writeFileSync(
      join(home.dir, 'config.toml'),
      [
        'approval_policy = "never"',
        'sandbox_mode = "workspace-write"',
        'check_for_update_on_startup = false',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n'),
    );
    const args = [
      'exec',
      '--skip-git-repo-check',
      ...launch.args,
      '-c',
      'model_providers.tokenscope.supports_websockets=true',
      '--enable',
      'responses_websockets',
      'Create a file named hello.py',
    ];
    const r = await runCli(
      bin,
      args,
      { PATH: process.env.PATH ?? '', HOME: home.dir, ...launch.env, [routeKeyEnv('openai')]: KEY, CODEX_HOME: home.dir },
      home.dir,
    );
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.ok(r.out.includes(LEAKED_TEXT), 'Codex printed the answer it got over the WebSocket');
    assert.ok(up.conns.length >= 1 && creates.length >= 1, 'Codex spoke WebSocket to the upstream through the proxy');
    assert.equal(up.requests[0].headers.authorization, `Bearer ${KEY}`);
    await finished(rig, creates.length);
    await rig.store.idle();
    const xs = rig.store.list();
    assert.equal(xs.length, creates.length, 'one capture per response.create');
    for (const listed of xs) {
      const x = rig.store.get(listed.id)!;
      assert.ok(x.websocket, 'a WebSocket exchange');
      assert.equal(x.agent, 'codex');
      assert.equal(x.state, 'complete');
      assert.ok(x.summary?.rules?.includes('markup-in-content'), JSON.stringify(x.summary));
      assert.ok(!JSON.stringify(x).includes(KEY), 'the key is not in the capture');
    }
  } finally {
    await rig.close();
    await up.close();
    home.remove();
  }
});
