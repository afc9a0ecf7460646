/**
 * What an adversarial upstream or client can send through the proxy, end to end: a body mislabelled as gzip, a gzip
 * bomb, response headers over 16 KB, a request body too large to record, an encoded `..%2f` in the path, a key written
 * with `\u` escapes, secret-named fields echoed in a response. Each reaches the client as it should, and the capture
 * (its files on disk, `show --json`, the exports) says what happened without holding a secret.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { main } from '../../../src/cli/main';
import { exportCaptures } from '../../../src/core/export/index';
import { rawRequest, startRig, startUpstream, waitFor, type Rig } from '../../unit/proxy/local-upstream';

const SSE = 'data: {"choices":[{"index":0,"delta":{"content":"Hello."},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

/** Every file the store wrote, as latin1 text (the proxy and the store closed first). */
async function storedBytes(rig: Rig): Promise<string> {
  await rig.proxy.close();
  await rig.store.close();
  return readdirSync(rig.dataDir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => readFileSync(join(d.parentPath, d.name)).toString('latin1'))
    .join('\n');
}

async function settled(rig: Rig, n = 1): Promise<void> {
  await waitFor(() => rig.store.list().length >= n && rig.store.list().every((x) => x.state !== 'streaming'), 'the captures');
  await rig.store.idle();
}

test('a body labelled gzip that is not gzip: the client gets it as sent, the capture keeps its bytes and says the label is wrong', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }).end(SSE);
  });
  const rig = await startRig({ default: up.url });
  try {
    const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, {
      body: '{"model":"m","stream":true}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.body.toString(), SSE);
    await settled(rig);
    const x = rig.store.list()[0];
    assert.equal(Buffer.from(rig.store.readResponse(x.id)!.bytes).toString(), SSE, 'the capture holds the bytes as received, not 0 bytes');
    assert.equal(x.responseBytes, SSE.length);
    assert.match(x.error!, /labelled Content-Encoding: gzip but is not gzip .*keeps its \d+ bytes as received/);
    const rules = rig.store.readAnalysis(x.id)!.analysis.findings.map((f) => f.rule);
    assert.ok(!rules.includes('empty-response'), `no "body is empty" finding: ${rules.join(', ')}`);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a gzip bomb is decoded only up to the cap, with little CPU, and the capture says it is not analysed', {
  timeout: 60_000,
}, async () => {
  // 2 GiB of zeros in about 2 MB: 2,048 gzip members of 1 MiB each (a multi-member gzip is one body).
  const member = gzipSync(Buffer.alloc(1024 * 1024));
  const bomb = Buffer.concat(Array.from({ length: 2048 }, () => member));
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }).end(bomb);
  });
  const rig = await startRig({ default: up.url }, { maxBodyBytes: 16 * 1024 * 1024 }, { maxDecodedBytes: 16 * 1024 * 1024 });
  try {
    const cpu = process.cpuUsage();
    const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, {
      body: '{"model":"m","stream":true}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.body.length, bomb.length, 'the client gets every byte as sent');
    await settled(rig);
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    const x = rig.store.list()[0];
    assert.equal(x.responseBytes, 16 * 1024 * 1024, 'decoded up to the cap, not 2 GiB');
    assert.match(x.notAnalysed!, /^not analysed: decompressed body over 16 MB/);
    // Inflating all 2 GiB took about 5 s of CPU on this machine; up to the cap, a fraction of one.
    assert.ok(cpuMs < 3000, `${cpuMs.toFixed(0)} ms of CPU`);
    const findings =
      rig.store.readAnalysis(x.id)?.analysis.findings ?? exportCaptures(rig.store, [x.id], 'bundle').repros[0].analysis.analysis.findings;
    assert.deepEqual(
      findings.map((f) => [f.rule, f.severity]),
      [['capture-truncated', 'info']],
    );
    assert.match(findings[0].message, /did not analyse this response: decompressed body over 16 MB/);
  } finally {
    await rig.close();
    await up.close();
  }
});

/** A response with one header of `size` bytes, read by a client that accepts large heads. */
function bigHeader(url: string): Promise<{ status: number; header?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, maxHeaderSize: 1024 * 1024 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.once('end', () => resolve({ status: res.statusCode!, header: res.headers['x-debug'] as string | undefined, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

test('response headers over 16 KB pass; over 256 KB they get a clear 502', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    const size = Number(new URL(req.url!, 'http://x').searchParams.get('size'));
    res.writeHead(200, { 'content-type': 'application/json', 'x-debug': 'd'.repeat(size) }).end('{"ok":true}');
  });
  const rig = await startRig({ default: up.url });
  try {
    const big = await bigHeader(`${rig.proxy.url}/v1/models?size=${100 * 1024}`);
    assert.equal(big.status, 200, big.body);
    assert.equal(big.header?.length, 100 * 1024);
    const huge = await bigHeader(`${rig.proxy.url}/v1/models?size=${300 * 1024}`);
    assert.equal(huge.status, 502);
    assert.match(JSON.parse(huge.body).error.message, /sent response headers over 256 KB, more than Tokenscope accepts/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('request bodies: 20 MB is recorded; one over the cap is forwarded, and the capture and every export say it was not kept', {
  timeout: 60_000,
}, async () => {
  const MB = 1024 * 1024;
  let received = 0;
  const up = await startUpstream((req, res) => {
    req.on('data', (c: Buffer) => (received += c.length));
    req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  // A JSON body of `mb` MB.
  const body = (mb: number) => `{"model":"m","messages":[{"role":"user","content":"${'x'.repeat(mb * MB - 60)}"}]}`;
  const rig = await startRig({ default: up.url });
  try {
    const twenty = body(20);
    await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: twenty, headers: { 'content-type': 'application/json' } });
    await settled(rig);
    const x = rig.store.get(rig.store.list()[0].id)!;
    assert.equal(x.requestBody?.length, twenty.length, 'a 20 MB request body is recorded');
    assert.equal(x.requestNotKept, undefined);
  } finally {
    await rig.close();
  }
  const small = await startRig({ default: up.url }, {}, { maxRequestBodyBytes: MB });
  try {
    received = 0;
    const two = body(2);
    await rawRequest(`${small.proxy.url}/v1/chat/completions`, { body: two, headers: { 'content-type': 'application/json' } });
    assert.equal(received, two.length, 'the upstream got it all');
    await settled(small);
    const x = small.store.get(small.store.list()[0].id)!;
    assert.equal(x.requestBody, undefined);
    assert.deepEqual(x.requestNotKept, { bytes: two.length, why: 'it is over the 1 MB Tokenscope records of a request body' });
    const curl = exportCaptures(small.store, [x.id], 'curl').text;
    assert.match(curl, /# Note: the request body \(\d+ bytes\) was not kept by the capture: it is over the 1 MB/);
    assert.match(curl, /: "\$\{REQUEST_BODY_FILE:\?set REQUEST_BODY_FILE to a file holding the request body/);
    assert.match(curl, /--data-binary @"\$REQUEST_BODY_FILE"/, 'the replay sends a body, never none');
    assert.match(
      exportCaptures(small.store, [x.id], 'markdown').text,
      /\*\*Note:\*\* the request body \(\d+ bytes\) was not kept by the capture/,
    );
    const har = JSON.parse(exportCaptures(small.store, [x.id], 'har').text);
    assert.match(har.log.entries[0].request.comment, /request body \(\d+ bytes\) was not kept/);
    assert.equal(har.log.entries[0].request.bodySize, two.length);
    assert.deepEqual(JSON.parse(exportCaptures(small.store, [x.id], 'bundle').text).exchange.requestNotKept, x.requestNotKept);
    const shown: string[] = [];
    await main(['show', x.id, '--data-dir', small.dataDir], { out: (t) => shown.push(t), err: (t) => shown.push(t) });
    assert.match(shown.join('\n'), /not kept +the request body \([\d,]+ bytes\): it is over the 1 MB/);
  } finally {
    await small.close();
    await up.close();
  }
});

test('an encoded climb (`..%2f`) in a request path is refused with a 400, never forwarded', async () => {
  const seen: string[] = [];
  const up = await startUpstream((req, res) => {
    seen.push(req.url!);
    req.resume();
    res.writeHead(200).end('{}');
  });
  const rig = await startRig({ default: up.url, custom: { lab: `${up.url}/lab` } });
  try {
    for (const path of ['/v1/..%2f..%2fadmin', '/u/lab/%2e%2e%2fsecret/x', '/v1/%2e%2e%5cx', '/v1/..%252fadmin']) {
      const res = await rawRequest(`${rig.proxy.url}${path}`, { body: '{}', headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, path);
      assert.match(
        JSON.parse(res.body.toString()).error.message,
        /^Tokenscope cannot forward this request: the request path holds ".+", an encoded ".+" that could leave the route$/,
        path,
      );
    }
    assert.deepEqual(seen, []);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a key written with \\u escapes and secret-named fields echoed by the upstream reach no file of the capture, nor show --json', async () => {
  const key = 'sk-or-v1-c4n4ry0123456789abcdef0123456789abcdef0123456789abcdef0123456789';
  const escaped = [...key].map((c, i) => (i % 3 === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('');
  const echoed = {
    'x-portkey-api-key': 'pk-c4n4ryPortkeyValue0123456',
    aws_session_token: 'IQoJb3JpZ2luX2VjEBcaCXVzLWVhc3QtMSJHMEUCIQDc4n4ryAwsSessionToken0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
    cookie: 'sid=c4n4ryCookieValue',
    'set-cookie': ['session=c4n4rySetCookie; Path=/'],
    authorization: 'Basic YzRuNHJ5VXNlcjpjNG40cnlQYXNz',
  };
  const canaries = ['c4n4ry', 'YzRuNHJ5', 'IQoJb3JpZ2lu'];
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        debug: { headers: echoed },
      }),
    );
  });
  const rig = await startRig({ default: up.url });
  try {
    const body = `{"model":"m","messages":[{"role":"user","content":"use ${escaped}"}]}`;
    assert.equal(JSON.parse(body).messages[0].content, `use ${key}`);
    const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body, headers: { 'content-type': 'application/json' } });
    assert.match(res.body.toString(), /c4n4ryPortkeyValue/, 'the client gets the body as sent');
    await settled(rig);
    const id = rig.store.list()[0].id;
    const out: string[] = [];
    await main(['show', id, '--json', '--data-dir', rig.dataDir], { out: (t) => out.push(t), err: (t) => out.push(t) });
    const shown = out.join('\n');
    assert.match(shown, /REDACTED/);
    for (const format of ['bundle', 'markdown', 'har', 'curl'] as const) {
      const text = exportCaptures(rig.store, [id], format).text;
      for (const c of canaries) assert.ok(!text.includes(c), `${format} holds ${c}`);
    }
    for (const c of canaries) assert.ok(!shown.includes(c), `show --json holds ${c}`);
    const bytes = await storedBytes(rig);
    for (const c of [...canaries, escaped.slice(0, 40)]) assert.ok(!bytes.includes(c), `the data dir holds ${c}`);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('a request to an upstream that is down keeps its body in the capture (it never reached the upstream)', async () => {
  const gone = await startUpstream(() => undefined);
  const url = gone.url;
  await gone.close();
  const rig = await startRig({ default: url });
  try {
    const body = '{"model":"m","messages":[{"role":"user","content":"hi"}]}';
    const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body, headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 502);
    await settled(rig);
    const x = rig.store.get(rig.store.list()[0].id)!;
    assert.equal(x.requestBody, body, 'a replay of it can be exported once the upstream is back');
    assert.equal(x.requestNotKept, undefined);
  } finally {
    await rig.close();
  }
});
