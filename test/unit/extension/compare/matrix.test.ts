import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type CaptureStore } from '../../../../src/core/capture/store';
import { compareProviders, type CompareReport } from '../../../../src/core/upstream/compare';
import { OpenRouterClient, type ProviderEndpoint } from '../../../../src/core/upstream/openrouter';
import {
  compareView,
  defaultReference,
  endpointFacts,
  formatCost,
  formatMs,
  parseCount,
  providerPickItem,
  sampleLabel,
  type CompareState,
} from '../../../../src/extension/compare/matrix';
import { startOpenRouterEmulator, type OpenRouterEmulator } from '../../../fixtures/openrouter-emulator';
import { COMPARE_PROVIDERS, COMPARE_REQUEST } from '../../../helpers/compare';

/** A comparison state as the panel builds it: providers as picked, rows as the core reports them. */
function state(endpoints: ProviderEndpoint[], samples: number, reference = 'fireworks'): CompareState {
  const providers = COMPARE_PROVIDERS.map((slug) => ({ slug, endpoint: endpoints.find((e) => e.slug === slug) }));
  return {
    model: COMPARE_REQUEST.model,
    reference,
    samples,
    concurrency: 8,
    state: 'running',
    progress: { done: 0, total: providers.length * samples, running: 0, failed: 0 },
    providers,
    results: new Map(),
  };
}

describe('comparison matrix from a real comparison (OpenRouter emulator)', () => {
  let emu: OpenRouterEmulator;
  let dir: string;
  let store: CaptureStore;
  let endpoints: ProviderEndpoint[];
  let s: CompareState;
  let report: CompareReport;
  const streamed: string[] = [];

  before(async () => {
    emu = await startOpenRouterEmulator({ chunkDelayMs: 1 });
    dir = mkdtempSync(join(tmpdir(), 'tokenscope-compare-view-'));
    store = await openStore(dir);
    const client = new OpenRouterClient({ baseUrl: emu.url, apiKey: 'sk-or-v1-test' });
    endpoints = await client.endpoints(COMPARE_REQUEST.model);
    s = state(endpoints, 2);
    report = await compareProviders({
      request: COMPARE_REQUEST,
      client,
      providers: COMPARE_PROVIDERS,
      samples: 2,
      reference: 'fireworks',
      store,
      onProgress: (p) => (s.progress = p),
      onSample: (sample, row) => {
        s.results.set(row.slug, row);
        // What the webview would show right after this sample: the cell is there, with its exchange.
        const cell = compareView(s).rows.find((r) => r.slug === sample.provider)!.samples[sample.sample];
        streamed.push(`${cell.label}:${cell.state}:${cell.exchangeId ? 'recorded' : 'unrecorded'}`);
      },
    });
    s.state = 'done';
    s.wallMs = report.wallMs;
  });

  after(async () => {
    await store?.close();
    await emu?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('streams every sample into its cell as it finishes, each with its recorded exchange', () => {
    assert.equal(streamed.length, COMPARE_PROVIDERS.length * 2);
    assert.ok(
      streamed.every((x) => x.endsWith(':recorded')),
      streamed.join(' '),
    );
  });

  it('keeps one row per picked provider, in order, with endpoint facts', () => {
    const v = compareView(s);
    assert.deepEqual(
      v.rows.map((r) => r.slug),
      COMPARE_PROVIDERS,
    );
    assert.equal(v.rows[0].name, 'Fireworks');
    assert.equal(v.rows[0].endpoint.quantization, 'fp8');
    assert.equal(v.progress.done, 8);
    assert.match(v.wall!, /^\d+( ms|\.\d\d s)$/);
  });

  it('shows the reference, verified served providers and the K2VV metrics', () => {
    const v = compareView(s);
    const row = (slug: string) => v.rows.find((r) => r.slug === slug)!;
    const fw = row('fireworks');
    assert.equal(fw.isReference, true);
    assert.equal(fw.trigger.text, 'reference');
    assert.deepEqual(fw.served, { names: ['Fireworks'], verified: true, mismatch: false });
    assert.deepEqual(fw.finishReasons, [{ reason: 'tool_calls', count: 2 }]);
    assert.equal(fw.schema.text, '100.0%');
    assert.notEqual(fw.ttft, '—');
    assert.match(fw.cost, /^\$/);

    // Leaked markup with finish "stop": never triggers where the reference does.
    const leak = row('chutes');
    assert.equal(leak.trigger.f1, 0);
    assert.equal(leak.trigger.text, '0.0%');
    assert.match(leak.trigger.detail, /vs fireworks over 2 paired samples/);
    assert.equal(leak.schema.text, '—', 'no tool_calls finish: accuracy undefined, not 0');
    assert.ok(leak.findings.length > 0);
    assert.equal(leak.findings[0].severity, 'error', 'worst findings first');
    assert.ok(leak.samples.every((c) => c.findings > 0 && c.worst === 'error'));
    // A sample that answered with an error finding is broken, not a green ✓ beside the reference's healthy ones.
    assert.deepEqual(
      leak.samples.map((c) => c.state),
      ['broken', 'broken'],
    );
    assert.deepEqual(
      fw.samples.map((c) => c.state),
      ['ok', 'ok'],
    );

    const groq = row('groq');
    assert.equal(groq.schema.accuracy, 0);
    assert.equal(groq.trigger.f1, 1, 'it does call the tool: trigger agrees, schema fails');
    assert.ok(groq.samples.every((c) => c.toolCallsValid === false));
    assert.ok(
      groq.samples.every((c) => c.state === 'broken'),
      'a call that fails the schema is broken',
    );
  });

  it('keeps failed requests as cells with status, one-line error and error body', () => {
    const down = compareView(s).rows.find((r) => r.slug === 'atlas-cloud')!;
    assert.equal(down.failed, 2);
    assert.equal(down.samples.length, 2);
    for (const c of down.samples) {
      assert.equal(c.state, 'failed');
      assert.ok(c.status! >= 500, `status ${c.status}`);
      assert.ok(c.error && !c.error.includes('\n'));
      assert.ok(c.errorBody && c.errorBody.length > 0);
      assert.ok(c.exchangeId, 'a failed request is recorded too');
    }
    assert.deepEqual(
      down.finishReasons.map((f) => f.reason),
      ['failed'],
    );
    assert.equal(down.served.mismatch, false, 'an error from the pinned provider is no mismatch');
  });

  it('recomputes trigger agreement when the user picks another reference', () => {
    const switched = compareView({ ...s, reference: 'chutes' });
    const row = (slug: string) => switched.rows.find((r) => r.slug === slug)!;
    assert.equal(row('chutes').trigger.text, 'reference');
    // Fireworks calls the tool where the new reference never does: every call is a false positive.
    assert.equal(row('fireworks').trigger.f1, 0);
    assert.match(row('fireworks').trigger.detail, /FP 2/);
    // A provider that fails every request never triggers: against a never-triggering reference that is all TN.
    assert.equal(row('atlas-cloud').trigger.f1, null);
    assert.match(row('atlas-cloud').trigger.detail, /TN 2/);
  });

  it('highlights a provider that served another provider’s answer', () => {
    const fw = s.results.get('fireworks')!;
    const spoofed = { ...fw, verified: false, servedBy: ['Fireworks', 'Novita'] };
    const v = compareView({ ...s, results: new Map([...s.results, ['fireworks', spoofed]]) });
    assert.deepEqual(v.rows[0].served, { names: ['Fireworks', 'Novita'], verified: false, mismatch: true });
  });

  it('names samples for diff titles by provider and sample number', () => {
    const id = s.results.get('groq')!.samples.find((x) => x.sample === 1)!.outcome.exchangeId!;
    assert.equal(sampleLabel(s, id), 'groq #2');
    assert.equal(sampleLabel(s, 'no-such-id'), undefined);
  });
});

describe('comparison matrix before any result', () => {
  it('shows every planned sample as pending', () => {
    const v = compareView(state([], 3));
    assert.equal(v.rows.length, 4);
    for (const r of v.rows) {
      assert.deepEqual(
        r.samples.map((c) => `${c.label}:${c.state}`),
        [1, 2, 3].map((k) => `${r.slug} #${k}:pending`),
      );
      assert.equal(r.trigger.text, r.isReference ? 'reference' : '—');
      assert.equal(r.ttft, '—');
      assert.equal(r.name, r.slug, 'unknown to the endpoint list: the slug is the name');
    }
  });
});

describe('comparison wording', () => {
  const endpoint: ProviderEndpoint = {
    slug: 'atlas-cloud',
    name: 'AtlasCloud',
    quantization: 'fp8',
    contextLength: 131072,
    pricing: { prompt: 0.0000006, completion: 0.0000025 },
    status: -2,
    uptimeLast30m: 97.25,
  };

  it('describes a provider in the quick pick with quantization, price, uptime and state', () => {
    assert.deepEqual(providerPickItem(endpoint), {
      label: 'AtlasCloud',
      description: 'atlas-cloud · fp8',
      detail: 'degraded (status -2) · $0.60 / $2.50 per M tokens · uptime 97.3% · 131k context',
    });
    assert.equal(providerPickItem({ slug: 'x', name: 'X' }).detail, 'no details listed');
    assert.equal(endpointFacts({ ...endpoint, status: 0 }).down, false);
  });

  it('formats times and costs', () => {
    assert.equal(formatMs(412.4), '412 ms');
    assert.equal(formatMs(1530), '1.53 s');
    assert.equal(formatMs(undefined), '—');
    assert.equal(formatCost(0.000123456), '$0.000123');
    assert.equal(formatCost(0.00010229999999999999), '$0.000102', 'float noise is not shown');
    assert.equal(formatCost(1e-7), '$0.0000001', 'never an exponent');
    assert.equal(formatCost(undefined), '—');
  });

  it('validates the number of samples', () => {
    assert.equal(parseCount(' 5 ', 'Samples', 50), 5);
    for (const bad of ['0', '-1', '2.5', 'three', '', '51'])
      assert.equal(parseCount(bad, 'Samples', 50), 'Samples must be a whole number from 1 to 50');
  });

  it('takes the provider that served the original capture as the default reference', () => {
    const providers = [
      { slug: 'novita', endpoint: { slug: 'novita', name: 'Novita' } },
      { slug: 'fireworks', endpoint: { slug: 'fireworks', name: 'Fireworks' } },
    ];
    assert.equal(defaultReference(providers, 'Fireworks'), 'fireworks');
    assert.equal(defaultReference(providers, 'SomeoneElse'), 'novita');
    assert.equal(defaultReference(providers), 'novita');
  });
});
