// `tokenscope export-otlp` end to end, in-process, on a real capture store and a real OTLP receiver on 127.0.0.1:
// stored captures go out after the fact (filtered by --since / --broken), a collector that is down makes it exit 1
// with the drop count, bad input is one line with exit 2.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../../helpers/cli-main';
import { openStore } from '../../../src/core/capture/store';
import { brokenKimiCapture, CANARY, beginRecorded } from '../../fixtures/export/captures';
import { startReceiver } from '../../fixtures/otlp-receiver';

const root = mkdtempSync(join(tmpdir(), 'tokenscope-otlp-cli-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Two captures written as the proxy writes them: one three days old, one from a minute ago (with planted secrets). */
async function seed(dataDir: string): Promise<void> {
  const store = await openStore(dataDir);
  try {
    for (const [age, secrets] of [
      [3 * 86_400_000, false],
      [60_000, true],
    ] as const) {
      const c = brokenKimiCapture({ secrets, startedAt: Date.now() - age });
      const x = c.exchange;
      const w = beginRecorded(store, c);
      await w.finish({ endedAt: x.startedAt + 800 });
    }
    const ok = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/api/v1/chat/completions',
      requestHeaders: {},
      requestBody: '{"model":"z-ai/glm-4.6","messages":[{"role":"user","content":"hi"}]}',
    });
    ok.responseStarted(200, { 'content-type': 'application/json' });
    ok.chunk(
      new TextEncoder().encode(
        '{"id":"gen-ok","model":"z-ai/glm-4.6","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}',
      ),
    );
    await ok.finish();
    await store.idle();
  } finally {
    await store.close();
  }
}

test('export-otlp sends stored captures since a time, over http/json, with no secret', async () => {
  const dataDir = join(root, 'a');
  await seed(dataDir);
  const rx = await startReceiver();
  try {
    const r = await cli(
      'export-otlp',
      '--data-dir',
      dataDir,
      '--since',
      '1h',
      '--otlp-endpoint',
      rx.url,
      '--otlp-protocol',
      'http/json',
      '--otlp-content',
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^2 spans sent$/m);
    assert.equal(rx.spans.length, 2);
    const names = rx.spans.map((s) => s.name).sort();
    assert.deepEqual(names, ['chat moonshotai/kimi-k2-0905', 'chat z-ai/glm-4.6']);
    const broken = rx.spans.find((s) => s.name.includes('kimi'))!;
    assert.ok(broken.events.length >= 3);
    for (const body of rx.rawBodies)
      for (const [k, canary] of Object.entries(CANARY)) if (k !== 'home' && k !== 'email') assert.ok(!body.includes(canary), k);

    const b = await cli('export-otlp', '--data-dir', dataDir, '--broken', '--otlp-endpoint', rx.url);
    assert.equal(b.code, 0, b.err);
    assert.match(b.out, /^2 spans sent$/m, 'both broken captures, the old one too; the clean one is left out');
    assert.equal(rx.requests.at(-1)!.contentType, 'application/x-protobuf', 'http/protobuf is the default');
  } finally {
    await rx.close();
  }
});

test('export-otlp with the collector down exits 1 and says how many were dropped; bad input is one line', async () => {
  const dataDir = join(root, 'b');
  await seed(dataDir);
  const rx = await startReceiver();
  const port = rx.port;
  await rx.close();
  const prev = process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '500';
  try {
    const r = await cli('export-otlp', '--data-dir', dataDir, '--otlp-endpoint', `http://127.0.0.1:${port}`);
    assert.equal(r.code, 1);
    assert.match(r.out, /0 spans sent, 3 dropped/);
  } finally {
    if (prev === undefined) delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
    else process.env.OTEL_EXPORTER_OTLP_TIMEOUT = prev;
  }
  const bad = await cli('export-otlp', '--data-dir', dataDir, '--since', 'yesterday-ish');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^tokenscope export-otlp: --since expects a duration/);
  assert.equal(bad.err.split('\n').length, 1);
  const grpc = await cli('export-otlp', '--data-dir', dataDir, '--otlp-protocol', 'grpc');
  assert.equal(grpc.code, 2);
  assert.match(grpc.err, /grpc is not supported/);
});
