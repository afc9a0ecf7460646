/**
 * Bodies through the proxy: a 100 MB response and request pass byte-identical, gzip reaches the client as sent, and a
 * key the upstream echoes reaches the client as sent while the capture masks it. (The randomized responses are in
 * ./transparency.test.ts.)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { request, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { containsSecret } from '../../../src/core/redact';
import { rawRequest, startRig, startUpstream, waitFor } from '../../unit/proxy/local-upstream';

const sse = (n: number) => Array.from({ length: n }, (_, i) => `data: {"i":${i}}\n\n`);

/** Writes `body` in pieces of `size` bytes, one per turn of the loop, then ends the response. */
function writeInPieces(res: ServerResponse, body: Buffer, size: number): void {
  let off = 0;
  const step = () => {
    if (off >= body.length) return void res.end();
    res.write(body.subarray(off, (off += size)));
    setImmediate(step);
  };
  step();
}

test('a 100 MB response and a 100 MB request body pass byte-identical; the capture keeps all of it', async () => {
  const MB = 1024 * 1024;
  const block = Buffer.alloc(MB);
  for (let i = 0; i < MB; i++) block[i] = (i * 31 + 7) & 0xff;
  const want = createHash('sha256');
  for (let i = 0; i < 100; i++) want.update(block);
  const wantHash = want.digest('hex');
  let uploadHash = '';
  const up = await startUpstream((req, res) => {
    const h = createHash('sha256');
    req.on('data', (c) => h.update(c));
    req.on('end', () => {
      uploadHash = h.digest('hex');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(100 * MB) });
      let i = 0;
      const pump = () => {
        while (i < 100) {
          i++;
          if (!res.write(block)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
  });
  // The store's per-body cap (64 MiB by default) is raised for this body: the capture keeps all of it.
  const rig = await startRig({ default: up.url }, { maxBodyBytes: 128 * MB });
  try {
    const got = createHash('sha256');
    let size = 0;
    await new Promise<void>((resolve, reject) => {
      const req = request(`${rig.proxy.url}/v1/files`, { method: 'POST', agent: false }, (res) => {
        res.on('data', (c: Buffer) => {
          size += c.length;
          got.update(c);
        });
        res.once('end', resolve);
      });
      req.once('error', reject);
      for (let i = 0; i < 100; i++) req.write(block);
      req.end();
    });
    assert.equal(size, 100 * MB);
    assert.equal(got.digest('hex'), wantHash);
    assert.equal(uploadHash, wantHash, 'the upload reached the upstream intact');
    await waitFor(() => rig.store.list()[0]?.state === 'complete', 'capture', 20_000);
    const x = rig.store.get(rig.store.list()[0].id)!;
    assert.equal(x.responseBytes, 100 * MB);
    assert.equal(x.requestBody, undefined, 'a body over the 64 MiB recording cap is forwarded, not recorded');
    assert.deepEqual(
      x.requestNotKept,
      { bytes: 100 * MB, why: 'it is over the 64 MB Tokenscope records of a request body' },
      'and the capture says so',
    );
    assert.equal(createHash('sha256').update(rig.store.readResponse(x.id)!.bytes).digest('hex'), wantHash);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a gzip response reaches the client compressed as sent; the capture keeps it decoded', async () => {
  const text = sse(200).join('') + 'data: [DONE]\n\n';
  const gz = gzipSync(text);
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
    writeInPieces(res, gz, 97); // split at odd places: the proxy must not care where compressed frames end
  });
  const rig = await startRig({ default: up.url });
  try {
    const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{}', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.ok(res.body.equals(gz), 'compressed bytes pass as they are');
    await waitFor(() => rig.store.list()[0]?.state === 'complete', 'capture');
    assert.equal(Buffer.from(rig.store.readResponse(rig.store.list()[0].id)!.bytes).toString(), text);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a key echoed in a response reaches the client as sent; the capture masks it to the same length, gzip too', async () => {
  const key = 'sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
  const text = sse(20).join('') + `data: {"choices":[{"delta":{"content":"your key ${key} is set"}}]}\n\n` + 'data: [DONE]\n\n';
  const up = await startUpstream((req, res) => {
    const gzip = req.url!.includes('gzip');
    const body = gzip ? gzipSync(text) : Buffer.from(text);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', ...(gzip && { 'content-encoding': 'gzip' }) });
    writeInPieces(res, body, 13); // small pieces, so the key is cut by chunk boundaries on the way
  });
  const rig = await startRig({ default: up.url });
  try {
    for (const path of ['/v1/chat/completions', '/v1/chat/completions?gzip']) {
      const res = await rawRequest(`${rig.proxy.url}${path}`, { body: '{}', headers: { 'accept-encoding': 'gzip' } });
      const got = path.includes('gzip') ? gunzipSync(res.body).toString() : res.body.toString();
      assert.equal(got, text, 'the client gets the key as the upstream sent it');
      await waitFor(() => rig.store.list().length > 0 && rig.store.list()[0].state === 'complete', 'capture');
      const x = rig.store.list()[0];
      const stored = rig.store.readResponse(x.id)!;
      const body = Buffer.from(stored.bytes).toString();
      assert.equal(stored.bytes.length, Buffer.byteLength(text), 'same length');
      assert.equal(
        stored.chunks.reduce((n, c) => n + c.length, 0),
        stored.bytes.length,
      );
      assert.ok(!body.includes(key.slice(10)) && !containsSecret(body), `${path}: the key is stored`);
      assert.equal(body, text.replace(key, '[REDACTED:openrouter-key]'.padEnd(key.length, '*')));
      for (const ev of body.split('\n\n').filter((e) => e.startsWith('data: {'))) JSON.parse(ev.slice(6));
      for (const f of readdirSync(join(rig.dataDir, 'bodies')))
        assert.ok(!readFileSync(join(rig.dataDir, 'bodies', f), 'latin1').includes(key.slice(10)), `${f} holds the key`);
    }
  } finally {
    await rig.close();
    await up.close();
  }
});
