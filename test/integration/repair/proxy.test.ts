/**
 * Repair mode in the proxy, with real clients: the `openai` SDK and the Vercel AI SDK (`@ai-sdk/openai-compatible`
 * + `streamText`) receive structured tool calls from a provider that leaks Kimi K2, Qwen3/Hermes, GLM or DeepSeek
 * markup into content, streamed and not; a truncated call never reaches them as a call; and every healthy recording
 * in ../shared/recordings passes byte for byte with repair on.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { getFormat } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';
import type { RepairSettings } from '../../../src/core/repair/stage';
import { main } from '../../../src/cli/main';
import { RECORDINGS, recording } from '../../helpers/shared';
import { prng, randomSplit } from '../../helpers/prng';
import { rawRequest, startUpstream } from '../../unit/proxy/local-upstream';
import { startRepairProxy } from '../../helpers/repair-proxy';

const TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'read',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

async function rig(handler: (req: IncomingMessage, res: ServerResponse, body: any) => void, settings: Partial<RepairSettings> = {}) {
  const up = await startUpstream((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => handler(req, res, JSON.parse(Buffer.concat(parts).toString('utf8') || 'null')));
  });
  const proxy = await startRepairProxy(up, { default: up.url, openrouter: up.url }, settings);
  return { ...proxy, url: `${proxy.url}/v1` };
}

/** The family's native text for "Let me look." plus one read call, up to the end of the call (no end-of-turn marker). */
function leak(family: FamilyId, opts: { cutInArguments?: boolean } = {}): string {
  const r = getFormat(family).render({ content: 'Let me look.', toolCalls: [{ index: 0, name: 'read', arguments: '{"path":"a.md"}' }] });
  if (opts.cutInArguments) return r.text.slice(0, r.segments.find((s) => s.kind === 'arguments')!.start + 10);
  const end = Math.max(...r.segments.filter((s) => s.kind === 'section' || s.kind === 'call').map((s) => s.end));
  return r.text.slice(0, end);
}

/** A provider that writes `text` into content (streamed in 5-character deltas, or whole) and finishes with `stop`. */
function leaky(text: string) {
  return (_req: IncomingMessage, res: ServerResponse, body: any) => {
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: body.model };
    if (!body.stream) {
      const json = JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      return res.end(json);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const events: object[] = [];
    for (let i = 0; i < text.length; i += 5)
      events.push({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: text.slice(i, i + 5) }, finish_reason: null }] });
    events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    let i = 0;
    const next = () => {
      if (i === events.length) return res.end('data: [DONE]\n\n');
      res.write(`data: ${JSON.stringify(events[i++])}\n\n`);
      setImmediate(next);
    };
    next();
  };
}

const FAMILIES: [FamilyId, string][] = [
  ['kimi-k2', 'moonshotai/kimi-k2-0905'],
  ['qwen3', 'qwen/qwen3-235b-a22b-2507'],
  ['glm45', 'z-ai/glm-4.6'],
  ['deepseek-v31', 'deepseek/deepseek-chat-v3.1'],
];

for (const [family, model] of FAMILIES) {
  test(`${family}: the openai SDK (streamed and not) and AI SDK streamText receive a structured call`, async () => {
    const r = await rig(leaky(leak(family)));
    try {
      const client = new OpenAI({ baseURL: r.url, apiKey: 'sk-test' });
      const stream = await client.chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'Read a.md' }],
        tools: TOOLS,
      });
      let content = '';
      let finish: string | null = null;
      const calls: Record<number, { id?: string; name: string; args: string }> = {};
      for await (const chunk of stream) {
        const c = chunk.choices[0];
        content += c?.delta?.content ?? '';
        for (const t of c?.delta?.tool_calls ?? []) {
          const call = (calls[t.index] ??= { name: '', args: '' });
          call.id ??= t.id;
          call.name += t.function?.name ?? '';
          call.args += t.function?.arguments ?? '';
        }
        finish = c?.finish_reason ?? finish;
      }
      assert.equal(content.trim(), 'Let me look.');
      assert.equal(finish, 'tool_calls');
      assert.deepEqual(
        Object.values(calls).map((c) => [c.name, JSON.parse(c.args)]),
        [['read', { path: 'a.md' }]],
      );
      if (family === 'kimi-k2') assert.equal(calls[0].id, 'functions.read:0');

      const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Read a.md' }], tools: TOOLS });
      assert.equal(whole.choices[0].finish_reason, 'tool_calls');
      assert.equal(whole.choices[0].message.content, 'Let me look.');
      const call = whole.choices[0].message.tool_calls?.[0];
      assert.ok(call && call.type === 'function');
      assert.deepEqual([call.function.name, JSON.parse(call.function.arguments)], ['read', { path: 'a.md' }]);
      assert.equal(call.id, calls[0].id, 'the same turn gets the same id streamed or not');

      const provider = createOpenAICompatible({ name: 'tokenscope', baseURL: r.url, apiKey: 'sk-test' });
      const result = streamText({
        model: provider(model),
        prompt: 'Read a.md',
        tools: {
          read: tool({
            description: 'Read a file',
            inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
          }),
        },
      });
      let text = '';
      for await (const t of result.textStream) text += t;
      assert.equal(text.trim(), 'Let me look.');
      assert.equal(await result.finishReason, 'tool-calls');
      assert.deepEqual(
        (await result.toolCalls).map((c) => [c.toolName, c.input]),
        [['read', { path: 'a.md' }]],
      );

      await r.store.idle();
      const xs = r.store.list();
      assert.equal(xs.length, 3);
      for (const x of xs) {
        assert.equal(x.repair?.calls[0]?.status, 'delivered', JSON.stringify(x.repair));
        assert.ok(x.summary!.counts.error >= 1, 'findings are computed on the upstream bytes');
        const upstream = Buffer.from(r.store.readResponse(x.id)!.bytes).toString('utf8');
        const delivered = Buffer.from(r.store.readDelivered(x.id)!).toString('utf8');
        assert.ok(upstream.includes(JSON.stringify(leak(family).slice(0, 5)).slice(1, -1)), 'the body is what the upstream sent');
        assert.notEqual(delivered, upstream);
        assert.match(delivered, /"tool_calls"/);
      }
      if (family === 'kimi-k2') {
        const out: string[] = [];
        assert.equal(await main(['show', xs[0].id, '--data-dir', r.dataDir], { out: (t) => out.push(t), err: (t) => out.push(t) }), 0);
        const text = out.join('\n');
        assert.match(
          text,
          /repaired +1 call delivered as tool_calls, \d+ chars of markup removed from content, finish_reason stop → tool_calls/,
        );
        assert.match(text, /repair: delivered read \(id functions\.read:0, from content, kimi-k2\)/);
        assert.match(text, /markup-in-content/, 'findings on the upstream bytes');
      }
    } finally {
      await r.close();
    }
  });
}

test('a truncated call reaches neither SDK as a call: finish_reason error, no tool calls (withhold)', async () => {
  const r = await rig(leaky(leak('kimi-k2', { cutInArguments: true })));
  try {
    const client = new OpenAI({ baseURL: r.url, apiKey: 'sk-test' });
    const whole = await client.chat.completions.create({
      model: 'moonshotai/kimi-k2-0905',
      messages: [{ role: 'user', content: 'Read a.md' }],
      tools: TOOLS,
    });
    assert.equal(whole.choices[0].finish_reason, 'error' as never);
    assert.equal(whole.choices[0].message.tool_calls, undefined);
    assert.equal(whole.choices[0].message.content, 'Let me look.');
    const provider = createOpenAICompatible({ name: 'tokenscope', baseURL: r.url, apiKey: 'sk-test' });
    const result = streamText({
      model: provider('moonshotai/kimi-k2-0905'),
      prompt: 'Read a.md',
      tools: { read: tool({ inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } } }) }) },
    });
    let text = '';
    for await (const t of result.textStream) text += t;
    assert.equal(text, 'Let me look.');
    assert.deepEqual(await result.toolCalls, []);
    assert.notEqual(await result.finishReason, 'tool-calls');
    await r.store.idle();
    for (const x of r.store.list()) assert.equal(x.repair?.calls[0]?.status, 'withheld');
  } finally {
    await r.close();
  }
});

test('with repair on, every healthy recording passes through byte-identical (random upstream reads)', async (t) => {
  if (!recording(RECORDINGS[0])) return t.skip('the shared recordings folder (../shared/recordings) is absent');
  let served: { body: Buffer; sse: boolean } = { body: Buffer.alloc(0), sse: false };
  let seed = 0;
  const r = await rig((_req, res) => {
    if (!served.sse) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': served.body.length });
      return res.end(served.body);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const parts = randomSplit(served.body, prng(++seed), 40);
    const next = () => (parts.length ? (res.write(parts.shift()!), setTimeout(next, 1)) : res.end());
    next();
  });
  try {
    let checked = 0;
    for (const name of RECORDINGS) {
      const rec = recording(name);
      if (!rec) continue;
      const sse = rec.files['stream.sse'] !== undefined;
      const file = join(rec.dir, sse ? 'stream.sse' : 'response.json');
      served = { body: readFileSync(file), sse };
      const model = JSON.parse(rec.files['label.json']).model_hint?.split(' ')[0];
      const request = rec.files['request.json'] ?? JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hi in Portuguese' }] });
      for (let round = 0; round < (sse ? 5 : 1); round++) {
        const got = await rawRequest(`${r.url}/chat/completions`, { headers: { 'content-type': 'application/json' }, body: request });
        assert.equal(got.status, 200);
        assert.ok(got.body.equals(served.body), `${name} round ${round}: delivered bytes differ from the recording`);
      }
      checked++;
    }
    await r.store.idle();
    for (const x of r.store.list()) {
      assert.equal(x.repair, undefined, x.path);
      assert.equal(r.store.readDelivered(x.id), undefined);
    }
    assert.equal(checked, RECORDINGS.length);
  } finally {
    await r.close();
  }
});

test('repair applies per route and per model; other exchanges keep the untouched path', async () => {
  const text = leak('kimi-k2');
  const r = await rig(leaky(text), { models: ['local/*'], routes: ['default'] });
  try {
    const client = new OpenAI({ baseURL: r.url, apiKey: 'sk-test' });
    const kimi = await client.chat.completions.create({
      model: 'moonshotai/kimi-k2-0905',
      messages: [{ role: 'user', content: 'x' }],
      tools: TOOLS,
    });
    assert.equal(kimi.choices[0].message.content, text, 'a model outside the list is not repaired');
    const local = await client.chat.completions.create({
      model: 'local/my-finetune',
      messages: [{ role: 'user', content: 'x' }],
      tools: TOOLS,
    });
    assert.equal(
      local.choices[0].message.tool_calls?.[0]?.id,
      'functions.read:0',
      'the markers tell the family when the model id names none',
    );
    const other = new OpenAI({ baseURL: r.url.replace(/\/v1$/, '/openrouter/v1'), apiKey: 'sk-test' });
    const routed = await other.chat.completions.create({
      model: 'local/my-finetune',
      messages: [{ role: 'user', content: 'x' }],
      tools: TOOLS,
    });
    assert.equal(routed.choices[0].message.content, text, 'a route outside the list is not repaired');
  } finally {
    await r.close();
  }
});
