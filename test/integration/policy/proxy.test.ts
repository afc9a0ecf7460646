/**
 * Per-model provider policy in the proxy: a request for the model carries the merged `provider` object upstream
 * (with a correct content-length), the merge is recorded on the exchange; other models' requests reach the upstream
 * byte for byte; against the OpenRouter emulator the avoided provider is not the one that serves.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import type { CapturedExchange } from '../../../src/core/model';
import { openStore } from '../../../src/core/capture/store';
import { policyStage, type Policies } from '../../../src/core/policy/policy';
import { startProxy } from '../../../src/core/proxy/server';
import { main } from '../../../src/cli/main';
import { READ_TOOL, startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { exited, rawRequest, serveChild, startUpstream, tempDir } from '../../unit/proxy/local-upstream';

const POLICIES: Policies = { 'moonshotai/kimi-k2-0905': { ignore: ['chutes'], allow_fallbacks: true } };

async function rig(upstream: string, policies: Policies = POLICIES) {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  const proxy = await startProxy({
    port: 0,
    store,
    upstreams: { openrouter: upstream, default: upstream, custom: { local: upstream } },
    requestStage: policyStage(() => policies),
  });
  return { proxy, store, dataDir: tmp.dir, close: async () => (await proxy.close(), await store.close(), tmp.remove()) };
}

test("the policy model's request carries the merged provider object; other models and routes are byte-identical", async () => {
  const seen: { path: string; headers: Record<string, unknown>; body: Buffer }[] = [];
  const up = await startUpstream((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      seen.push({ path: req.url!, headers: req.headers, body: Buffer.concat(parts) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}');
    });
  });
  const r = await rig(`${up.url}/api`);
  try {
    const send = (path: string, body: string) =>
      rawRequest(`${r.proxy.url}${path}`, { headers: { 'content-type': 'application/json' }, body });
    const kimi =
      '{"model": "moonshotai/kimi-k2-0905", "messages": [{"role": "user", "content": "héllo"}], "provider": {"order": ["chutes", "fireworks"], "sort": "price"}}';
    const other =
      '{"model":  "moonshotai/kimi-k2.5", "messages": [{"role": "user", "content": "héllo"}], "provider": {"order": ["chutes"]}}';
    assert.equal((await send('/openrouter/v1/chat/completions', kimi)).status, 200);
    assert.equal((await send('/openrouter/v1/chat/completions', other)).status, 200);
    assert.equal((await send('/u/local/v1/chat/completions', kimi)).status, 200);

    const sent = JSON.parse(seen[0].body.toString('utf8'));
    assert.deepEqual(sent.provider, { order: ['chutes', 'fireworks'], sort: 'price', ignore: ['chutes'], allow_fallbacks: true });
    assert.deepEqual(sent.messages, [{ role: 'user', content: 'héllo' }]);
    assert.equal(Number(seen[0].headers['content-length']), seen[0].body.length, 'content-length matches the changed body');
    assert.ok(seen[1].body.equals(Buffer.from(other)), 'another model: untouched bytes');
    assert.equal(Number(seen[1].headers['content-length']), Buffer.byteLength(other));
    assert.ok(seen[2].body.equals(Buffer.from(kimi)), 'a route that is not OpenRouter: untouched bytes');

    await r.store.idle();
    const [onLocal, onOther, onKimi] = r.store.list();
    assert.deepEqual(onKimi.policy, {
      model: 'moonshotai/kimi-k2-0905',
      policy: { ignore: ['chutes'], allow_fallbacks: true },
      agent: { order: ['chutes', 'fireworks'], sort: 'price' },
      sent: sent.provider,
    });
    assert.equal(onOther.policy, undefined);
    assert.equal(onLocal.policy, undefined);
    assert.match(r.store.get(onKimi.id)!.requestBody!, /"order": \["chutes", "fireworks"\]/, 'the capture keeps what the agent sent');
  } finally {
    await r.close();
    await up.close();
  }
});

test('against the emulator the ignored provider does not serve, and show says the policy was honoured', async () => {
  const emu = await startOpenRouterEmulator({
    providers: [
      { slug: 'chutes', name: 'Chutes', personality: 'leak-content' },
      { slug: 'fireworks', name: 'Fireworks', personality: 'correct' },
    ],
  });
  const r = await rig(`${emu.url}/api`);
  try {
    const body = JSON.stringify({
      model: 'moonshotai/kimi-k2-0905',
      messages: [{ role: 'user', content: 'hi' }],
      provider: { order: ['chutes'] },
    });
    const res = await rawRequest(`${r.proxy.url}/openrouter/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-v1-x' },
      body,
    });
    assert.equal(res.status, 200, res.body.toString());
    assert.equal(JSON.parse(res.body.toString()).provider, 'Fireworks');
    await r.store.idle();
    const x = r.store.list()[0];
    assert.equal(x.servedProvider, 'Fireworks');
    const out: string[] = [];
    await main(['show', x.id, '--data-dir', r.dataDir], { out: (t) => out.push(t), err: (t) => out.push(t) });
    assert.match(
      out.join('\n'),
      /policy +moonshotai\/kimi-k2-0905: provider \{"order":\["chutes"\],"ignore":\["chutes"\],"allow_fallbacks":true\} \(merged with the agent's \{"order":\["chutes"\]\}\); served by Fireworks, honoured/,
    );
  } finally {
    await r.close();
    await emu.close();
  }
});

test('serve --policy with a bad file stops with one line and starts nothing', async () => {
  const err: string[] = [];
  const code = await main(['serve', '--port', '0', '--policy', '/nonexistent/policy.json'], {
    out: () => undefined,
    err: (t) => err.push(t),
  });
  assert.equal(code, 2);
  assert.deepEqual(err, ['tokenscope serve: cannot read the policy file /nonexistent/policy.json: no such file']);
});

test('as a user runs it: serve --policy FILE, the openai SDK for the model gets the merged provider upstream, another model is byte-identical, show and captures say so', async () => {
  const emu = await startOpenRouterEmulator({
    providers: [
      { slug: 'moonshotai', name: 'Moonshot AI', personality: 'leak-content' },
      { slug: 'together', name: 'Together', personality: 'correct' },
      { slug: 'deepinfra', name: 'DeepInfra', personality: 'correct' },
    ],
  });
  const tmp = tempDir();
  const policyFile = join(tmp.dir, 'policy.json');
  writeFileSync(policyFile, JSON.stringify({ 'moonshotai/kimi-k2-0905': { ignore: ['moonshotai'] } }));
  const s = await serveChild([
    '--port',
    '0',
    '--data-dir',
    join(tmp.dir, 'data'),
    '--openrouter-url',
    `${emu.url}/api`,
    '--policy',
    policyFile,
  ]);
  try {
    const client = new OpenAI({ baseURL: `${s.url}/openrouter/v1`, apiKey: 'sk-or-v1-policyuser0123456789' });
    const params = {
      model: 'moonshotai/kimi-k2-0905',
      stream: true,
      messages: [{ role: 'user', content: 'read a' }],
      tools: [READ_TOOL],
      provider: { order: ['moonshotai', 'together'], sort: 'price' },
    };
    let served: string | undefined;
    for await (const c of await client.chat.completions.create(params as OpenAI.ChatCompletionCreateParamsStreaming))
      served ??= (c as { provider?: string }).provider;
    assert.equal(served, 'Together', 'the avoided provider did not serve, although the agent put it first');
    const up = emu.requests.filter((r) => r.path.endsWith('/chat/completions'));
    assert.deepEqual(up[0].body.provider, { order: ['moonshotai', 'together'], sort: 'price', ignore: ['moonshotai'] });
    assert.deepEqual(up[0].body.messages, params.messages);

    const other =
      '{"model":"moonshotai/kimi-k2.5",  "messages":[{"role":"user","content":"h\\u00e9llo"}], "provider":{"order":["moonshotai"]}}';
    const res = await rawRequest(`${s.url}/openrouter/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-v1-policyuser0123456789' },
      body: other,
    });
    assert.equal(res.status, 200);
    assert.ok(emu.requests.at(-1)!.raw.equals(Buffer.from(other)), 'another model: the bytes reach OpenRouter unchanged');
    assert.equal(JSON.parse(res.body.toString()).provider, 'Moonshot AI', "and its routing is the agent's own");

    s.child.kill('SIGTERM');
    await exited(s.child);
    const out: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
    assert.equal(await main(['captures', '--data-dir', join(tmp.dir, 'data'), '--json'], io), 0);
    const [onOther, onKimi] = JSON.parse(out.join('\n')) as CapturedExchange[];
    assert.equal(onOther.policy, undefined);
    assert.deepEqual(onKimi.policy, {
      model: 'moonshotai/kimi-k2-0905',
      policy: { ignore: ['moonshotai'] },
      agent: params.provider,
      sent: up[0].body.provider,
    });
    out.length = 0;
    assert.equal(await main(['show', onKimi.id, '--data-dir', join(tmp.dir, 'data')], io), 0);
    assert.match(
      out.join('\n'),
      /^policy +moonshotai\/kimi-k2-0905: provider \{"order":\["moonshotai","together"\],"sort":"price","ignore":\["moonshotai"\]\} \(merged with the agent's \{"order":\["moonshotai","together"\],"sort":"price"\}\); served by Together, honoured/m,
    );
  } finally {
    s.child.kill('SIGKILL');
    await emu.close();
    tmp.remove();
  }
});
