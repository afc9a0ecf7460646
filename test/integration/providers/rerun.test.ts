import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { OpenRouterClient } from '../../../src/core/upstream/openrouter';
import { rerun } from '../../../src/core/upstream/rerun';
import { parseTarget } from '../../../src/core/upstream/run';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { startSglangEmulator } from '../../fixtures/sglang-emulator';

const REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  stream: true,
  messages: [{ role: 'user', content: 'Read the README' }],
  tools: [
    {
      type: 'function',
      function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    },
  ],
  provider: { order: ['chutes'] },
  reasoning: { enabled: false },
};

/** A store holding one captured agent request (as the proxy would have recorded it). */
async function storeWithCapture(dir: string): Promise<{ store: CaptureStore; id: string }> {
  const store = await openStore(dir);
  const w = store.begin({
    route: 'openrouter',
    upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
    method: 'POST',
    path: '/openrouter/v1/chat/completions',
    requestHeaders: { authorization: 'Bearer sk-or-v1-secret' },
    requestBody: JSON.stringify(REQUEST),
    agent: 'opencode',
  });
  w.responseStarted(200, { 'content-type': 'text/event-stream' });
  w.chunk(new TextEncoder().encode('data: [DONE]\n\n'));
  return { store, id: (await w.finish()).id };
}

/**
 * A loopback port that refuses connections until `release`: the local end of a connection this test holds open.
 * Nothing listens on it, and while the connection lasts no other process can bind it (its socket does not allow
 * address reuse), so a connection to it is refused; a closed server's port could meanwhile be taken by another one.
 */
async function refusedPort(): Promise<{ port: number; release(): Promise<void> }> {
  const accepted: Socket[] = [];
  const srv = createServer((s) => void accepted.push(s));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const client = connect((srv.address() as { port: number }).port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => client.once('connect', resolve).once('error', reject));
  return {
    port: client.localPort!,
    release: async () => {
      client.destroy();
      for (const s of accepted) s.destroy();
      await new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

test('re-run on a pinned OpenRouter provider: a new capture linked to the original, flagged like any other', async () => {
  const emu = await startOpenRouterEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-rerun-'));
  const { store, id } = await storeWithCapture(dir);
  try {
    const o = await rerun(store, id.slice(0, 12), parseTarget('openrouter:chutes'), {
      openrouter: new OpenRouterClient({ baseUrl: emu.url, apiKey: 'sk-or-v1-test' }),
    });
    assert.equal(o.ok, true, o.error);
    assert.equal(o.servedProvider, 'Chutes');
    assert.ok(o.analysis!.findings.length > 0, 'the leaked markup is flagged');
    const sent = emu.requests.at(-1)!.body;
    assert.deepEqual(sent.provider, { only: ['chutes'], allow_fallbacks: false }, 'pin replaces the captured order');
    assert.deepEqual(sent.messages, REQUEST.messages, 'the captured request, as captured');

    await store.idle();
    const x = store.get(o.exchangeId!)!;
    assert.equal(x.parentId, id);
    assert.equal(x.target, 'openrouter:chutes');
    assert.equal(x.servedProvider, 'Chutes');
    assert.match(o.generationId ?? '', /^gen-/);
    assert.equal(x.generationId, o.generationId);
    assert.deepEqual(x.pin, { requested: ['chutes'], honoured: true });
    assert.ok(!JSON.stringify(x).includes('sk-or-v1-test'), 'no key in the capture');
    assert.ok(new TextDecoder().decode(store.readResponse(x.id)!.bytes).includes('<|tool_calls_section_begin|>'), 'raw stream kept');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
});

test('re-run on a pinned provider that is down: an error result, never a fallback', async () => {
  const emu = await startOpenRouterEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-rerun-'));
  const { store, id } = await storeWithCapture(dir);
  try {
    const o = await rerun(store, id, parseTarget('openrouter:atlas-cloud'), {
      openrouter: new OpenRouterClient({ baseUrl: emu.url, apiKey: 'k' }),
    });
    assert.equal(o.ok, false);
    assert.equal(o.status, 502);
    assert.match(o.error!, /^HTTP 502: Provider returned error \(AtlasCloud/);
    assert.equal(emu.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 1);
    assert.equal(store.get(o.exchangeId!)!.state, 'error');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
});

test('re-run on SGLang: chat completions with the thinking switch translated; native /generate with exact ids', async (t) => {
  const sglang = await startSglangEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-rerun-'));
  const { store, id } = await storeWithCapture(dir);
  try {
    const chat = await rerun(store, id, parseTarget(`sglang:${sglang.url}`));
    assert.equal(chat.ok, true, chat.error);
    const sent = sglang.requests.at(-1)!.body;
    assert.equal(sent.provider, undefined, 'OpenRouter routing stripped');
    assert.equal(sent.reasoning, undefined);
    assert.deepEqual(sent.chat_template_kwargs, { thinking: false }, 'reasoning.enabled=false → chat_template_kwargs.thinking');
    assert.equal(sent.model, 'moonshotai/Kimi-K2.5', 'served model name');
    assert.equal(sent.skip_special_tokens, false);
    assert.equal(chat.response?.finishReason, 'tool_calls');
    assert.equal(chat.response?.message.toolCalls[0].id, 'functions.read:0');

    const native = await rerun(store, id, parseTarget(`sglang-native:${sglang.url}`));
    assert.equal(native.ok, true, native.error);
    const gen = sglang.requests.at(-1)!;
    assert.equal(gen.path, '/generate');
    assert.ok(
      Array.isArray(gen.body.input_ids) && gen.body.input_ids.includes(163594),
      'prompt rendered with the model template: <|im_system|> id',
    );
    assert.equal(gen.body.sampling_params.skip_special_tokens, false);
    assert.ok(native.response?.outputIds?.includes(163595), 'output ids carry <|tool_calls_section_begin|>');
    await store.idle();
    assert.equal(store.get(native.exchangeId!)!.target, `sglang-native:${sglang.url}`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    await sglang.close();
  }
});

test('re-run on SGLang that is down or not ready: one clear line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-rerun-'));
  const { store, id } = await storeWithCapture(dir);
  await store.close();
  try {
    const refused = await refusedPort();
    const { port } = refused;
    const out: string[] = [];
    const argv = ['rerun', id, '--target', `sglang:http://127.0.0.1:${port}`, '--data-dir', dir];
    const code = await main(argv, { out: (s) => out.push(s), err: (s) => out.push(s) }).finally(() => refused.release());
    assert.equal(code, 2);
    assert.equal(out.length, 1);
    assert.match(out[0], new RegExp(`the SGLang server at http://127.0.0.1:${port} is not reachable \\(connection refused`));
    assert.ok(!out[0].includes('    at '), 'no stack trace');

    const sick = await startSglangEmulator({ unhealthy: true });
    try {
      const out2: string[] = [];
      const code2 = await main(['rerun', id, '--target', `sglang:${sick.url}`, '--data-dir', dir], {
        out: (s) => out2.push(s),
        err: (s) => out2.push(s),
      });
      assert.equal(code2, 2);
      assert.match(out2.join(''), /is not ready: GET \/health answered 503/);
    } finally {
      await sick.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rerun CLI: JSON outcome and the missing-key message', async () => {
  const emu = await startOpenRouterEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-rerun-'));
  const { store, id } = await storeWithCapture(dir);
  await store.close();
  const saved = process.env.OPENROUTER_API_KEY;
  try {
    delete process.env.OPENROUTER_API_KEY;
    const err: string[] = [];
    assert.equal(
      await main(['rerun', id, '--target', 'openrouter:fireworks', '--openrouter-url', emu.url, '--data-dir', dir], {
        out: () => {},
        err: (s) => err.push(s),
      }),
      2,
    );
    assert.match(err.join(''), /no OpenRouter API key: set OPENROUTER_API_KEY/);

    process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
    const out: string[] = [];
    const code = await main(['rerun', id, '--target', 'openrouter:fireworks', '--openrouter-url', emu.url, '--data-dir', dir, '--json'], {
      out: (s) => out.push(s),
      err: (s) => out.push(s),
    });
    assert.equal(code, 0, out.join('\n'));
    const o = JSON.parse(out.join(''));
    assert.equal(o.servedProvider, 'Fireworks');
    assert.equal(o.finishReason, 'tool_calls');
    assert.equal(o.target, 'openrouter:fireworks');
    assert.ok(o.exchangeId);

    const bad: string[] = [];
    assert.equal(await main(['rerun', id, '--target', 'ollama'], { out: () => {}, err: (s) => bad.push(s) }), 2);
    assert.match(bad.join(''), /unknown target "ollama"/);
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
});

test('a native /generate re-run records the served model (tokens ID works) and no false tool-unknown', async () => {
  const sglang = await startSglangEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-rerun-'));
  try {
    const { store, id } = await storeWithCapture(dir);
    let nativeId: string;
    try {
      const native = await rerun(store, id, parseTarget(`sglang-native:${sglang.url}`));
      assert.equal(native.ok, true, native.error);
      await store.idle();
      const x = store.get(native.exchangeId!)!;
      nativeId = x.id;
      assert.equal(x.requestModel, 'moonshotai/Kimi-K2.5', "the server's model, which the native body does not name");
      assert.equal(x.summary?.family, 'kimi-k2');
      const rules = store.readAnalysis?.(x.id)?.analysis.findings.map((f) => f.rule) ?? [];
      assert.ok(!rules.includes('tool-unknown'), `the native request had no tools list to judge names by: ${rules.join(', ')}`);
      assert.ok(
        /functions\.read/.test(native.response?.message.content ?? '') || native.response?.message.toolCalls.length,
        'the turn holds the call',
      );
    } finally {
      await store.close();
    }
    // `tokens ID` finds the model (Kimi K2's tokenizer ships with Tokenscope: offline).
    const err: string[] = [];
    const code = await main(['tokens', nativeId, '--data-dir', dir, '--offline', '--json'], {
      out: () => undefined,
      err: (s) => err.push(s),
    });
    assert.equal(code, 0, err.join('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await sglang.close();
  }
});
