// OpenTelemetry export against a real OTLP/HTTP receiver on 127.0.0.1 (test/fixtures/otlp-receiver.ts), over
// http/protobuf and http/json: a broken Kimi exchange written through the capture store while the exporter listens
// arrives as one GenAI span with its attributes and one `tokenscope.finding` event per finding; no canary secret is
// in any byte sent; a collector that is down costs nothing but counted, reported drops, and export resumes when it
// is back; the queue is bounded.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeExchange } from '../../../src/core/analyze';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { OtlpExporter } from '../../../src/core/export/otlp';
import { otlpRequestedByEnv, parseOtlpHeaders, readOtlpConfig, type OtlpProtocol } from '../../../src/core/export/otlp-config';
import { exchangeSpan } from '../../../src/core/export/otlp-span';
import { UserError } from '../../../src/core/model';
import { brokenKimiCapture, CANARY, beginRecorded } from '../../fixtures/export/captures';
import { startReceiver } from '../../fixtures/otlp-receiver';
import { scheduledNow } from '../../helpers/timing';

const root = mkdtempSync(join(tmpdir(), 'tokenscope-otlp-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** Writes the fixture capture through the store's writer, as the proxy does. */
async function write(store: CaptureStore, opts: { secrets?: boolean } = {}) {
  const c = brokenKimiCapture({ secrets: opts.secrets, startedAt: Date.now() - 1000 });
  const x = c.exchange;
  const w = beginRecorded(store, c);
  w.annotate({
    generationId: x.generationId,
    servedProvider: x.servedProvider,
    requestModel: 'moonshotai/kimi-k2-0905',
    pin: { requested: ['chutes'], honoured: true },
  });
  return w.finish();
}

function config(url: string, protocol: OtlpProtocol, extra: Partial<ReturnType<typeof readOtlpConfig>> = {}) {
  return { ...readOtlpConfig({ endpoint: url, protocol, batchDelayMs: 20, timeoutMs: 2000 }, {}), ...extra };
}

for (const protocol of ['http/protobuf', 'http/json'] as const) {
  test(`a finished exchange reaches the collector as one GenAI span with finding events (${protocol})`, async () => {
    const rx = await startReceiver();
    const store = await openStore(join(root, `s${n++}`), { analyze: false });
    const otlp = new OtlpExporter(config(rx.url, protocol, { content: true, headers: { authorization: 'Basic dGVzdDp0ZXN0' } }), {
      version: '9.9.9',
    });
    const stop = otlp.attach(store);
    try {
      const x = await write(store, { secrets: true });
      await otlp.flush();
      const [span] = await rx.waitFor(1);
      assert.equal(rx.spans.length, 1);
      assert.equal(rx.requests[0].contentType, protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
      assert.equal(rx.requests[0].headers.authorization, 'Basic dGVzdDp0ZXN0', 'configured headers reach the collector');

      assert.equal(span.name, 'chat moonshotai/kimi-k2-0905');
      assert.equal(span.kind, 3, 'SPAN_KIND_CLIENT');
      assert.equal(span.resource['service.name'], 'tokenscope');
      assert.equal(span.resource['service.version'], '9.9.9');
      const a = span.attributes;
      assert.equal(a['gen_ai.operation.name'], 'chat');
      assert.equal(a['gen_ai.provider.name'], 'openrouter');
      assert.equal(a['gen_ai.request.model'], 'moonshotai/kimi-k2-0905');
      assert.equal(a['gen_ai.response.model'], 'moonshotai/kimi-k2-0905');
      assert.equal(a['gen_ai.response.id'], 'gen-1764470000-C4n4ryGen');
      assert.deepEqual(a['gen_ai.response.finish_reasons'], ['stop']);
      assert.equal(a['gen_ai.usage.input_tokens'], 120);
      assert.equal(a['gen_ai.usage.output_tokens'], 42);
      assert.equal(a['gen_ai.request.stream'], true);
      assert.equal(a['gen_ai.request.temperature'], 0.6);
      assert.equal(a['gen_ai.request.max_tokens'], 4096);
      assert.equal(a['gen_ai.conversation.id'], x.sessionId);
      assert.ok(
        typeof a['gen_ai.response.time_to_first_chunk'] === 'number' &&
          a['gen_ai.response.time_to_first_chunk'] > 0.4 &&
          a['gen_ai.response.time_to_first_chunk'] < 0.5,
      );
      assert.equal(a['server.address'], 'openrouter.ai');
      assert.equal(a['server.port'], 443);
      assert.equal(a['tokenscope.served_provider'], 'Chutes');
      assert.deepEqual(a['tokenscope.pin.requested'], ['chutes']);
      assert.equal(a['tokenscope.pin.honoured'], true);
      assert.equal(a['tokenscope.family'], 'kimi-k2');
      assert.equal(a['tokenscope.exchange.id'], x.id);
      assert.equal(span.status.code, 2, 'STATUS_CODE_ERROR: the exchange has error findings');
      assert.ok(span.startMs <= span.endMs && Math.abs(span.startMs - x.startedAt) <= 1);

      // One event per finding, in the analysis's order, with rule, severity, message and range.
      const stored = store.get(x.id)!;
      const res = store.readResponse(x.id)!;
      const expected = analyzeExchange(stored, res.bytes, res.chunks).analysis.findings;
      assert.ok(expected.length >= 3);
      assert.deepEqual(
        span.events.map((e) => e.name),
        expected.map(() => 'tokenscope.finding'),
      );
      assert.deepEqual(
        span.events.map((e) => e.attributes['tokenscope.finding.rule']),
        expected.map((f) => f.rule),
      );
      assert.ok(
        span.events.some(
          (e) => e.attributes['tokenscope.finding.rule'] === 'section-unclosed' && e.attributes['tokenscope.finding.severity'] === 'error',
        ),
      );
      const positioned = span.events.find((e) => e.attributes['tokenscope.finding.range.start'] !== undefined)!;
      assert.equal(typeof positioned.attributes['tokenscope.finding.range.end'], 'number');
      assert.ok(
        span.events.every(
          (e) =>
            typeof e.attributes['tokenscope.finding.message'] === 'string' &&
            (e.attributes['tokenscope.finding.message'] as string).length > 10,
        ),
      );

      // Content was asked for: it is there, redacted.
      const input = JSON.parse(a['gen_ai.input.messages'] as string) as { role: string; parts: { type: string; content: string }[] }[];
      assert.equal(input[0].role, 'user');
      assert.match(input[0].parts[0].content, /\[REDACTED:/);
      const output = JSON.parse(a['gen_ai.output.messages'] as string) as { role: string; finish_reason: string }[];
      assert.equal(output[0].role, 'assistant');
      assert.equal(output[0].finish_reason, 'stop');

      for (const [where, canary] of Object.entries(CANARY)) {
        if (where === 'home' || where === 'email') continue; // user patterns, not configured here
        for (const body of rx.rawBodies) assert.ok(!body.includes(canary), `the ${where} canary was exported`);
      }
      assert.deepEqual(
        { ...otlp.stats(), lastError: undefined },
        { exported: 1, dropped: 0, droppedQueueFull: 0, droppedFailed: 0, pending: 0, skipped: 0, lastError: undefined },
      );
    } finally {
      stop();
      await otlp.shutdown();
      await store.close();
      await rx.close();
    }
  });
}

test('message content is off by default; user redaction patterns apply to what is sent', async () => {
  const rx = await startReceiver();
  const store = await openStore(join(root, `s${n++}`), { analyze: false });
  const otlp = new OtlpExporter(config(rx.url, 'http/json'), { redactPatterns: [{ label: 'home', pattern: /\/home\/c4n4ryuser/ }] });
  try {
    const x = await write(store, { secrets: true });
    assert.equal(otlp.exportCapture(store, x.id), true);
    await otlp.flush();
    const [span] = await rx.waitFor(1);
    assert.equal(span.attributes['gen_ai.input.messages'], undefined);
    assert.equal(span.attributes['gen_ai.output.messages'], undefined);
    assert.equal(span.attributes['gen_ai.system_instructions'], undefined);
    for (const body of rx.rawBodies)
      for (const canary of Object.values(CANARY)) if (canary !== CANARY.email) assert.ok(!body.includes(canary));
    // With content on, the user pattern still holds.
    const withContent = exchangeSpan(x, analyzeExchange(store.get(x.id)!, store.readResponse(x.id)!.bytes), [], {
      content: true,
      patterns: [{ label: 'home', pattern: /\/home\/c4n4ryuser/ }],
    })!;
    assert.ok(!String(withContent.attributes['gen_ai.output.messages']).includes(CANARY.home));
  } finally {
    await otlp.shutdown();
    await store.close();
    await rx.close();
  }
});

test('a collector that is down: nothing blocks, the drop is counted and reported, export resumes when it is back', async () => {
  // Down, then back on the same port: the port stays this test's throughout (another process could take a closed one).
  const rx = await startReceiver();
  rx.mode = 'down';
  const warnings: string[] = [];
  const store = await openStore(join(root, `s${n++}`), { analyze: false });
  const otlp = new OtlpExporter(config(rx.url, 'http/protobuf', { timeoutMs: 300 }), { onWarning: (w) => warnings.push(w) });
  const stop = otlp.attach(store);
  try {
    // The event loop keeps turning while the export fails (a blocked loop would stall the proxy). Timed on a clock
    // that stands still while this thread waits for a core (other processes' turns on a loaded machine): a loop held
    // by this process's own work or a blocking call still counts in full.
    let maxLag = 0;
    let last = scheduledNow();
    const probe = setInterval(() => {
      const now = scheduledNow();
      maxLag = Math.max(maxLag, now - last - 5);
      last = now;
    }, 5);
    const t0 = scheduledNow();
    await write(store);
    const writeMs = scheduledNow() - t0;
    await otlp.flush();
    clearInterval(probe);
    assert.ok(writeMs < 200, `writing through the store took ${writeMs.toFixed(1)} ms`);
    assert.ok(maxLag < 150, `event loop stalled for ${maxLag.toFixed(0)} ms`);
    const s = otlp.stats();
    assert.equal(s.exported, 0);
    assert.equal(s.dropped, 1);
    assert.equal(s.droppedFailed, 1);
    assert.match(s.lastError ?? '', /ECONNRESET|socket hang up/i);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /1 span dropped/);

    rx.mode = 'ok'; // back
    await write(store);
    await otlp.flush();
    await rx.waitFor(1);
    assert.equal(otlp.stats().exported, 1);
    assert.equal(otlp.stats().dropped, 1, 'the earlier drop stays counted');
  } finally {
    stop();
    await otlp.shutdown();
    await store.close();
    await rx.close();
  }
});

test('the queue is bounded: a stalled collector drops and counts what does not fit, emit never waits', async () => {
  const rx = await startReceiver();
  rx.mode = 'stall';
  const store = await openStore(join(root, `s${n++}`), { analyze: false });
  const x = await write(store);
  const otlp = new OtlpExporter(config(rx.url, 'http/json', { maxQueueSize: 4, timeoutMs: 200, batchDelayMs: 10_000 }));
  try {
    const span = exchangeSpan(store.get(x.id)!, undefined, [])!;
    const t0 = scheduledNow(); // stands still while this thread waits for a core
    const sent = Array.from({ length: 10 }, () => otlp.emit(span)).filter(Boolean).length;
    const ms = scheduledNow() - t0;
    // At most one batch in flight plus a full queue; everything else is dropped and counted.
    assert.ok(sent >= 4 && sent <= 8, `${sent} spans accepted`);
    assert.equal(otlp.stats().droppedQueueFull, 10 - sent);
    assert.ok(ms < 100, `10 emits took ${ms.toFixed(1)} ms`);
    await otlp.flush(); // the stalled collector times out: the 4 queued spans are dropped too
    // On a loaded machine the processor's own flush deadline can pass before the exporter's timeout has been
    // counted: wait (bounded) for the count to settle rather than read it at one instant.
    const until = Date.now() + 10_000;
    while (otlp.stats().dropped < 10 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.equal(otlp.stats().dropped, 10);
  } finally {
    await otlp.shutdown();
    await store.close();
    await rx.close();
  }
});

test('exchanges that are no inference call get no span', async () => {
  const store = await openStore(join(root, `s${n++}`), { analyze: false });
  try {
    const w = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/models',
      method: 'GET',
      path: '/api/v1/models',
      requestHeaders: {},
    });
    w.responseStarted(200, { 'content-type': 'application/json' });
    w.chunk(new TextEncoder().encode('{"data":[]}'));
    const x = await w.finish();
    assert.equal(exchangeSpan(store.get(x.id)!, undefined, []), undefined);
    const failed = store.begin({
      route: 'default',
      upstreamUrl: 'http://127.0.0.1:9/v1/chat/completions',
      method: 'POST',
      path: '/v1/chat/completions',
      requestHeaders: {},
      requestBody: '{"model":"m"}',
    });
    const y = await failed.finish({ error: 'upstream unreachable: ECONNREFUSED' });
    const span = exchangeSpan(store.get(y.id)!, undefined, [])!;
    assert.equal(span.name, 'chat m');
    assert.equal(span.attributes['error.type'], 'no_response');
    assert.equal(span.attributes['gen_ai.provider.name'], 'default');
    assert.equal(span.status.code, 'error');
    assert.equal(span.attributes['tokenscope.repaired'], undefined);
    const repaired = exchangeSpan(
      {
        ...store.get(y.id)!,
        repair: {
          truncated: 'withhold',
          calls: [
            { index: 0, id: 'functions.read:0', name: 'read', from: 'content', family: 'kimi-k2', status: 'delivered', argumentsChars: 20 },
          ],
          removedChars: { content: 120, reasoning: 0 },
        },
      },
      undefined,
      [],
    )!;
    assert.equal(repaired.attributes['tokenscope.repaired'], true);
    assert.equal(repaired.attributes['tokenscope.repair.calls_delivered'], 1);
  } finally {
    await store.close();
  }
});

test('configuration the standard way: OTEL_EXPORTER_OTLP_* and OTEL_SERVICE_NAME, explicit settings win', () => {
  assert.equal(readOtlpConfig({}, {}).url, 'http://localhost:4318/v1/traces');
  assert.equal(readOtlpConfig({}, {}).protocol, 'http/protobuf');
  assert.equal(
    readOtlpConfig({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://cloud.langfuse.com/api/public/otel/' }).url,
    'https://cloud.langfuse.com/api/public/otel/v1/traces',
  );
  assert.equal(
    readOtlpConfig({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:6006/v1/traces' }).url,
    'http://b:6006/v1/traces',
  );
  assert.equal(
    readOtlpConfig({ endpoint: 'http://c:4318' }, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:6006/v1/traces' }).url,
    'http://c:4318/v1/traces',
  );
  assert.equal(readOtlpConfig({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol, 'http/json');
  assert.equal(
    readOtlpConfig({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).protocol,
    'http/protobuf',
  );
  assert.throws(
    () => readOtlpConfig({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    (e: Error) => e instanceof UserError && /grpc is not supported/.test(e.message),
  );
  assert.throws(() => readOtlpConfig({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://x' }), UserError);
  assert.equal(readOtlpConfig({}, { OTEL_SERVICE_NAME: 'team-agents' }).serviceName, 'team-agents');
  assert.deepEqual(parseOtlpHeaders('Authorization=Basic%20cGs6c2s=, x-team = core'), {
    Authorization: 'Basic cGs6c2s=',
    'x-team': 'core',
  });
  const c = readOtlpConfig(
    { headers: { Authorization: 'Basic override' } },
    { OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20env,x-a=1' },
  );
  assert.deepEqual(c.headers, { Authorization: 'Basic override', 'x-a': '1' });
  assert.throws(() => parseOtlpHeaders('novalue'), UserError);
  assert.equal(otlpRequestedByEnv({}), false);
  assert.equal(otlpRequestedByEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }), true);
});
