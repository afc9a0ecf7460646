// OpenTelemetry export as VS Code configures it: the tokenscope.otlp.* settings and the headers kept in
// SecretStorage become the exporter's config (the OTEL_* environment filling in empty settings, a setting winning
// over it); off means no exporter and the secret is never read; a bad stored value is one line that does not repeat
// it; and a running export sends a finished exchange to a real OTLP receiver with the stored header, over the
// protocol the setting names, without message content unless the setting asks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { UserError } from '../../../src/core/model';
import { exporterConfig, headersInputError, SECRET_HEADERS, startOtlpExport } from '../../../src/extension/otlpSettings';
import { brokenKimiCapture, beginRecorded } from '../../fixtures/export/captures';
import { startReceiver } from '../../fixtures/otlp-receiver';

/** SecretStorage as the extension context gives it, counting reads. */
function secrets(values: Record<string, string> = {}) {
  const reads: string[] = [];
  return { reads, get: async (k: string) => (reads.push(k), values[k]) };
}

test('settings and the stored headers become the exporter config; the environment fills empty settings only', async () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-env=1,authorization=from-env',
    OTEL_SERVICE_NAME: 'env-service',
  };
  const stored = secrets({ [SECRET_HEADERS]: 'Authorization=Basic%20cGs6c2s=,x-langfuse-project=p1' });
  const c = await exporterConfig(
    { enabled: true, endpoint: 'http://127.0.0.1:3000/api/public/otel', protocol: 'http/json', serviceName: '', content: true },
    stored,
    env,
  );
  assert.ok(c);
  assert.equal(c.url, 'http://127.0.0.1:3000/api/public/otel/v1/traces');
  assert.equal(c.protocol, 'http/json');
  assert.equal(c.serviceName, 'env-service', 'an empty setting leaves the environment');
  assert.equal(c.content, true);
  assert.deepEqual(c.headers, { 'x-env': '1', authorization: 'from-env', Authorization: 'Basic cGs6c2s=', 'x-langfuse-project': 'p1' });
  assert.deepEqual(stored.reads, [SECRET_HEADERS]);

  const fromEnv = await exporterConfig({ enabled: true, endpoint: '', protocol: '' }, secrets(), env);
  assert.equal(fromEnv?.url, 'http://collector.example:4318/v1/traces');
  assert.equal(fromEnv?.protocol, 'http/protobuf');
  assert.equal(fromEnv?.content, false, 'content is off unless the setting says so');
  assert.deepEqual(fromEnv?.headers, { 'x-env': '1', authorization: 'from-env' });
});

test('export off: no config and the secret is not read; a bad stored value is one line without it', async () => {
  const s = secrets({ [SECRET_HEADERS]: 'Authorization=x' });
  assert.equal(await exporterConfig({ enabled: false, endpoint: 'http://127.0.0.1:1' }, s, {}), undefined);
  assert.deepEqual(s.reads, []);

  const bad = secrets({ [SECRET_HEADERS]: 'sk-lf-0123456789abcdef' });
  await assert.rejects(exporterConfig({ enabled: true }, bad, {}), (e: Error) => {
    assert.ok(e instanceof UserError);
    assert.match(e.message, /^the stored OpenTelemetry headers: expected key=value pairs/);
    assert.ok(!e.message.includes('sk-lf-0123456789abcdef'), 'the stored value is not repeated');
    return true;
  });
  await assert.rejects(exporterConfig({ enabled: true, protocol: 'grpc' }, secrets(), {}), /protocol/);
  await assert.rejects(exporterConfig({ enabled: true, endpoint: 'not a url' }, secrets(), {}), /endpoint/);

  assert.equal(headersInputError('Authorization=Basic%20abc'), undefined);
  assert.match(headersInputError('sk-lf-secret') ?? '', /key=value/);
  assert.ok(!(headersInputError('sk-lf-secret') ?? '').includes('sk-lf-secret'));
});

/** Writes the fixture capture through the store's writer, as the proxy does. */
async function write(store: CaptureStore) {
  const c = brokenKimiCapture({ startedAt: Date.now() - 1000 });
  const w = beginRecorded(store, c);
  w.annotate({ requestModel: 'moonshotai/kimi-k2-0905' });
  return w.finish();
}

for (const protocol of ['http/protobuf', 'http/json'] as const) {
  test(`a running export sends finished exchanges with the stored header (${protocol}); stopping reports the counts`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenscope-otlp-settings-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const rx = await startReceiver();
    const store = await openStore(dir);
    try {
      const warnings: string[] = [];
      const running = await startOtlpExport(
        { enabled: true, endpoint: rx.url, protocol, serviceName: 'my-team' },
        secrets({ [SECRET_HEADERS]: 'Authorization=Basic%20dGVhbTprZXk=' }),
        store,
        {
          version: '9.9.9',
          onWarning: (m) => warnings.push(m),
          env: {},
        },
      );
      assert.ok(running);
      assert.match(running.description, new RegExp(`^${rx.url}/v1/traces \\(${protocol}, headers: Authorization\\)$`));
      assert.ok(!running.description.includes('dGVhbTprZXk='), 'header values stay out of the log line');
      await write(store);
      await store.idle();
      const stats = await running.stop();
      const [span] = await rx.waitFor(1);
      assert.equal(stats.exported, 1);
      assert.equal(stats.dropped, 0);
      assert.equal(rx.requests[0].headers.authorization, 'Basic dGVhbTprZXk=');
      assert.equal(span.contentType, protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
      assert.equal(span.resource['service.name'], 'my-team');
      assert.equal(span.attributes['gen_ai.request.model'], 'moonshotai/kimi-k2-0905');
      assert.equal(span.attributes['gen_ai.input.messages'], undefined, 'no content unless the setting asks');
      assert.ok(span.events.some((e) => e.name === 'tokenscope.finding'));
      assert.deepEqual(warnings, []);
    } finally {
      await store.close();
      await rx.close();
    }
  });
}
