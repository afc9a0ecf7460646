import assert from 'node:assert/strict';
import { test } from 'node:test';
import { READ_TOOL, startOpenRouterEmulator, type ProviderSpec } from '../../fixtures/openrouter-emulator';

function chatBody(slug: string, extra: Record<string, unknown> = {}) {
  return {
    model: 'moonshotai/kimi-k2-0905',
    stream: true,
    messages: [{ role: 'user', content: 'Read the README' }],
    tools: [READ_TOOL],
    provider: { only: [slug], allow_fallbacks: false },
    ...extra,
  };
}

async function post(url: string, body: unknown, key: string | null = 'sk-or-test') {
  return fetch(`${url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, comments kept apart. */
function sse(text: string) {
  const events = text.split('\n\n').filter(Boolean);
  return {
    comments: events.filter((e) => e.startsWith(':')),
    data: events.filter((e) => e.startsWith('data: ')).map((e) => e.slice(6)),
  };
}

test('healthy stream: comments, gen id, display name, structured call, finish, usage chunk, [DONE]', async () => {
  const emu = await startOpenRouterEmulator();
  try {
    const res = await post(emu.url, chatBody('fireworks'));
    assert.equal(res.status, 200);
    const genId = res.headers.get('x-generation-id');
    assert.match(genId ?? '', /^gen-\d+-[A-Za-z0-9]{20}$/);
    const { comments, data } = sse(await res.text());
    assert.ok(comments.includes(': OPENROUTER PROCESSING'));
    assert.equal(data.at(-1), '[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    for (const c of chunks) {
      assert.equal(c.id, genId);
      assert.equal(c.provider, 'Fireworks');
      assert.equal(c.object, 'chat.completion.chunk');
    }
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.ok(usage.usage.cost > 0 && usage.usage.completion_tokens > 0);
    const finish = chunks.at(-2).choices[0];
    assert.equal(finish.finish_reason, 'tool_calls');
    assert.equal(finish.native_finish_reason, 'tool_calls');
    const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    assert.equal(calls[0].id, 'functions.read:0');
    const args = calls.map((t: any) => t.function.arguments).join('');
    assert.deepEqual(JSON.parse(args), { path: 'README.md' });

    const stats = await fetch(`${emu.url}/api/v1/generation?id=${genId}`, { headers: { authorization: 'Bearer k' } }).then((r) => r.json());
    assert.equal(stats.data.provider_name, 'Fireworks');
    assert.equal(stats.data.finish_reason, 'tool_calls');
    assert.equal(emu.requests[0].headers.authorization, 'Bearer sk-or-test');
  } finally {
    await emu.close();
  }
});

test('leaky personality: markup in content without the section end, finish "stop"', async () => {
  const emu = await startOpenRouterEmulator();
  try {
    const res = await post(emu.url, chatBody('chutes', { stream: false }));
    const body = await res.json();
    const choice = body.choices[0];
    assert.equal(body.provider, 'Chutes');
    assert.equal(choice.finish_reason, 'stop');
    assert.equal(choice.message.tool_calls, undefined);
    assert.ok(
      choice.message.content.includes(
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "README.md"}<|tool_call_end|>',
      ),
    );
    assert.ok(!choice.message.content.includes('<|tool_calls_section_end|>'));
  } finally {
    await emu.close();
  }
});

test('reasoning personality ends reasoning with a truncated section end', async () => {
  const emu = await startOpenRouterEmulator();
  try {
    const body = await (await post(emu.url, chatBody('baseten', { stream: false }))).json();
    assert.ok(body.choices[0].message.reasoning.endsWith('<|tool_call_end|><|tool_calls_section_end|'));
  } finally {
    await emu.close();
  }
});

test('mid-stream error: documented error event with finish_reason "error", no [DONE]', async () => {
  const emu = await startOpenRouterEmulator();
  try {
    const { data } = sse(await (await post(emu.url, chatBody('deepinfra'))).text());
    const last = JSON.parse(data.at(-1)!);
    assert.equal(last.error.code, 'server_error');
    assert.equal(last.choices[0].finish_reason, 'error');
    assert.ok(!data.includes('[DONE]'));
  } finally {
    await emu.close();
  }
});

test('routing: pinned down provider errors without fallback; fallback when allowed; 429 carries Retry-After', async () => {
  const emu = await startOpenRouterEmulator();
  try {
    const pinned = await post(emu.url, chatBody('atlas-cloud'));
    assert.equal(pinned.status, 502);
    assert.equal((await pinned.json()).error.metadata.provider_name, 'AtlasCloud');

    const fallback = await post(emu.url, chatBody('x', { provider: { order: ['atlas-cloud', 'novita'] }, stream: false }));
    assert.equal((await fallback.json()).provider, 'Novita');

    const limited = await post(emu.url, chatBody('gmicloud'));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '1');
    await limited.body?.cancel();
    assert.equal((await post(emu.url, chatBody('gmicloud'))).status, 200);

    assert.equal((await post(emu.url, chatBody('fireworks'), null)).status, 401);
  } finally {
    await emu.close();
  }
});

test('bad id, schema violation and HTML personalities are configurable', async () => {
  const providers: ProviderSpec[] = [
    { slug: 'parasail', name: 'Parasail', personality: 'bad-id' },
    { slug: 'groq', name: 'Groq', personality: 'schema-violation' },
    { slug: 'novita', name: 'Novita', personality: 'html-injection' },
  ];
  const emu = await startOpenRouterEmulator({ providers });
  try {
    const msg = async (slug: string) => (await (await post(emu.url, chatBody(slug, { stream: false }))).json()).choices[0].message;
    assert.equal((await msg('parasail')).tool_calls[0].id, 'functions_read_1');
    assert.deepEqual(JSON.parse((await msg('groq')).tool_calls[0].function.arguments), { path: 42 });
    const html = (await msg('novita')).content;
    assert.ok(html.includes('<img src=x onerror=alert(1)>') && html.includes('<script>'));
  } finally {
    await emu.close();
  }
});

test('endpoints list and client abort are visible', async () => {
  const emu = await startOpenRouterEmulator({ latencyMs: 2000 });
  try {
    const list = await fetch(`${emu.url}/api/v1/models/moonshotai/kimi-k2-0905/endpoints`, { headers: { authorization: 'Bearer k' } }).then(
      (r) => r.json(),
    );
    const tags = list.data.endpoints.map((e: any) => e.tag);
    assert.ok(tags.includes('fireworks') && tags.includes('atlas-cloud'));
    assert.equal(list.data.endpoints.find((e: any) => e.tag === 'atlas-cloud').status < 0, true);

    const ac = new AbortController();
    const res = await fetch(`${emu.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('fireworks')),
      signal: ac.signal,
    });
    ac.abort();
    await res.text().catch(() => undefined);
    const deadline = Date.now() + 20_000; // the emulator learns of the abort on its own schedule
    while (!emu.requests.at(-1)!.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(emu.requests.at(-1)!.aborted, true);
  } finally {
    await emu.close();
  }
});

test('after a tool result the model answers in prose, so agents end their turn', async () => {
  const emu = await startOpenRouterEmulator();
  try {
    const messages = [
      { role: 'user', content: 'Read the README' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '{"path":"README.md"}' } }],
      },
      { role: 'tool', tool_call_id: 'functions.read:0', content: '# Tokenscope' },
    ];
    const body = await (await post(emu.url, chatBody('fireworks', { stream: false, messages }))).json();
    assert.equal(body.choices[0].finish_reason, 'stop');
    assert.equal(body.choices[0].message.tool_calls, undefined);
    assert.ok(body.choices[0].message.content.length > 0);
  } finally {
    await emu.close();
  }
});
