import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import { compareProviders, type ProviderResult } from '../../../src/core/upstream/compare';
import { OpenRouterClient } from '../../../src/core/upstream/openrouter';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';

const REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  stream: true,
  messages: [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Read the README' },
  ],
  tools: [
    {
      type: 'function',
      function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    },
  ],
};

const client = (url: string) => new OpenRouterClient({ baseUrl: url, apiKey: 'sk-or-v1-test' });

test('compare: every provider of the live list, metrics per provider, failures kept, served provider verified', async () => {
  const emu = await startOpenRouterEmulator({ chunkDelayMs: 1 });
  try {
    const seen: string[] = [];
    const report = await compareProviders({
      request: REQUEST,
      client: client(emu.url),
      samples: 2,
      onSample: (s) => seen.push(`${s.provider}#${s.sample}`),
    });
    const row = (slug: string) => report.providers.find((p) => p.slug === slug) as ProviderResult;
    assert.equal(report.providers.length, 10, 'all providers from the endpoints list');
    assert.equal(seen.length, 20, 'every sample reported as it finished');
    assert.equal(report.reference, 'fireworks');

    const ok = row('fireworks');
    assert.equal(ok.name, 'Fireworks');
    assert.equal(ok.verified, true);
    assert.deepEqual(ok.servedBy, ['Fireworks']);
    assert.deepEqual(ok.finishReasons, { tool_calls: 2 });
    assert.deepEqual([ok.schema.successful, ok.schema.finishToolCalls, ok.schema.accuracy], [2, 2, 1]);
    assert.equal(ok.trigger.f1, 1);
    assert.ok(ok.ttftMs! >= 0 && ok.tokensPerSecond! > 0 && ok.costUsd! > 0);
    assert.ok(
      ok.samples.every((s) => s.generation?.providerName === 'Fireworks'),
      'generation stats consulted',
    );

    // Leaks markup into content and says "stop": never triggers → F1 0 against a reference that calls the tool.
    const leak = row('chutes');
    assert.deepEqual(leak.finishReasons, { stop: 2 });
    assert.deepEqual([leak.trigger.tp, leak.trigger.fn, leak.trigger.f1], [0, 2, 0]);
    assert.equal(leak.schema.accuracy, null);
    assert.ok(Object.keys(leak.findingsByRule).length > 0, `findings on the leak: ${JSON.stringify(leak.findingsByRule)}`);

    assert.equal(row('together').schema.accuracy, 0, 'truncated JSON arguments fail the schema');
    assert.equal(row('groq').schema.accuracy, 0, 'schema-violating arguments');
    assert.equal(row('parasail').schema.accuracy, 1, 'K2VV does not judge ids: the bad id is a finding, not a schema failure');
    assert.ok(Object.keys(row('parasail').findingsByRule).length > 0, 'the bad id is flagged');

    const down = row('atlas-cloud');
    assert.equal(down.failed, 2);
    assert.ok(
      down.samples.every((s) => s.outcome.status === 502 && /Provider returned error/.test(s.outcome.error ?? '') && s.outcome.errorBody),
    );
    assert.notEqual(down.verified, false, 'no other provider answered for it');
    assert.ok(
      down.servedBy.every((n) => n === 'AtlasCloud'),
      `served by ${down.servedBy}`,
    );
    const midstream = row('deepinfra');
    assert.equal(midstream.failed, 2);
    assert.match(midstream.samples[0].outcome.error ?? '', /Provider disconnected unexpectedly/);
    assert.equal(midstream.samples[0].finishReason, undefined, 'an error event makes the request a failure for the metrics');

    // Every request was pinned without fallbacks; none to the down provider was answered by another one.
    const chats = emu.requests.filter((r) => r.path === '/api/v1/chat/completions');
    assert.ok(chats.every((r) => r.body.provider.allow_fallbacks === false && r.body.provider.only.length === 1));
    assert.ok(chats.every((r) => r.headers['x-openrouter-title'] === 'Tokenscope' && r.headers['http-referer']));
  } finally {
    await emu.close();
  }
});

test('compare: a 429 with Retry-After is waited out and retried', async () => {
  const emu = await startOpenRouterEmulator({
    providers: [
      { slug: 'fireworks', name: 'Fireworks', personality: 'correct' },
      { slug: 'gmicloud', name: 'GMICloud', personality: 'rate-limited', retryAfterSec: 1 },
    ],
  });
  try {
    const report = await compareProviders({ request: REQUEST, client: client(emu.url), samples: 1 });
    const limited = report.providers.find((p) => p.slug === 'gmicloud')!;
    assert.equal(limited.failed, 0);
    const hits = emu.requests.filter((r) => r.body?.provider?.only?.[0] === 'gmicloud');
    assert.equal(hits.length, 2, 'one 429, one retry');
    assert.ok(limited.samples[0].outcome.durationMs >= 950, `waited Retry-After (took ${limited.samples[0].outcome.durationMs} ms)`);
  } finally {
    await emu.close();
  }
});

test('compare: a provider slug the model is not served by is refused before any request is sent', async () => {
  const emu = await startOpenRouterEmulator({
    providers: [
      { slug: 'fireworks', name: 'Fireworks', personality: 'correct' },
      { slug: 'deepinfra/fp4', name: 'DeepInfra', personality: 'correct' },
    ],
  });
  try {
    await assert.rejects(
      compareProviders({ request: REQUEST, client: client(emu.url), providers: ['fireworks', 'firewroks'], samples: 3 }),
      (e: Error) =>
        e.name === 'UserError' &&
        e.message === '"firewroks" does not serve moonshotai/kimi-k2-0905 on OpenRouter; its providers: fireworks, deepinfra/fp4',
    );
    assert.equal(emu.requests.filter((r) => r.path === '/api/v1/chat/completions').length, 0, 'nothing was paid for');
    // A provider named without its quantization tag is one of the model's providers all the same.
    const report = await compareProviders({ request: REQUEST, client: client(emu.url), providers: ['deepinfra'], samples: 1 });
    assert.equal(report.providers[0].slug, 'deepinfra');
  } finally {
    await emu.close();
  }
});

test('compare: cancelling aborts requests in flight; the emulator sees the aborts; queued samples never start', async () => {
  const emu = await startOpenRouterEmulator({ latencyMs: 10_000 });
  try {
    const ac = new AbortController();
    const started = Date.now();
    const running = compareProviders({
      request: REQUEST,
      client: client(emu.url),
      providers: ['fireworks', 'novita', 'chutes'],
      samples: 3,
      concurrency: 4,
      signal: ac.signal,
    });
    const chats = () => emu.requests.filter((r) => r.path === '/api/v1/chat/completions');
    while (chats().length < 4 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 10));
    // Timed from the abort: reaching the emulator can take seconds on a loaded machine, answers take 10 s from there.
    const abortedAt = Date.now();
    ac.abort();
    const report = await running;
    assert.ok(Date.now() - abortedAt < 5000, `returned promptly, not after the 10 s latency (${Date.now() - abortedAt} ms)`);
    assert.equal(report.cancelled, true);
    assert.equal(chats().length, 4, 'bounded concurrency: only 4 started, the rest never did');
    const deadline = Date.now() + 20_000; // the emulator learns of the aborts on its own schedule
    while (chats().some((r) => !r.aborted) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(
      chats().every((r) => r.aborted),
      'every in-flight request was aborted at the upstream',
    );
    const samples = report.providers.flatMap((p) => p.samples);
    assert.equal(samples.length, 4);
    assert.ok(samples.every((s) => s.outcome.cancelled && s.outcome.error === 'cancelled'));
  } finally {
    await emu.close();
  }
});

test('compare CLI: a capture id, samples recorded as linked captures, JSON report', async () => {
  const emu = await startOpenRouterEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-compare-'));
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
  try {
    const store = await openStore(dir, { analyze: false });
    const w = store.begin({
      route: 'openrouter',
      upstreamUrl: `${emu.url}/api/v1/chat/completions`,
      method: 'POST',
      path: '/openrouter/v1/chat/completions',
      requestHeaders: {},
      requestBody: JSON.stringify(REQUEST),
    });
    w.responseStarted(200, {});
    const original = await w.finish();
    await store.close();

    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
    const code = await main(
      [
        'compare',
        original.id,
        '--providers',
        'fireworks,chutes',
        '--samples',
        '2',
        '--openrouter-url',
        emu.url,
        '--data-dir',
        dir,
        '--json',
      ],
      io,
    );
    assert.equal(code, 0, err.join('\n'));
    const report = JSON.parse(out.join(''));
    assert.deepEqual(
      report.providers.map((p: any) => p.slug),
      ['fireworks', 'chutes'],
    );
    assert.equal(report.providers[1].trigger.f1, 0);

    const after = await openStore(dir, { analyze: false });
    const children = after.list().filter((x) => x.parentId === original.id);
    await after.close();
    assert.equal(children.length, 4);
    assert.deepEqual([...new Set(children.map((x) => x.target))].sort(), ['openrouter:chutes', 'openrouter:fireworks']);
    assert.ok(
      children.every((x) => x.requestHeaders.authorization !== 'Bearer sk-or-v1-test'),
      'the key never reaches the store',
    );

    const list: string[] = [];
    assert.equal(
      await main(['compare', '--list', '--model', 'moonshotai/kimi-k2-0905', '--openrouter-url', emu.url], {
        out: (t) => list.push(t),
        err: (t) => list.push(t),
      }),
      0,
    );
    assert.match(list.join('\n'), /atlas-cloud +AtlasCloud +fp8 +\$0\.60 \/ \$2\.50 +degraded or down \(status -2\), uptime 12\.5%/);

    const text: string[] = [];
    const code2 = await main(['compare', '--request', join(dir, 'missing.json'), '--openrouter-url', emu.url], {
      out: (t) => text.push(t),
      err: (t) => text.push(t),
    });
    assert.equal(code2, 2);
    assert.match(text.join(''), /cannot read .*missing\.json: no such file$/);
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
});

test('compare --list escapes control characters in the listing it prints (a provider name with colour codes)', async () => {
  const emu = await startOpenRouterEmulator({
    providers: [{ slug: 'evil', name: 'Evil\u001b[31mRED\u001b]0;pwned\u0007', personality: 'correct' }],
  });
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
  try {
    const list: string[] = [];
    assert.equal(
      await main(['compare', '--list', '--model', 'moonshotai/kimi-k2-0905', '--openrouter-url', emu.url], {
        out: (t) => list.push(t),
        err: (t) => list.push(t),
      }),
      0,
    );
    const text = list.join('\n');
    assert.match(text, /evil +Evil\\e\[31mRED\\e\]0;pwned\\u\{7\}/);
    assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text), JSON.stringify(text));
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    await emu.close();
  }
});

test('compare --list keeps the listed slugs in the data dir, for policy set and the scorecard to check against', async () => {
  const emu = await startOpenRouterEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-list-'));
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
  try {
    const out: string[] = [];
    assert.equal(
      await main(['compare', '--list', '--model', 'moonshotai/kimi-k2-0905', '--openrouter-url', emu.url, '--data-dir', dir], {
        out: (t) => out.push(t),
        err: (t) => out.push(t),
      }),
      0,
    );
    const store = await openStore(dir, { readOnly: true, analyze: false });
    const slugs = store.providerSlugs().map((e) => e.slug);
    await store.close();
    assert.ok(slugs.includes('atlas-cloud') && slugs.includes('chutes'), slugs.join(', '));
    const policy: string[] = [];
    assert.equal(
      await main(['policy', 'set', 'moonshotai/kimi-k2-0905', '--ignore', 'chutes', '--data-dir', dir], {
        out: (t) => policy.push(t),
        err: (t) => policy.push(`ERR ${t}`),
      }),
      0,
    );
    assert.ok(!policy.some((l) => l.startsWith('ERR')), policy.join('\n'));
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
});
