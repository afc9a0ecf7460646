// A large request body must not stall other streams (issue #16): recording it (masking keys, writing it, analysing
// the exchange) happens in slices off the forwarding path. The proxy, its upstream and both clients share this
// process, so any stall of the event loop shows as a gap between the chunks of the concurrent stream.
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { containsSecret } from '../../src/core/redact';
import { startRig, startUpstream, waitFor } from '../unit/proxy/local-upstream';

const KEY = 'sk-or-v1-' + 'a1b2c3d4'.repeat(8);

/** A chat request of about `mb` MB whose text is full of key hints (`api_key`, `sk-`), so the full key scan runs on it. */
function bigBody(mb: number): Buffer {
  const line = 'def call(api_key): return client.post(url, headers={"x": api_key}) # sk-not-a-key risk-model\\n';
  const text = line.repeat(Math.floor((mb * 1024 * 1024) / line.length));
  return Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `key ${KEY} then ${text}` }] }));
}

/** Streams the response of `url`, recording the gap before every chunk; resolves when it ends. */
function streamGaps(url: string, onStart: () => void): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res: IncomingMessage) => {
      let last = performance.now();
      const gaps: number[] = [];
      res.on('data', () => {
        const now = performance.now();
        if (gaps.push(now - last) === 5) onStart();
        last = now;
      });
      res.once('end', () => resolve(gaps));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

test('a 15 MB request body full of key hints stalls no concurrent stream (max gap between its chunks)', async (t) => {
  const TICK = 4;
  const up = await startUpstream((req, res) => {
    if (req.url?.includes('stream')) {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const t = setInterval(() => {
        res.write(`data: {"choices":[{"delta":{"content":"t${i}"}}]}\n\n`);
        if (++i === 500) (clearInterval(t), res.end('data: [DONE]\n\n'));
      }, TICK);
      res.once('close', () => clearInterval(t));
      return;
    }
    req.resume();
    req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}'));
  });
  const rig = await startRig({ default: up.url });
  try {
    const body = bigBody(15);
    let bigDone!: Promise<number>;
    let bigAt = 0;
    const gaps = await streamGaps(`${rig.proxy.url}/v1/stream`, () => {
      bigAt = performance.now();
      bigDone = new Promise<number>((resolve, reject) => {
        const req = request(`${rig.proxy.url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } }, (res) => {
          res.resume();
          res.once('end', () => resolve(performance.now() - bigAt));
        });
        req.once('error', reject);
        req.end(body);
      });
    });
    const bigMs = await bigDone;
    await waitFor(() => rig.store.list().every((x) => x.state !== 'streaming'), 'both captures', 20_000);
    await rig.store.idle();
    const big = rig.store.list().find((x) => x.path === '/v1/chat/completions')!;
    const stored = rig.store.get(big.id)!.requestBody ?? '';
    assert.equal(stored.length, body.toString('utf8').length, 'the whole request body is recorded, same length');
    assert.ok(!stored.includes(KEY) && !containsSecret(stored.slice(0, 4096)), 'the key in it is masked');
    assert.ok(stored.includes('[REDACTED:openrouter-key]'));
    // Gaps while the big request is recorded and analysed, against the stream's own gaps once it is all done.
    const during = gaps.slice(5, 5 + Math.ceil(bigMs / TICK) + 100);
    const max = Math.max(...during);
    const after = gaps.slice(5 + Math.ceil(bigMs / TICK) + 100);
    const quiet = after.length > 0 ? Math.max(...after) : NaN;
    t.diagnostic(`max inter-chunk gap ${max.toFixed(1)} ms while the 15 MB request was recorded (${bigMs.toFixed(0)} ms), ${quiet.toFixed(1)} ms after it`);
    // The upstream sends a chunk every 4 ms; the goal is no gap above ~20 ms on an idle machine. The bound leaves room
    // for a busy one (this test shares 2 cores with others): recording the body whole in one go stalled it by 600 ms.
    assert.ok(max < Math.max(300, 2 * quiet), `the concurrent stream stalled for ${max.toFixed(0)} ms (the request took ${bigMs.toFixed(0)} ms; ${quiet.toFixed(0)} ms after it)`);
  } finally {
    await rig.close();
    await up.close();
  }
});
