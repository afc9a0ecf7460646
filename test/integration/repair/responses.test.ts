/**
 * Repair mode for OpenAI Responses in the proxy, with the official `openai` SDK as the client (its stream helper
 * rebuilds the response from the events and throws on an event for an item it does not have): a provider that leaks
 * a Kimi K2 call into `output_text` reaches the SDK as a `function_call` item, streamed and not; a truncated call
 * never does; a key the model streams in pieces is masked in both the upstream's and the delivered bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { startResponsesLeakyUpstream } from '../../fixtures/responses-leaky-upstream';
import { startRepairProxy } from '../../helpers/repair-proxy';

const KEY = 'sk-proj-AbCdEfGhIjKlMnOp0123456789';
const TOOLS = [
  {
    type: 'function' as const,
    name: 'exec_command',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  },
];
const INPUT = [{ role: 'user' as const, content: 'Create hello.txt' }];

async function rig(command: string, opts: { cut?: boolean; bare?: boolean; incomplete?: boolean } = {}) {
  const up = await startResponsesLeakyUpstream(command, { ...opts, lingerMs: 0 });
  const proxy = await startRepairProxy(up, { default: up.url, openai: `${up.url}/v1` });
  return { ...proxy, client: new OpenAI({ baseURL: `${proxy.url}/openai/v1`, apiKey: 'sk-test' }), up };
}

test('the openai SDK receives the leaked call as a function_call item, streamed (stream helper) and not', async () => {
  const r = await rig("printf 'hi\\n' > hello.txt");
  try {
    const stream = r.client.responses.stream({ model: 'moonshotai/kimi-k2-0905', input: INPUT, tools: TOOLS });
    let text = '';
    const seqs: number[] = [];
    for await (const ev of stream) {
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(text, 'I will create the file now.');
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => seqs[0] + i),
      'sequence numbers rise by one',
    );
    assert.deepEqual(
      final.output.map((o) => o.type),
      ['message', 'function_call'],
    );
    const call = final.output[1];
    assert.ok(call.type === 'function_call');
    assert.deepEqual(
      [call.call_id, call.name, JSON.parse(call.arguments)],
      ['functions.exec_command:0', 'exec_command', { cmd: "printf 'hi\\n' > hello.txt" }],
    );
    assert.equal(final.output_text, 'I will create the file now.');

    const whole = await r.client.responses.create({ model: 'moonshotai/kimi-k2-0905', input: INPUT, tools: TOOLS });
    assert.deepEqual(
      whole.output.map((o) => o.type),
      ['message', 'function_call'],
    );
    assert.equal(whole.output_text, 'I will create the file now.');
    const wholeCall = whole.output[1];
    assert.ok(wholeCall.type === 'function_call');
    assert.equal(wholeCall.call_id, call.call_id, 'the same turn gets the same call id streamed or not');
    assert.equal(wholeCall.id, call.id, 'and the same item id');
    assert.equal(whole.status, 'completed');
    await r.store.idle();
    const repaired = r.store.list().filter((x) => x.repair);
    assert.equal(repaired.length, 2);
  } finally {
    await r.close();
  }
});

test('a message of markup alone, cut at max_output_tokens after the call: the SDK gets only the call, status completed', async () => {
  const r = await rig("printf 'hi\\n' > hello.txt", { bare: true, incomplete: true });
  try {
    const stream = r.client.responses.stream({ model: 'moonshotai/kimi-k2-0905', input: INPUT, tools: TOOLS });
    const types: string[] = [];
    const seqs: number[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
    }
    const final = await stream.finalResponse();
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i),
      'sequence numbers from 0, rising by one',
    );
    assert.ok(!types.some((t) => t.startsWith('response.output_text') || t.startsWith('response.content_part')), types.join(', '));
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(final.status, 'completed');
    assert.deepEqual(
      final.output.map((o) => o.type),
      ['function_call'],
    );
    assert.equal(final.output_text, '');
    const whole = await r.client.responses.create({ model: 'moonshotai/kimi-k2-0905', input: INPUT, tools: TOOLS });
    assert.equal(whole.status, 'completed');
    assert.equal(whole.incomplete_details, null);
    assert.deepEqual(
      whole.output.map((o) => o.type),
      ['function_call'],
    );
    await r.store.idle();
    const x = r.store.list().find((e) => e.repair)!;
    assert.equal(x.repair!.protocol, 'openai-responses');
    assert.deepEqual(x.repair!.finishReason, { upstream: 'incomplete', delivered: 'completed' });
  } finally {
    await r.close();
  }
});

test('a truncated call never reaches the SDK as a call: the streamed response fails, the whole one has status failed', async () => {
  const r = await rig("printf 'hi\\n' > hello.txt", { cut: true });
  try {
    const stream = r.client.responses.stream({ model: 'moonshotai/kimi-k2-0905', input: INPUT, tools: TOOLS });
    const types: string[] = [];
    let failed: any;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.failed') failed = ev.response;
    }
    assert.ok(!types.some((t) => t.startsWith('response.function_call')), types.join(', '));
    assert.equal(failed?.status, 'failed');
    assert.deepEqual(
      failed.output.map((o: any) => o.type),
      ['message'],
    );
    assert.equal(failed.output[0].content[0].text, 'I will create the file now.');
    const whole = await r.client.responses.create({ model: 'moonshotai/kimi-k2-0905', input: INPUT, tools: TOOLS });
    assert.equal(whole.status, 'failed');
    assert.ok(!whole.output.some((o) => o.type === 'function_call'));
  } finally {
    await r.close();
  }
});

test('a key the model streams in pieces is masked in the upstream bytes and in the delivered bytes', async () => {
  const r = await rig(`curl -H 'Authorization: Bearer ${KEY}' http://127.0.0.1/ > hello.txt`);
  try {
    const stream = r.client.responses.stream({ model: 'moonshotai/kimi-k2-0905', input: INPUT, tools: TOOLS });
    for await (const _ of stream);
    const final = await stream.finalResponse();
    assert.ok(
      final.output.some((o) => o.type === 'function_call'),
      'the call was delivered',
    );
    await r.store.idle();
    const x = r.store.list().find((e) => e.repair)!;
    assert.ok(x, 'the exchange was repaired');
    const upstream = Buffer.from(r.store.readResponse(x.id)!.bytes).toString('utf8');
    const delivered = Buffer.from(r.store.readDelivered(x.id)!).toString('utf8');
    assert.match(upstream, /tool_calls_section_begin/);
    assert.match(delivered, /"type":"function_call"/);
    for (const [name, body] of [
      ['upstream', upstream],
      ['delivered', delivered],
    ]) {
      assert.ok(!body.includes(KEY), `${name} bytes hold the key`);
      assert.ok(!body.includes(KEY.slice(0, 20)), `${name} bytes hold most of the key`);
    }
  } finally {
    await r.close();
  }
});
