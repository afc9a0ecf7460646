/**
 * Repair mode in the proxy for Anthropic Messages, with the real `@anthropic-ai/sdk` client: a provider that leaks a
 * Kimi K2 call into a text block gives the client a `tool_use` block (streamed and not); a truncated call reaches it
 * as a failed turn, never a tool_use; healthy Anthropic streams pass byte for byte; a key streamed in pieces is
 * masked in the delivered copy as in the body.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { main } from '../../../src/cli/main';
import { kimiLeak, startAnthropicLeakyUpstream, type AnthropicLeakyUpstream } from '../../fixtures/anthropic-leaky-upstream';
import { prng, randomSplit } from '../../helpers/prng';
import { anthropicThinkingStream, anthropicToolStream } from '../../unit/wire/samples';
import { rawRequest, startUpstream } from '../../unit/proxy/local-upstream';
import { startRepairProxy } from '../../helpers/repair-proxy';

const TOOLS: Anthropic.Tool[] = [
  {
    name: 'write',
    description: 'Write a file',
    input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  },
];
const CALL = { name: 'write', arguments: { path: 'notes.md', content: 'hello' } };
const MODEL = 'moonshotai/kimi-k2-0905';
const ASK = { model: MODEL, max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Write notes.md' }], tools: TOOLS };

async function rig(up: { url: string; close(): Promise<void> }) {
  const proxy = await startRepairProxy(up, { anthropic: up.url });
  return {
    ...proxy,
    client: new Anthropic({ baseURL: `${proxy.url}/anthropic`, apiKey: 'sk-ant-api03-sdktest0123456789abcdef', maxRetries: 0 }),
  };
}

test('@anthropic-ai/sdk receives a tool_use block (streamed and not) for a Kimi call leaked into a text block', async () => {
  const up: AnthropicLeakyUpstream = await startAnthropicLeakyUpstream(CALL);
  const r = await rig(up);
  try {
    const streamed = await r.client.messages.stream(ASK).finalMessage();
    assert.equal(streamed.stop_reason, 'tool_use');
    const plain = (m: Anthropic.Message) =>
      m.content.map((b) =>
        b.type === 'text'
          ? { type: b.type, text: b.text }
          : b.type === 'tool_use'
            ? { type: b.type, id: b.id, name: b.name, input: b.input }
            : { type: b.type },
      );
    assert.deepEqual(plain(streamed), [
      { type: 'text', text: 'I will create the file now.' },
      { type: 'tool_use', id: 'functions_write_0', name: 'write', input: CALL.arguments },
    ]);
    const whole = await r.client.messages.create(ASK);
    assert.equal(whole.stop_reason, 'tool_use');
    assert.deepEqual(whole.content, [
      { type: 'text', text: 'I will create the file now.' },
      { type: 'tool_use', id: 'functions_write_0', name: 'write', input: CALL.arguments },
    ]);

    await r.store.idle();
    const xs = r.store.list();
    assert.equal(xs.length, 2);
    for (const x of xs) {
      assert.equal(x.repair?.calls[0]?.status, 'delivered', JSON.stringify(x.repair));
      assert.deepEqual(x.repair?.finishReason, { upstream: 'end_turn', delivered: 'tool_use' });
      assert.ok(x.summary!.counts.error >= 1, 'findings are computed on the upstream bytes');
      const delivered = Buffer.from(r.store.readDelivered(x.id)!).toString('utf8');
      assert.doesNotMatch(delivered, /tool_call/);
      assert.match(delivered, /"tool_use"/);
    }
    const out: string[] = [];
    assert.equal(await main(['show', xs[0].id, '--data-dir', r.dataDir], { out: (t) => out.push(t), err: (t) => out.push(t) }), 0);
    assert.match(out.join('\n'), /repair: delivered write \(id functions_write_0, from content, kimi-k2\)/);
    assert.match(
      out.join('\n'),
      /repaired +1 call delivered as tool_use blocks, \d+ chars of markup removed from text, stop_reason end_turn → tool_use;/,
    );
    assert.doesNotMatch(out.join('\n'), /repaired .*(tool_calls|finish_reason)/);
  } finally {
    await r.close();
  }
});

test('a truncated call never reaches the SDK as a tool_use: the stream fails with an error event, the body is an error', async () => {
  const up = await startAnthropicLeakyUpstream(CALL, { cut: true });
  const r = await rig(up);
  try {
    const s = r.client.messages.stream(ASK);
    let text = '';
    s.on('text', (t) => (text += t));
    await assert.rejects(s.finalMessage(), (e: Error) => /cut short and was not delivered/.test(e.message));
    assert.equal(text, 'I will create the file now.', 'the prose before the call still arrived');
    const whole = (await r.client.messages.create(ASK)) as unknown as { type: string; content?: unknown };
    assert.equal(whole.type, 'error');
    assert.equal(whole.content, undefined);
    await r.store.idle();
    for (const x of r.store.list()) {
      assert.equal(x.repair?.calls[0]?.status, 'withheld');
      assert.deepEqual(x.repair?.finishReason, { upstream: 'end_turn', delivered: 'error' });
    }
  } finally {
    await r.close();
  }
});

test('healthy Anthropic streams and bodies pass byte for byte with repair on (random upstream reads)', async () => {
  let served = { body: Buffer.alloc(0), sse: true };
  let seed = 0;
  const up = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!served.sse)
        return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': served.body.length }).end(served.body);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const parts = randomSplit(served.body, prng(++seed), 40);
      const next = () => (parts.length ? (res.write(parts.shift()!), setTimeout(next, 1)) : res.end());
      next();
    });
  });
  const r = await rig(up);
  try {
    const bodies = [
      { body: Buffer.from(anthropicToolStream), sse: true },
      { body: Buffer.from(anthropicThinkingStream), sse: true },
      {
        body: Buffer.from(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: MODEL,
            content: [{ type: 'text', text: 'if a < b then <toolbox>' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 1, output_tokens: 2 },
          }),
        ),
        sse: false,
      },
    ];
    for (const b of bodies) {
      served = b;
      for (let round = 0; round < (b.sse ? 5 : 1); round++) {
        const got = await rawRequest(`${r.url}/anthropic/v1/messages`, {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...ASK, stream: b.sse }),
        });
        assert.equal(got.status, 200);
        assert.ok(got.body.equals(b.body), `round ${round}: delivered bytes differ:\n${got.body}`);
      }
    }
    await r.store.idle();
    for (const x of r.store.list()) {
      assert.equal(x.repair, undefined, x.path);
      assert.equal(r.store.readDelivered(x.id), undefined);
    }
  } finally {
    await r.close();
  }
});

test('a key the model streams in pieces before the leaked call is masked in the delivered copy as in the body', async () => {
  const key = 'sk-proj-AbCdEfGhIjKlMnOp0123456789';
  const leak = kimiLeak(CALL, { prose: `Your key is ${key}, keep it. ` });
  const server = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (o: Record<string, unknown>) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
      let body = ev({
        type: 'message_start',
        message: {
          id: 'm',
          type: 'message',
          role: 'assistant',
          model: MODEL,
          content: [],
          stop_reason: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      });
      body += ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      for (let i = 0; i < leak.length; i += 7)
        body += ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: leak.slice(i, i + 7) } });
      body +=
        ev({ type: 'content_block_stop', index: 0 }) +
        ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }) +
        ev({ type: 'message_stop' });
      res.end(body);
    });
  });
  const r = await rig(server);
  try {
    const msg = await r.client.messages.stream(ASK).finalMessage();
    assert.equal(msg.stop_reason, 'tool_use');
    await r.store.idle();
    const x = r.store.list()[0];
    const full = r.store.get(x.id)!;
    assert.ok(full.masked?.where?.includes('delivered anthropic:0:text'), JSON.stringify(full.masked));
    assert.ok(full.masked?.where?.includes('response anthropic:0:text'), JSON.stringify(full.masked));
    const delivered = Buffer.from(r.store.readDelivered(x.id)!).toString('utf8');
    const joined = [...delivered.matchAll(/"text":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1])).join('');
    assert.ok(!joined.includes('AbCdEfGhIjKlMnOp'), joined);
    assert.match(joined, /^Your key is \S+, keep it\. $/);
  } finally {
    await r.close();
  }
});
