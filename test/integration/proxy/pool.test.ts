/**
 * Many exchanges to one upstream at once: each gets a connection of its own (no silent cap at 64), a slow request
 * body holds none another exchange needs, and when a configured limit is reached the wait counts in the upstream
 * timeout and the capture records it.
 */
import assert from 'node:assert/strict';
import { request, type ClientRequest } from 'node:http';
import { test } from 'node:test';
import { rawRequest, startRig, startUpstream, waitFor } from '../../unit/proxy/local-upstream';

const EVENT = 'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n';

/** Time to the first body byte of a GET, ms; resolves once the whole body arrived. */
function firstByte(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let first = -1;
    const req = request(url, { agent: false }, (res) => {
      res.on('data', () => {
        if (first < 0) first = performance.now() - start;
      });
      res.once('end', () => resolve(first));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.9) - 1];

test('80 concurrent streams all get their first byte at once: the 65th does not wait for a stream to end', {
  timeout: 60_000,
}, async () => {
  const STREAMS = 80;
  const HOLD_MS = 1500;
  // Each stream sends its first event at once, then holds the connection open for HOLD_MS.
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(EVENT);
    const t = setTimeout(() => res.end('data: [DONE]\n\n'), req.url?.includes('warm') ? 0 : HOLD_MS);
    res.once('close', () => clearTimeout(t));
  });
  const rig = await startRig({ default: up.url });
  try {
    // A proxy in use is warm (its code optimised, connections open): one round of short requests first.
    await Promise.all(Array.from({ length: STREAMS }, () => firstByte(`${rig.proxy.url}/v1/warm`)));
    await Promise.all(Array.from({ length: STREAMS }, () => firstByte(`${up.url}/v1/warm`)));
    const direct = await Promise.all(Array.from({ length: STREAMS }, () => firstByte(`${up.url}/v1/stream`)));
    const proxied = await Promise.all(Array.from({ length: STREAMS }, () => firstByte(`${rig.proxy.url}/v1/stream`)));
    const added = p90(proxied) - p90(direct);
    assert.ok(
      added < 500,
      `first byte p90: ${p90(proxied).toFixed(0)} ms through the proxy, ${p90(direct).toFixed(0)} ms direct (max ${Math.max(...proxied).toFixed(0)} ms)`,
    );
    await waitFor(() => rig.store.list().filter((x) => x.state === 'complete').length === 2 * STREAMS, 'every capture');
    assert.ok(
      rig.store.list().every((x) => x.queuedMs === undefined),
      'no exchange waited for a connection',
    );
  } finally {
    await rig.close();
    await up.close();
  }
});

test('slow request bodies hold no connection another request needs', { timeout: 60_000 }, async () => {
  const STALLED = 70;
  const up = await startUpstream((req, res) => {
    req.resume();
    req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  const rig = await startRig({ default: up.url });
  const stalled: ClientRequest[] = [];
  try {
    // Each sends its headers and one byte of a 1,000-byte body, then nothing.
    for (let i = 0; i < STALLED; i++) {
      const req = request(`${rig.proxy.url}/v1/chat/completions`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': '1000' },
      });
      req.on('error', () => undefined);
      req.write('{');
      stalled.push(req);
    }
    await waitFor(() => up.sockets.length >= Math.min(STALLED, 64), 'the stalled uploads reach the upstream', 20_000);
    const start = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const res = await Promise.race([
      rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{"model":"m"}', headers: { 'content-type': 'application/json' } }),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in 10 s beside ${STALLED} stalled uploads`)), 10_000)),
      ),
    ]).finally(() => clearTimeout(timer));
    const ms = performance.now() - start;
    assert.equal(res.status, 200);
    assert.ok(ms < 3000, `answered after ${ms.toFixed(0)} ms beside ${STALLED} stalled uploads`);
  } finally {
    for (const r of stalled) r.destroy();
    await rig.close();
    await up.close();
  }
});

test('at the configured limit, the wait for a connection counts in --upstream-timeout and the capture says so', {
  timeout: 30_000,
}, async () => {
  let streams = 0;
  const up = await startUpstream((req, res) => {
    req.resume();
    streams++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(EVENT);
    // The first stream holds its connection for 3 s; later ones end at once.
    const t = setTimeout(() => res.end('data: [DONE]\n\n'), req.url?.includes('long') ? 3000 : 0);
    res.once('close', () => clearTimeout(t));
  });
  const rig = await startRig({ default: up.url }, {}, { upstreamConnections: 1, timeouts: { upstreamHeadersMs: 400 } });
  try {
    const long = firstByte(`${rig.proxy.url}/v1/long`);
    await waitFor(() => streams === 1, 'the long stream');
    const start = performance.now();
    const waited = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, {
      body: '{"model":"m"}',
      headers: { 'content-type': 'application/json' },
    });
    const ms = performance.now() - start;
    assert.equal(waited.status, 504);
    assert.match(
      JSON.parse(waited.body.toString()).error.message,
      /no connection to the upstream http:\/\/127\.0\.0\.1:\d+ came free within 400 ms: all 1 were in use/,
    );
    assert.ok(ms >= 350 && ms < 2500, `answered after ${ms.toFixed(0)} ms (timeout 400 ms; the stream holding the connection lasts 3 s)`);
    assert.equal(streams, 1, 'the request never went upstream');
    await waitFor(() => rig.store.list().some((x) => x.status === 504), 'its capture');
    const x = rig.store.list().find((e) => e.status === 504)!;
    assert.ok(x.queuedMs! >= 350, `queuedMs ${x.queuedMs}`);
    assert.match(x.error!, /came free within 400 ms/);
    assert.deepEqual(x.requestNotKept, { bytes: 13, why: 'it never went upstream' });
    await long;
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a wait that ends in time is recorded, and the exchange goes on', { timeout: 30_000 }, async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(EVENT);
    const t = setTimeout(() => res.end('data: [DONE]\n\n'), req.url?.includes('long') ? 600 : 0);
    res.once('close', () => clearTimeout(t));
  });
  const rig = await startRig({ default: up.url }, {}, { upstreamConnections: 1, timeouts: { upstreamHeadersMs: 5000 } });
  try {
    const long = firstByte(`${rig.proxy.url}/v1/long`);
    await waitFor(() => rig.store.list().length === 1, 'the long stream');
    const next = await rawRequest(`${rig.proxy.url}/v1/next`);
    assert.equal(next.status, 200);
    await long;
    await waitFor(() => rig.store.list().filter((x) => x.state === 'complete').length === 2, 'both captures');
    const x = rig.store.list().find((e) => e.path === '/v1/next')!;
    assert.ok(x.queuedMs !== undefined && x.queuedMs >= 200, `queuedMs ${x.queuedMs}`);
    assert.equal(rig.store.list().find((e) => e.path === '/v1/long')!.queuedMs, undefined);
  } finally {
    await rig.close();
    await up.close();
  }
});
