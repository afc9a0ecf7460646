/**
 * Real clients through the proxy: the `openai` SDK, the Vercel AI SDK's `@ai-sdk/openai-compatible`,
 * `@anthropic-ai/sdk`, and the real OpenCode CLI, each against a local emulator. The agent must not notice the
 * proxy, and the capture must show what went wrong on the wire.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText } from 'ai';
import OpenAI from 'openai';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { startSglangEmulator } from '../../fixtures/sglang-emulator';
import { agentSessionId } from '../../../src/core/proxy/session';
import { openCodeMissing, runOpenCode } from '../../helpers/agent-cli';
import { startRig, startUpstream, tempDir } from '../../unit/proxy/local-upstream';

const KEY = 'sk-or-v1-clienttest0123456789abcdef';

test("openai SDK: a leaky provider's stream reaches the SDK unchanged and its capture is flagged", async () => {
  const emu = await startOpenRouterEmulator();
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  try {
    const client = new OpenAI({ baseURL: `${rig.proxy.url}/openrouter/v1`, apiKey: KEY });
    // OpenRouter's routing object is not in the OpenAI types; the SDK sends unknown fields as they are.
    const params: OpenAI.ChatCompletionCreateParamsStreaming & { provider: object } = {
      model: 'moonshotai/kimi-k2-0905',
      stream: true,
      messages: [{ role: 'user', content: 'List the files.' }],
      tools: [
        {
          type: 'function',
          function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
        },
      ],
      provider: { only: ['chutes'] },
    };
    const stream = await client.chat.completions.create(params);
    let content = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.match(content, /<\|tool_calls_section_begin\|>/, 'the leak reaches the client as the provider sent it');
    assert.equal(finish, 'stop');
    await rig.store.idle();
    const x = rig.store.list()[0];
    assert.equal(x.agent, 'openai-sdk');
    assert.equal(x.servedProvider, 'Chutes');
    assert.deepEqual(x.pin, { requested: ['chutes'], honoured: true });
    assert.ok(x.summary, 'analysed');
    assert.ok(x.summary!.counts.error >= 1, JSON.stringify(x.summary));
    assert.ok(x.summary!.rules.includes('section-unclosed'), x.summary!.rules.join(', '));
    assert.equal(x.summary!.finishReason, 'stop');
    assert.equal(emu.requests[0].headers.authorization, `Bearer ${KEY}`);
  } finally {
    await rig.close();
    await emu.close();
  }
});

test('Vercel AI SDK (@ai-sdk/openai-compatible + streamText) through the default /v1 route', async () => {
  const emu = await startOpenRouterEmulator();
  const rig = await startRig({ default: `${emu.url}/api` });
  try {
    const provider = createOpenAICompatible({ name: 'tokenscope', baseURL: `${rig.proxy.url}/v1`, apiKey: KEY });
    const result = streamText({
      model: provider('moonshotai/kimi-k2-0905'),
      prompt: 'Say hello.',
      providerOptions: { tokenscope: { provider: { only: ['fireworks'] } } },
    });
    let text = '';
    for await (const t of result.textStream) text += t;
    assert.ok(text.length > 0);
    assert.equal(await result.finishReason, 'stop');
    await rig.store.idle();
    const x = rig.store.list()[0];
    assert.equal(x.route, 'default');
    assert.equal(x.agent, 'ai-sdk');
    assert.equal(x.state, 'complete');
    assert.equal(x.servedProvider, 'Fireworks');
    assert.deepEqual(x.summary?.counts, { error: 0, warning: 0, info: 0 }, x.summary?.rules.join(', '));
  } finally {
    await rig.close();
    await emu.close();
  }
});

test('openai SDK against SGLang through /sglang', async (t) => {
  const sg = await startSglangEmulator();
  const rig = await startRig({ sglang: sg.url });
  try {
    const client = new OpenAI({ baseURL: `${rig.proxy.url}/sglang/v1`, apiKey: 'none' });
    const r = await client.chat.completions.create({ model: 'moonshotai/Kimi-K2.5', messages: [{ role: 'user', content: 'hi' }] });
    assert.ok(r.choices[0].message);
    await rig.store.idle();
    const x = rig.store.list()[0];
    assert.equal(x.route, 'sglang');
    assert.equal(x.upstreamUrl, `${sg.url}/v1/chat/completions`);
    assert.equal(x.summary?.protocol, 'openai-chat');
  } finally {
    await rig.close();
    await sg.close();
  }
});

/** A small Anthropic Messages upstream (wire-formats.md §5): a streamed tool_use turn, and count_tokens. */
function anthropicUpstream(seen: { path: string; headers: Record<string, unknown> }[]) {
  const events = [
    {
      type: 'message_start',
      message: {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Reading it.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01', name: 'read', input: {} } },
    { type: 'ping' },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path": "READ' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'ME.md"}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } },
    { type: 'message_stop' },
  ];
  return startUpstream((req, res) => {
    req.resume();
    seen.push({ path: req.url!, headers: req.headers });
    if (req.url!.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"input_tokens":12}');
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_01' });
    let i = 0;
    const next = () => {
      if (i === events.length) return res.end();
      const e = events[i++];
      res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      setTimeout(next, 2);
    };
    next();
  });
}

test('@anthropic-ai/sdk: streamed tool use and count_tokens pass; anthropic-version and anthropic-beta reach the upstream', async () => {
  const seen: { path: string; headers: Record<string, unknown> }[] = [];
  const up = await anthropicUpstream(seen);
  const rig = await startRig({ anthropic: up.url });
  try {
    const client = new Anthropic({ baseURL: `${rig.proxy.url}/anthropic`, apiKey: 'sk-ant-api03-clienttest0123456789' });
    const tools = [
      { name: 'read', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] } },
    ];
    const stream = client.messages.stream(
      { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Read the readme.' }], tools },
      { headers: { 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14' } },
    );
    const msg = await stream.finalMessage();
    assert.equal(msg.stop_reason, 'tool_use');
    const call = msg.content.find((b) => b.type === 'tool_use');
    assert.deepEqual(call && 'input' in call ? call.input : undefined, { path: 'README.md' });
    const count = await client.messages.countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(count.input_tokens, 12);

    assert.equal(seen[0].path, '/v1/messages');
    assert.ok(seen[0].headers['anthropic-version']);
    assert.equal(seen[0].headers['anthropic-beta'], 'fine-grained-tool-streaming-2025-05-14');
    assert.equal(seen[1].path, '/v1/messages/count_tokens');
    await rig.store.idle();
    const [counted, streamed] = rig.store.list();
    assert.equal(streamed.agent, 'anthropic-sdk');
    assert.match(streamed.requestHeaders['x-api-key'] ?? streamed.requestHeaders.authorization, /^\[REDACTED:/);
    assert.ok(!JSON.stringify(streamed).includes('clienttest'), 'the key is not in the capture');
    assert.equal(streamed.summary?.protocol, 'anthropic-messages');
    assert.equal(streamed.summary?.finishReason, 'tool_calls');
    assert.equal(counted.path, '/anthropic/v1/messages/count_tokens');
    assert.equal(counted.state, 'complete');
  } finally {
    await rig.close();
    await up.close();
  }
});

test('the real OpenCode CLI, launched as agents.ts says, through the proxy: the leaky exchange is captured and flagged', async (t) => {
  const missing = openCodeMissing();
  if (missing) return t.skip(missing);
  const emu = await startOpenRouterEmulator({ providers: [{ slug: 'chutes', name: 'Chutes', personality: 'leak-content' }] });
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  const home = tempDir('tokenscope-opencode-');
  try {
    const { code, out } = await runOpenCode({ proxyUrl: rig.proxy.url, home: home.dir, key: KEY, prompt: 'List the files here.' });
    assert.equal(code, 0, out.slice(-2000));
    assert.match(out, /tool_calls_section_begin/, 'OpenCode printed the leaked markup it was given');

    // The key reached the upstream: OpenCode substituted {env:OPENROUTER_API_KEY} in the inline config.
    assert.ok(emu.requests.length >= 1);
    for (const r of emu.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    await rig.store.idle();
    const withTools = rig.store.list().filter((x) => x.agent === 'opencode' && /"tools"/.test(rig.store.get(x.id)!.requestBody ?? ''));
    assert.equal(withTools.length, 1, 'the agent turn (with tools) was captured once');
    const x = withTools[0];
    assert.equal(x.servedProvider, 'Chutes');
    assert.ok(x.summary && x.summary.counts.error >= 1, JSON.stringify(x.summary));
    assert.ok(x.summary!.rules.includes('section-unclosed'), x.summary!.rules.join(', '));
    assert.ok(!JSON.stringify(rig.store.get(x.id)).includes(KEY), 'the key is not in the capture');
    // The session is OpenCode's own (its session header), not the idle window's.
    const sent = emu.requests.find((r) => /"tools"/.test(r.raw.toString()))!;
    const session = agentSessionId(sent.headers, 'opencode');
    assert.ok(session, `OpenCode sends a session header: ${Object.keys(sent.headers).join(', ')}`);
    assert.equal(x.sessionId, session);
  } finally {
    await rig.close();
    await emu.close();
    home.remove();
  }
});
