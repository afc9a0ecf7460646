/**
 * A credential in an upstream's URL (`?key=`, `?api_key=`, `?token=`, `user:pass@`) is used to reach the upstream and
 * shown nowhere: not in the error a client gets when the upstream is down or times out, not in the capture (every file
 * of the data dir, the database included), not in an export (bundle, Markdown, HAR, curl, K2VV, promptfoo), not in an
 * OpenTelemetry span, not in `serve`'s banner or its log lines.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { resultFor } from '../../../src/core/capture/analysis';
import { exportCaptures, type ExportFormat } from '../../../src/core/export/index';
import { exchangeSpan } from '../../../src/core/export/otlp-span';
import { readCapture } from '../../../src/core/export/repro';
import { exited, rawRequest, serveChild, startRig, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';

/** Not key-shaped on purpose: only the URL redaction can know these are credentials. */
const CANARIES = ['c4n4ryQueryKey1', 'c4n4ryApiKey2', 'c4n4ryToken3', 'c4n4ryPassw0rd4', 'c4n4ryUser5', 'c4n4rySig6'];

function assertNoCanary(text: string, where: string): void {
  for (const c of CANARIES)
    assert.ok(!text.includes(c), `${where} holds ${c}: ${text.slice(Math.max(0, text.indexOf(c) - 200), text.indexOf(c) + 100)}`);
}

/** Every file under `dir` (captures, the database and its WAL, journals), as latin1 text. */
function allFiles(dir: string): { name: string; text: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => ({ name: join(d.parentPath, d.name), text: readFileSync(join(d.parentPath, d.name)).toString('latin1') }));
}

/** A port nothing listens on (a server opened and closed). */
async function deadPort(): Promise<number> {
  const up = await startUpstream(() => undefined);
  const port = Number(new URL(up.url).port);
  await up.close();
  return port;
}

const FORMATS: ExportFormat[] = ['bundle', 'markdown', 'har', 'curl', 'k2vv', 'promptfoo'];
const BODY = JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] });

test('an upstream URL credential never reaches the client, the capture, the log, an export or a span: upstream down, silent, answering', {
  timeout: 120_000,
}, async () => {
  const dead = await deadPort();
  // Never sends response headers.
  const silent = await startUpstream((req) => req.resume());
  const answering = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('data: {"choices":[{"index":0,"delta":{"content":"Hello."},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
  });
  const hostOf = (u: string) => new URL(u).host;
  const log: string[] = [];
  const rig = await startRig(
    {
      default: `http://127.0.0.1:${dead}/api?key=${CANARIES[0]}&alt=sse`,
      openrouter: `http://${hostOf(silent.url)}/api?api_key=${CANARIES[1]}&token=${CANARIES[2]}`,
      custom: {
        lab: `http://${CANARIES[4]}:${CANARIES[3]}@${hostOf(answering.url)}/v1x?sig=${CANARIES[5]}`,
        down: `http://${CANARIES[4]}:${CANARIES[3]}@127.0.0.1:${dead}`,
      },
    },
    {},
    { timeouts: { upstreamHeadersMs: 400 }, log: (l) => log.push(l) },
  );
  try {
    const ask = (path: string) => rawRequest(`${rig.proxy.url}${path}`, { body: BODY, headers: { 'content-type': 'application/json' } });
    const down = await ask('/v1/chat/completions');
    assert.equal(down.status, 502);
    assert.match(
      down.body.toString(),
      /could not reach the upstream http:\/\/127\.0\.0\.1:\d+\/api\?key=\[REDACTED:url-credential\]&alt=sse/,
    );
    const timedOut = await ask('/openrouter/v1/chat/completions');
    assert.equal(timedOut.status, 504);
    assert.match(
      timedOut.body.toString(),
      /api_key=\[REDACTED:url-credential\]&token=\[REDACTED:url-credential\] sent no response headers/,
    );
    const userinfoDown = await ask('/u/down/v1/chat/completions');
    assert.equal(userinfoDown.status, 502);
    assert.match(userinfoDown.body.toString(), /http:\/\/\[REDACTED:url-userinfo\]@127\.0\.0\.1/);
    const ok = await ask('/u/lab/v1/chat/completions');
    assert.equal(ok.status, 200);
    for (const r of [down, timedOut, userinfoDown, ok]) assertNoCanary(r.body.toString(), 'a response to the client');
    await waitFor(() => rig.store.list().length === 4 && rig.store.list().every((x) => x.state !== 'streaming'), 'four captures');
    await rig.store.idle();
    assert.equal(log.length >= 3, true, `the failures are logged: ${log.join('\n')}`);
    assertNoCanary(log.join('\n'), 'the log');

    for (const x of rig.store.list()) {
      assertNoCanary(JSON.stringify(rig.store.get(x.id)), `capture ${x.id}`);
      for (const format of FORMATS) {
        let text: string;
        try {
          text = exportCaptures(rig.store, [x.id], format).text;
        } catch (e) {
          // K2VV and promptfoo need a model turn's request; their refusal must not quote the URL either.
          text = (e as Error).message;
        }
        assertNoCanary(text, `the ${format} export of ${x.id} (${x.error ?? x.status})`);
      }
      const input = readCapture(rig.store, x.id);
      const span = exchangeSpan(input.exchange, resultFor(rig.store, input.exchange, input.responseBody, input.chunks), input.chunks);
      assert.ok(span, 'a chat exchange has a span');
      assertNoCanary(JSON.stringify(span), `the span of ${x.id}`);
    }
    const errors = rig.store.list().map((x) => x.error ?? '');
    assert.ok(
      errors.some((e) => e.includes('[REDACTED:url-credential]')),
      errors.join('\n'),
    );
    // Closed: every byte the store wrote (body files, the database, its WAL, the journal) is on disk.
    await rig.proxy.close();
    await rig.store.close();
    for (const f of allFiles(rig.dataDir)) assertNoCanary(f.text, f.name);
  } finally {
    await rig.close();
    await silent.close();
    await answering.close();
  }
});

test('serve prints upstream URLs with their credentials redacted, and logs a failure without them', { timeout: 180_000 }, async () => {
  const dead = await deadPort();
  const data = tempDir();
  const s = await serveChild([
    '--port',
    '0',
    '--data-dir',
    data.dir,
    '--upstream',
    `http://127.0.0.1:${dead}/api?key=${CANARIES[0]}`,
    '--openrouter-url',
    `http://127.0.0.1:${dead}/api?api_key=${CANARIES[1]}`,
    '--custom',
    `lab=http://${CANARIES[4]}:${CANARIES[3]}@127.0.0.1:${dead}/?token=${CANARIES[2]}`,
  ]);
  try {
    const banner = s.output();
    assert.match(banner, /\/v1 {2}→ http:\/\/127\.0\.0\.1:\d+\/api\/v1\?key=\[REDACTED:url-credential\]/);
    assert.match(banner, /\/u\/lab {2}→ http:\/\/\[REDACTED:url-userinfo\]@127\.0\.0\.1:\d+\?token=\[REDACTED:url-credential\]/);
    const res = await rawRequest(`${s.url}/u/lab/v1/chat/completions`, { body: BODY, headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 502);
    assertNoCanary(res.body.toString(), 'the 502 body');
    await waitFor(() => /could not reach the upstream/.test(s.output()), 'the failure in the log', 30_000);
    assertNoCanary(s.output(), "serve's output");
  } finally {
    s.child.kill('SIGTERM');
    await exited(s.child);
  }
  for (const f of allFiles(data.dir)) assertNoCanary(f.text, f.name);
  data.remove();
});

test('a store opened on the data dir and its exports hold no upstream credential either', { timeout: 60_000 }, async () => {
  // The same captures as a reader sees them: read-only, another process's data dir.
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
  });
  const rig = await startRig({ default: `${up.url}/api?access_token=${CANARIES[2]}` });
  try {
    await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: BODY, headers: { 'content-type': 'application/json' } });
    await waitFor(() => rig.store.list()[0]?.state === 'complete', 'the capture');
    await rig.store.idle();
    const reader = await openStore(rig.dataDir, { readOnly: true });
    try {
      const [x] = reader.list();
      assert.match(x.upstreamUrl, /access_token=%5BREDACTED%3Aquery-access_token%5D/);
      for (const format of FORMATS) assertNoCanary(exportCaptures(reader, [x.id], format).text, format);
    } finally {
      await reader.close();
    }
  } finally {
    await rig.close();
    await up.close();
  }
});
