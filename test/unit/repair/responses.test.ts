/**
 * Repair of OpenAI Responses responses (src/core/repair/responses.ts): leaked Kimi K2 markup in `output_text`
 * delivered as `function_call` output items, streamed (typed events, renumbered) and whole.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolDef } from '../../../src/core/model';
import { repairResponsesBody, ResponsesSseRepair } from '../../../src/core/repair/responses';
import { protocolRepair, repairContext } from '../../../src/core/repair/stage';
import { repairPreview } from '../../../src/core/repair/preview';
import { parseResponseBody } from '../../../src/core/wire/index';
import { prng, randomSplit } from '../../helpers/prng';
import { ctxFor, pieces } from './helpers';

const SB = '<|tool_calls_section_begin|>';
const SE = '<|tool_calls_section_end|>';
const CB = '<|tool_call_begin|>';
const AB = '<|tool_call_argument_begin|>';
const CE = '<|tool_call_end|>';
const SHELL: ToolDef = { name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } };
const ARGS = '{"cmd": "echo hi > hello.txt"}';
const CALL = `${SB}${CB}functions.exec_command:0${AB}${ARGS}${CE}`;
const LEAK = `I'll write it.${CALL}`;
const ctx = (truncated: 'withhold' | 'passthrough' = 'withhold') => ctxFor('kimi-k2', { tools: [SHELL], truncated });

type Item =
  | { type: 'message'; deltas: string[]; id?: string }
  | { type: 'reasoning'; text: string }
  | { type: 'function_call'; name: string; arguments: string; callId: string };

/** An OpenAI-shaped Responses stream (named events, numbered from 0) for the given output items and final status. */
function responsesStream(items: Item[], status: 'completed' | 'incomplete' = 'completed'): string {
  let seq = 0;
  const out: string[] = [];
  const ev = (type: string, data: object) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const response = (s: string, output: object[]) => ({
    id: 'resp_1',
    object: 'response',
    created_at: 1,
    status: s,
    model: 'moonshotai/kimi-k2',
    output,
    ...(s === 'incomplete' && { incomplete_details: { reason: 'max_output_tokens' } }),
    usage: null,
  });
  ev('response.created', { response: response('in_progress', []) });
  ev('response.in_progress', { response: response('in_progress', []) });
  const finals: object[] = [];
  items.forEach((it, output_index) => {
    if (it.type === 'reasoning') {
      const id = `rs_${output_index}`;
      const done = { id, type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: it.text }] };
      ev('response.output_item.added', { output_index, item: { id, type: 'reasoning', summary: [] } });
      ev('response.reasoning_text.delta', { item_id: id, output_index, content_index: 0, delta: it.text });
      ev('response.reasoning_text.done', { item_id: id, output_index, content_index: 0, text: it.text });
      ev('response.output_item.done', { output_index, item: done });
      finals.push(done);
    } else if (it.type === 'message') {
      const id = it.id ?? `msg_${output_index}`;
      const text = it.deltas.join('');
      const part = { type: 'output_text', text, annotations: [] };
      const done = { id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
      ev('response.output_item.added', { output_index, item: { ...done, status: 'in_progress', content: [] } });
      ev('response.content_part.added', { item_id: id, output_index, content_index: 0, part: { ...part, text: '' } });
      for (const delta of it.deltas) ev('response.output_text.delta', { item_id: id, output_index, content_index: 0, delta, logprobs: [] });
      ev('response.output_text.done', { item_id: id, output_index, content_index: 0, text, logprobs: [] });
      ev('response.content_part.done', { item_id: id, output_index, content_index: 0, part });
      ev('response.output_item.done', { output_index, item: done });
      finals.push(done);
    } else {
      const id = `fc_up${output_index}`;
      const done = { id, type: 'function_call', status: 'completed', arguments: it.arguments, call_id: it.callId, name: it.name };
      ev('response.output_item.added', { output_index, item: { ...done, status: 'in_progress', arguments: '' } });
      ev('response.function_call_arguments.delta', { item_id: id, output_index, delta: it.arguments });
      ev('response.function_call_arguments.done', { item_id: id, output_index, arguments: it.arguments });
      ev('response.output_item.done', { output_index, item: done });
      finals.push(done);
    }
  });
  ev(`response.${status}`, { response: response(status, finals) });
  return out.join('');
}

function feed(pieces: (string | Uint8Array)[], c = ctx()): { text: string; outs: Buffer[]; repair: ResponsesSseRepair } {
  const repair = new ResponsesSseRepair(c);
  const outs = pieces.map((p) => repair.push(Buffer.from(p)));
  outs.push(repair.end());
  return { outs, text: Buffer.concat(outs).toString('utf8'), repair };
}

interface View {
  /** Per delivered output_index: the item as `output_item.done` gave it. */
  items: any[];
  /** Per output_index: the text its deltas add up to. */
  deltaText: Map<number, string>;
  /** Function-call arguments as their deltas add up, per output_index. */
  argDeltas: Map<number, string>;
  terminal: any;
  types: string[];
}

/**
 * What a Responses client sees, checking on the way what every event stream must keep: sequence numbers rising by
 * one, items added in output_index order before any event of theirs, the `event:` name equal to the payload's type,
 * and each text part's deltas, `.done` text, part and item agreeing.
 */
function view(sse: string): View {
  const v: View = { items: [], deltaText: new Map(), argDeltas: new Map(), terminal: undefined, types: [] };
  let seq: number | undefined;
  const added = new Set<number>();
  for (const block of sse.split('\n\n')) {
    if (!block.trim()) continue;
    const lines = block.split('\n');
    const name = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const e = JSON.parse(
      lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n'),
    );
    assert.equal(name, e.type, 'event name matches the payload type');
    v.types.push(e.type);
    if (seq !== undefined) assert.equal(e.sequence_number, seq + 1, `sequence numbers rise by one at ${e.type}`);
    seq = e.sequence_number;
    const i = e.output_index;
    if (e.type === 'response.output_item.added') {
      assert.equal(i, added.size, 'items are added in output_index order');
      added.add(i);
    } else if (typeof i === 'number') assert.ok(added.has(i), `${e.type} for an item not added (${i})`);
    if (e.type === 'response.output_text.delta') v.deltaText.set(i, (v.deltaText.get(i) ?? '') + e.delta);
    if (e.type === 'response.output_text.done') assert.equal(e.text, v.deltaText.get(i) ?? '', 'output_text.done = its deltas');
    if (e.type === 'response.content_part.done') assert.equal(e.part.text, v.deltaText.get(i) ?? '', 'content_part.done = its deltas');
    if (e.type === 'response.function_call_arguments.delta') v.argDeltas.set(i, (v.argDeltas.get(i) ?? '') + e.delta);
    if (e.type === 'response.function_call_arguments.done') assert.equal(e.arguments, v.argDeltas.get(i));
    if (e.type === 'response.output_item.done') {
      v.items[i] = e.item;
      if (e.item.type === 'message') assert.equal(e.item.content[0].text, v.deltaText.get(i) ?? '', 'message item = its deltas');
      if (e.item.type === 'function_call') assert.equal(e.item.arguments, v.argDeltas.get(i));
    }
    if (/^response\.(completed|incomplete|failed)$/.test(e.type)) v.terminal = e.response;
  }
  if (v.terminal?.output?.length) assert.deepEqual(v.terminal.output, v.items, 'the terminal event lists the items as delivered');
  return v;
}

const calls = (v: View) =>
  v.items.filter((it) => it.type === 'function_call').map((it) => ({ call_id: it.call_id, name: it.name, arguments: it.arguments }));
const text = (v: View) =>
  v.items
    .filter((it) => it.type === 'message')
    .map((it) => it.content[0].text)
    .join('|');

test('streamed: a leaked Kimi call becomes a function_call item after its message; text, .done events and response.completed cleaned', () => {
  const upstream = responsesStream([{ type: 'message', deltas: pieces(LEAK, 5) }]);
  const { text: out, repair } = feed([upstream]);
  const v = view(out);
  assert.doesNotMatch(out, /<\|tool_call/);
  assert.equal(text(v), "I'll write it.");
  assert.deepEqual(calls(v), [{ call_id: 'functions.exec_command:0', name: 'exec_command', arguments: ARGS }]);
  assert.equal(v.items[1].status, 'completed');
  assert.match(v.items[1].id, /^fc_[0-9a-f]{32}$/);
  assert.equal(v.terminal.status, 'completed');
  // The function_call item is streamed as a server streams one: added (empty arguments), delta, done, item done.
  const at = v.types.indexOf('response.output_item.added', v.types.indexOf('response.output_item.done'));
  assert.deepEqual(v.types.slice(at, at + 5), [
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.completed',
  ]);
  const addedEvent = JSON.parse(
    out
      .split('\n\n')
      .find((b) => b.includes('"response.output_item.added"') && b.includes('function_call'))!
      .split('data: ')[1],
  );
  assert.deepEqual(addedEvent.item, {
    id: v.items[1].id,
    type: 'function_call',
    status: 'in_progress',
    arguments: '',
    call_id: 'functions.exec_command:0',
    name: 'exec_command',
  });
  const record = repair.record()!;
  assert.deepEqual(
    record.calls.map((c) => [c.status, c.id]),
    [['delivered', 'functions.exec_command:0']],
  );
  assert.equal(record.removedChars.content, CALL.length);
  assert.equal(record.protocol, 'openai-responses');
  // The status stays `completed`: no change of the turn's end to record.
  assert.equal(record.finishReason, undefined);
  // Tokenscope's own Responses parser reads the delivered stream as one tool call and finish tool_calls.
  const parsed = parseResponseBody(out, { path: '/v1/responses', contentType: 'text/event-stream' });
  assert.deepEqual(
    parsed.message.toolCalls.map((c) => [c.id, c.name, c.arguments]),
    [['functions.exec_command:0', 'exec_command', ARGS]],
  );
  assert.equal(parsed.message.content, "I'll write it.");
  assert.equal(parsed.finishReason, 'tool_calls');
});

test('streamed: two calls in one section become two items, numbered 1 and 2, Kimi ids in order', () => {
  const two = `Two.${SB}${CB}functions.exec_command:0${AB}{"cmd": "a"}${CE}${CB}functions.exec_command:1${AB}{"cmd": "b"}${CE}${SE}`;
  const v = view(feed([responsesStream([{ type: 'message', deltas: pieces(two, 9) }])]).text);
  assert.equal(text(v), 'Two.');
  assert.deepEqual(
    calls(v).map((c) => [c.call_id, JSON.parse(c.arguments).cmd]),
    [
      ['functions.exec_command:0', 'a'],
      ['functions.exec_command:1', 'b'],
    ],
  );
  assert.deepEqual(
    v.items.map((it) => it.type),
    ['message', 'function_call', 'function_call'],
  );
  assert.notEqual(v.items[1].id, v.items[2].id);
});

test('streamed: a truncated call is never delivered: withhold turns response.completed into response.failed', () => {
  const cut = `I'll write it.${SB}${CB}functions.exec_command:0${AB}{"cmd": "echo hi > hel`;
  const { text: out, repair } = feed([responsesStream([{ type: 'message', deltas: pieces(cut, 6) }])]);
  const v = view(out);
  assert.deepEqual(calls(v), []);
  assert.equal(text(v), "I'll write it.");
  assert.equal(v.types.at(-1), 'response.failed');
  assert.equal(v.terminal.status, 'failed');
  assert.match(v.terminal.error.message, /cut short/);
  const record = repair.record()!;
  assert.equal(record.calls[0].status, 'withheld');
  assert.deepEqual(record.finishReason, { upstream: 'completed', delivered: 'failed' });
  assert.equal(parseResponseBody(out, { path: '/v1/responses' }).finishReason, 'error');
});

test('streamed: a truncated call at max_output_tokens stays incomplete (already not a success), its markup removed', () => {
  const cut = `Go.${SB}${CB}functions.exec_command:0${AB}{"cmd": "ec`;
  const v = view(feed([responsesStream([{ type: 'message', deltas: [cut] }], 'incomplete')]).text);
  assert.deepEqual(calls(v), []);
  assert.equal(text(v), 'Go.');
  assert.equal(v.terminal.status, 'incomplete');
});

test('streamed: passthrough leaves a truncated call as the text it was, response.completed unchanged', () => {
  const cut = `I'll write it.${SB}${CB}functions.exec_command:0${AB}{"cmd": "ech`;
  const upstream = responsesStream([{ type: 'message', deltas: pieces(cut, 6) }]);
  const { text: out, repair } = feed([upstream], ctx('passthrough'));
  const v = view(out);
  assert.equal(text(v), cut);
  assert.deepEqual(calls(v), []);
  assert.equal(v.terminal.status, 'completed');
  assert.equal(repair.record()!.calls[0].status, 'passed-through');
  assert.equal(repair.record()!.finishReason, undefined);
});

test('streamed: text before and after the markup is kept, in order, without the markup', () => {
  const v = view(feed([responsesStream([{ type: 'message', deltas: pieces(`Before. ${CALL}${SE} After.`, 4) }])]).text);
  assert.equal(text(v), 'Before.  After.');
  assert.equal(calls(v).length, 1);
});

test('streamed: a message that held only markup is not delivered: its call takes its place, later items and events move down', () => {
  const upstream = responsesStream([
    { type: 'reasoning', text: 'Plan.' },
    { type: 'message', deltas: pieces(`\n${CALL}${SE}\n`, 8) },
    { type: 'message', deltas: ['After.'] },
  ]);
  for (const split of [[upstream], pieces(upstream, 1), upstream.split(/(?<=\n\n)/)]) {
    const { text: out, repair } = feed(split);
    // view() checks sequence numbers rise by one, items are added in output_index order, the terminal output agrees.
    const v = view(out);
    assert.deepEqual(
      v.items.map((it) => it.type),
      ['reasoning', 'function_call', 'message'],
    );
    assert.equal(calls(v)[0].call_id, 'functions.exec_command:0');
    assert.equal(text(v), 'After.');
    assert.doesNotMatch(out, /"msg_1"/, 'no event of the dropped message goes out');
    assert.equal(v.terminal.output.length, 3);
    assert.equal(repair.record()!.calls[0].status, 'delivered');
  }
  // A message that was empty at the upstream is its own: it is kept.
  const empty = view(feed([responsesStream([{ type: 'message', deltas: [] }])]).text);
  assert.deepEqual(
    empty.items.map((it) => it.type),
    ['message'],
  );
});

test('streamed: markup-only message at the start, upstream without sequence numbers or event names', () => {
  const upstream = responsesStream([
    { type: 'message', deltas: pieces(CALL, 5) },
    { type: 'message', deltas: ['Done.'] },
  ])
    .split('\n\n')
    .filter(Boolean)
    .map((b) => {
      const data = JSON.parse(
        b
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6),
      );
      delete data.sequence_number;
      return `data: ${JSON.stringify(data)}\n\n`;
    })
    .join('');
  const out = feed(pieces(upstream, 13)).text;
  const evs = out
    .split('\n\n')
    .filter(Boolean)
    .map((b) => JSON.parse(b.slice(6)));
  assert.ok(evs.every((e) => e.sequence_number === undefined));
  const done = evs.filter((e) => e.type === 'response.output_item.done').map((e) => [e.output_index, e.item.type]);
  assert.deepEqual(done, [
    [0, 'function_call'],
    [1, 'message'],
  ]);
  assert.deepEqual(
    evs.at(-1).response.output.map((i: any) => i.type),
    ['function_call', 'message'],
  );
});

test('streamed: reasoning items pass untouched; later items move up past the inserted call, upstream calls number first', () => {
  const upstream = responsesStream([
    { type: 'reasoning', text: 'I should use <b>exec_command</b>.' },
    { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}', callId: 'functions.exec_command:0' },
    { type: 'message', deltas: pieces(`Next.${SB}${CB}functions.exec_command:1${AB}{"cmd": "pwd"}${CE}${SE}`, 7) },
    { type: 'message', deltas: ['Done.'], id: 'msg_last' },
  ]);
  const { text: out } = feed([upstream]);
  const v = view(out);
  assert.deepEqual(
    v.items.map((it) => it.type),
    ['reasoning', 'function_call', 'message', 'function_call', 'message'],
  );
  assert.deepEqual(
    v.items[0],
    JSON.parse(
      upstream
        .split('\n\n')
        .find((b) => b.includes('"rs_0"') && b.includes('output_item.done'))!
        .split('data: ')[1],
    ).item,
  );
  assert.equal(v.items[4].id, 'msg_last');
  assert.equal(v.deltaText.get(4), 'Done.');
  assert.deepEqual(
    calls(v).map((c) => c.call_id),
    ['functions.exec_command:0', 'functions.exec_command:1'],
  );
  assert.equal(text(v), 'Next.|Done.');
  // Every event of the reasoning item is the upstream's, byte for byte, but for its sequence number.
  const reasoning = (s: string) =>
    s
      .split('\n\n')
      .filter((b) => b.includes('"output_index":0,'))
      .map((b) => b.replace(/"sequence_number":\d+/, ''));
  assert.equal(reasoning(out).length, 4);
  assert.deepEqual(reasoning(out), reasoning(upstream));
});

test('streamed: byte-by-byte and random splits (inside UTF-8 too) deliver the same events', () => {
  const upstream = Buffer.from(
    responsesStream([
      { type: 'message', deltas: pieces(`Voilà — ${LEAK}`, 3) },
      { type: 'message', deltas: ['fin'] },
    ]),
  );
  const whole = feed([upstream]).text;
  const bytes = Array.from(upstream, (b) => Uint8Array.of(b));
  assert.equal(feed(bytes).text, whole);
  for (let seed = 1; seed <= 30; seed++) assert.equal(feed(randomSplit(upstream, prng(seed), 40)).text, whole, `seed ${seed}`);
  const v = view(whole);
  assert.equal(text(v), "Voilà — I'll write it.|fin");
  assert.deepEqual(
    v.items.map((it) => it.type),
    ['message', 'function_call', 'message'],
  );
});

test('streamed: a stream without markup passes byte for byte, in the reads it came in; a "<" that is no marker is released', () => {
  const plain = responsesStream([{ type: 'message', deltas: ['plain ', 'prose'] }]);
  const parts = plain.split(/(?<=\n\n)/);
  const { outs, text: out, repair } = feed(parts);
  assert.equal(out, plain);
  // Each event in the read it came in, but a message item's start (added, content_part.added), which waits for its
  // first text: a message that turns out to hold only markup is not delivered.
  const first = parts.findIndex((p) => p.includes('"response.output_text.delta"'));
  const expected = parts.map((p, i) =>
    i === first - 2 || i === first - 1 ? '' : i === first ? parts.slice(first - 2, first + 1).join('') : p,
  );
  assert.match(parts[first - 2], /"response\.output_item\.added"/);
  assert.deepEqual(outs.slice(0, parts.length).map(String), expected);
  assert.equal(repair.record(), undefined);
  const angle = responsesStream([{ type: 'message', deltas: ['if a <', '|b then'] }]);
  const v = view(feed([angle]).text);
  assert.equal(text(v), 'if a <|b then');
  assert.equal(calls(v).length, 0);
});

test('streamed: a stream cut before response.completed releases the held text and the recovered call at the end', () => {
  const upstream = responsesStream([{ type: 'message', deltas: [`Hi.${CALL}`] }]);
  const cut = upstream.slice(0, upstream.indexOf('event: response.output_text.done'));
  const { text: out } = feed([cut]);
  assert.doesNotMatch(out, /tool_call_begin/);
  const types = out
    .split('\n\n')
    .filter(Boolean)
    .map((b) => JSON.parse(b.split('data: ')[1]).type);
  assert.deepEqual(types.slice(-4), [
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
  ]);
});

/** A non-streamed Responses body with the given output items. */
function body(output: object[], status = 'completed'): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status,
      model: 'moonshotai/kimi-k2',
      output,
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    }),
  );
}
const message = (t: string, id = 'msg_1') => ({
  id,
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text: t, annotations: [] }],
});
const reasoningItem = { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think <|tool_call_begin|> not here' }] };

test('whole body: the call becomes a function_call item after its message, the text cleaned, reasoning untouched', () => {
  const { bytes, record } = repairResponsesBody(body([reasoningItem, message(LEAK), message('bye', 'msg_2')]), ctx());
  const o = JSON.parse(bytes.toString());
  assert.deepEqual(
    o.output.map((it: any) => it.type),
    ['reasoning', 'message', 'function_call', 'message'],
  );
  assert.deepEqual(o.output[0], reasoningItem);
  assert.equal(o.output[1].content[0].text, "I'll write it.");
  assert.deepEqual(
    { ...o.output[2], id: 'x' },
    { id: 'x', type: 'function_call', status: 'completed', arguments: ARGS, call_id: 'functions.exec_command:0', name: 'exec_command' },
  );
  assert.equal(o.status, 'completed');
  assert.equal(record!.finishReason, undefined);
  const parsed = parseResponseBody(bytes, { path: '/v1/responses', contentType: 'application/json' });
  assert.equal(parsed.finishReason, 'tool_calls');
});

test('whole body: two calls, text around, and a truncated call', () => {
  const two = `A ${SB}${CB}functions.exec_command:0${AB}{"cmd": "a"}${CE}${CB}functions.exec_command:1${AB}{"cmd": "b"}${CE}${SE} B`;
  const o = JSON.parse(repairResponsesBody(body([message(two)]), ctx()).bytes.toString());
  assert.equal(o.output[0].content[0].text, 'A  B');
  assert.deepEqual(
    o.output.slice(1).map((it: any) => [it.call_id, JSON.parse(it.arguments).cmd]),
    [
      ['functions.exec_command:0', 'a'],
      ['functions.exec_command:1', 'b'],
    ],
  );
  const cut = repairResponsesBody(body([message(`Go.${SB}${CB}functions.exec_command:0${AB}{"cmd": "a`)]), ctx());
  const c = JSON.parse(cut.bytes.toString());
  assert.deepEqual(
    c.output.map((it: any) => it.type),
    ['message'],
  );
  assert.equal(c.output[0].content[0].text, 'Go.');
  assert.equal(c.status, 'failed');
  assert.equal(cut.record!.calls[0].status, 'withheld');
});

test('whole body: a message that held only markup is not delivered, its call in its place; an empty upstream message is kept', () => {
  const { bytes } = repairResponsesBody(body([reasoningItem, message(`\n${CALL}${SE}\n`), message('After.', 'msg_2')]), ctx());
  const o = JSON.parse(bytes.toString());
  assert.deepEqual(
    o.output.map((it: any) => [it.type, it.id === 'msg_2' || it.type !== 'message']),
    [
      ['reasoning', true],
      ['function_call', true],
      ['message', true],
    ],
  );
  assert.equal(o.output[1].call_id, 'functions.exec_command:0');
  const kept = repairResponsesBody(body([message(''), message(LEAK, 'msg_2')]), ctx());
  assert.deepEqual(
    JSON.parse(kept.bytes.toString()).output.map((it: any) => it.type),
    ['message', 'message', 'function_call'],
  );
});

test('whole body: nothing to repair gives the upstream bytes back untouched', () => {
  const b = body([message('plain <b>text</b>')]);
  const r = repairResponsesBody(b, ctx());
  assert.equal(r.bytes, b);
  assert.equal(r.record, undefined);
});

test('the protocol is chosen by path: /v1/responses repairs, other paths keep their own repair or none', () => {
  const req = JSON.stringify({
    model: 'moonshotai/kimi-k2',
    input: [{ type: 'message', role: 'user', content: 'hi' }],
    tools: [{ type: 'function', name: 'exec_command', parameters: SHELL.parameters }],
  });
  const c = repairContext(
    { enabled: true, truncated: 'withhold' },
    { route: 'openai', method: 'POST', path: '/openai/v1/responses', requestBody: req },
  );
  assert.equal(c?.format?.id, 'kimi-k2');
  assert.deepEqual(
    c?.tools.map((t) => t.name),
    ['exec_command'],
  );
  assert.ok(protocolRepair('/v1/responses?x=1'));
  assert.equal(protocolRepair('/v1/responses/resp_1'), undefined);
  const preview = repairPreview({
    requestBody: req,
    path: '/v1/responses',
    contentType: 'text/event-stream',
    bytes: Buffer.from(responsesStream([{ type: 'message', deltas: [LEAK] }])),
  });
  assert.deepEqual(preview?.calls, [{ id: 'functions.exec_command:0', name: 'exec_command', arguments: ARGS }]);
  assert.equal(preview?.finishReason, 'tool_calls');
});
