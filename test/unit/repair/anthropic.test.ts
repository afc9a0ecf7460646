import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnthropicSseRepair, repairAnthropicBody } from '../../../src/core/repair/anthropic';
import type { TurnContext } from '../../../src/core/repair/turn';
import { parseResponseBody } from '../../../src/core/wire/index';
import { prng, randomSplit } from '../../helpers/prng';
import { ctxFor, pieces } from './helpers';

const SB = '<|tool_calls_section_begin|>';
const SE = '<|tool_calls_section_end|>';
const CB = '<|tool_call_begin|>';
const AB = '<|tool_call_argument_begin|>';
const CE = '<|tool_call_end|>';
const call = (id: string, args: string) => `${CB}${id}${AB}${args}${CE}`;
/** Kimi K2 markup as providers leak it: the section end missing. */
const KIMI_LEAK = `I'll write it.${SB}${call('functions.write:0', '{"path": "a.md", "content": "hi"}')}`;
const KIMI_CUT = `I'll write it.${SB}${CB}functions.write:0${AB}{"path": "a.md", "cont`;

type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'tool_use'; id: string; name: string; input: string };

/**
 * An Anthropic Messages stream as a provider sends it: message_start, a ping, each block (text and thinking streamed in
 * the given deltas, tool_use input in one fragment), message_delta with `stop`, message_stop.
 */
function stream(blocks: { type: 'text' | 'thinking'; deltas: string[] }[] | Block[], stop = 'end_turn'): string {
  const ev = (o: Record<string, unknown>) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
  let out = ev({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'kimi-k2',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 1 },
    },
  });
  out += ev({ type: 'ping' });
  (blocks as any[]).forEach((b, index) => {
    if (b.type === 'tool_use') {
      out += ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      out += ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: b.input } });
    } else {
      const deltas: string[] = b.deltas ?? [b.text ?? b.thinking];
      out += ev({
        type: 'content_block_start',
        index,
        content_block: b.type === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' },
      });
      for (const d of deltas)
        out += ev({
          type: 'content_block_delta',
          index,
          delta: b.type === 'text' ? { type: 'text_delta', text: d } : { type: 'thinking_delta', thinking: d },
        });
      if (b.type === 'thinking') out += ev({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig' } });
    }
    out += ev({ type: 'content_block_stop', index });
  });
  out += ev({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 9 } });
  out += ev({ type: 'message_stop' });
  return out;
}

function feed(ctx: TurnContext, parts: (string | Uint8Array)[]): { outs: Buffer[]; text: string; repair: AnthropicSseRepair } {
  const repair = new AnthropicSseRepair(ctx);
  const outs = parts.map((p) => repair.push(Buffer.from(p)));
  outs.push(repair.end());
  return { outs, text: Buffer.concat(outs).toString('utf8'), repair };
}

interface View {
  blocks: Block[];
  stop?: string | null;
  error?: { type: string; message: string };
  stopped: boolean;
}

/**
 * What a strict Anthropic client accumulates: every event names its type on its `event:` line (the SDK dispatches on
 * it), block indexes are consecutive from 0, deltas go to the open block of their kind, each block stops once.
 */
function clientView(sse: string): View {
  const v: View = { blocks: [], stopped: false };
  let open: number | undefined;
  for (const raw of sse.split('\n\n')) {
    if (!raw.trim()) continue;
    const lines = raw.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const o = JSON.parse(
      lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n'),
    );
    assert.equal(event, o.type, `event line names the type: ${raw}`);
    assert.ok(!v.stopped && !v.error, `nothing after message_stop or an error: ${raw}`);
    switch (o.type) {
      case 'content_block_start':
        assert.equal(open, undefined, `block ${o.index} starts while ${open} is open`);
        assert.equal(o.index, v.blocks.length, `indexes are consecutive: ${raw}`);
        open = o.index;
        v.blocks.push(o.content_block.type === 'tool_use' ? { ...o.content_block, input: '' } : { ...o.content_block });
        assert.ok(o.content_block.type !== 'tool_use' || JSON.stringify(o.content_block.input) === '{}');
        break;
      case 'content_block_delta': {
        assert.equal(o.index, open, `delta to the open block: ${raw}`);
        const b = v.blocks[o.index] as any;
        if (o.delta.type === 'text_delta') assert.equal(b.type, 'text'), (b.text += o.delta.text);
        else if (o.delta.type === 'thinking_delta') assert.equal(b.type, 'thinking'), (b.thinking += o.delta.thinking);
        else if (o.delta.type === 'signature_delta') b.signature = o.delta.signature;
        else if (o.delta.type === 'input_json_delta') assert.equal(b.type, 'tool_use'), (b.input += o.delta.partial_json);
        break;
      }
      case 'content_block_stop':
        assert.equal(o.index, open, `stop of the open block: ${raw}`);
        open = undefined;
        break;
      case 'message_delta':
        assert.equal(open, undefined);
        v.stop = o.delta.stop_reason;
        break;
      case 'message_stop':
        v.stopped = true;
        break;
      case 'error':
        v.error = o.error;
        break;
    }
  }
  return v;
}

const kimi = () => ctxFor('kimi-k2');

test('a call leaked in a text block is delivered as a tool_use block after the text; stop_reason tool_use; markup gone', () => {
  const upstream = stream([{ type: 'text', deltas: pieces(KIMI_LEAK, 5) }]);
  const { text, repair } = feed(kimi(), [upstream]);
  const v = clientView(text);
  assert.deepEqual(v.blocks, [
    { type: 'text', text: "I'll write it." },
    { type: 'tool_use', id: 'functions_write_0', name: 'write', input: '{"path": "a.md", "content": "hi"}' },
  ]);
  assert.equal(v.stop, 'tool_use');
  assert.ok(v.stopped);
  assert.doesNotMatch(text, /tool_call/);
  const record = repair.record()!;
  assert.deepEqual(record.finishReason, { upstream: 'end_turn', delivered: 'tool_use' });
  assert.deepEqual(
    record.calls.map((c) => [c.name, c.status, c.from]),
    [['write', 'delivered', 'content']],
  );
  assert.equal(record.removedChars.content, KIMI_LEAK.length - "I'll write it.".length);
  // The capture's parser reads the delivered stream as a tool call turn.
  const parsed = parseResponseBody(Buffer.from(text), { path: '/v1/messages', contentType: 'text/event-stream' });
  assert.deepEqual(
    parsed.message.toolCalls.map((c) => [c.id, c.name, JSON.parse(c.arguments)]),
    [['functions_write_0', 'write', { path: 'a.md', content: 'hi' }]],
  );
  assert.equal(parsed.nativeFinishReason, 'tool_use');
});

test('two calls (section closed) become two tool_use blocks with consecutive indexes and Kimi ids in order', () => {
  const leak = `Two files.${SB}${call('functions.write:0', '{"path": "a.md", "content": "1"}')}${call('functions.write:1', '{"path": "b.md", "content": "2"}')}${SE}`;
  const v = clientView(feed(kimi(), [stream([{ type: 'text', deltas: pieces(leak, 3) }])]).text);
  assert.deepEqual(
    v.blocks.map((b) => (b.type === 'tool_use' ? [b.type, b.id, JSON.parse(b.input).path] : [b.type])),
    [['text'], ['tool_use', 'functions_write_0', 'a.md'], ['tool_use', 'functions_write_1', 'b.md']],
  );
  assert.equal(v.stop, 'tool_use');
});

test('a text block that is all markup is not delivered: the tool_use takes its index, later blocks follow on', () => {
  const upstream = stream([
    { type: 'thinking', deltas: ['I should ', 'write it.'] },
    { type: 'text', deltas: pieces(`\n\n${SB}${call('functions.write:0', '{"path": "a.md", "content": "hi"}')}${SE}`, 4) },
    { type: 'text', deltas: ['Done.'] },
  ]);
  const v = clientView(feed(kimi(), [upstream]).text);
  assert.deepEqual(
    v.blocks.map((b) => b.type),
    ['thinking', 'tool_use', 'text'],
  );
  assert.deepEqual(v.blocks[0], { type: 'thinking', thinking: 'I should write it.', signature: 'sig' });
  assert.deepEqual(v.blocks[2], { type: 'text', text: 'Done.' });
});

test('text before and after the markup: the call goes between two text blocks when the markup closes inside the block', () => {
  const markup = `${SB}${call('functions.write:0', '{"path": "a.md", "content": "hi"}')}${SE}`;
  const leak = `Before.${markup}After.`;
  const v = clientView(feed(kimi(), [stream([{ type: 'text', deltas: ['Bef', 'ore.', ...pieces(markup, 6), 'After.'] }])]).text);
  assert.deepEqual(
    v.blocks.map((b) => [b.type, (b as any).text]),
    [
      ['text', 'Before.'],
      ['tool_use', undefined],
      ['text', 'After.'],
    ],
  );
  assert.equal(v.stop, 'tool_use');
  // Text after the markup in the delta that closes it goes out before the call; all in one delta, the text joins.
  const one = clientView(feed(kimi(), [stream([{ type: 'text', deltas: [leak] }])]).text);
  assert.deepEqual(
    one.blocks.map((b) => [b.type, (b as any).text]),
    [
      ['text', 'Before.After.'],
      ['tool_use', undefined],
    ],
  );
});

test('thinking blocks are untouched, byte for byte, even when they hold markup', () => {
  const thinking = `Plan: ${SB}${call('functions.write:0', '{"path": "a.md", "content": "hi"}')}`;
  const upstream = stream([
    { type: 'thinking', deltas: pieces(thinking, 7) },
    { type: 'text', deltas: ['No call here.'] },
  ]);
  const { text, repair } = feed(kimi(), [upstream]);
  assert.equal(text, upstream);
  assert.equal(repair.record(), undefined);
});

test("the upstream's own tool_use blocks pass; a recovered call is numbered after them and reindexed blocks keep their input", () => {
  const upstream = stream(
    [
      { type: 'text', text: 'First.' },
      { type: 'tool_use', id: 'functions.read:0', name: 'read', input: '{"path":"x.md"}' },
      { type: 'text', deltas: [`${SB}${call('functions.write:1', '{"path": "a.md", "content": "hi"}')}`] },
    ] as Block[],
    'tool_use',
  );
  const v = clientView(feed(kimi(), [upstream]).text);
  assert.deepEqual(
    v.blocks.map((b) => [b.type, (b as any).id, (b as any).input]),
    [
      ['text', undefined, undefined],
      ['tool_use', 'functions.read:0', '{"path":"x.md"}'],
      ['tool_use', 'functions_write_1', '{"path": "a.md", "content": "hi"}'],
    ],
  );
  assert.equal(v.stop, 'tool_use');
});

test('a truncated call is never a tool_use: withhold fails the stream with an error event (max_tokens stays max_tokens)', () => {
  const { text, repair } = feed(kimi(), [stream([{ type: 'text', deltas: pieces(KIMI_CUT, 7) }])]);
  const v = clientView(text);
  assert.deepEqual(v.blocks, [{ type: 'text', text: "I'll write it." }]);
  assert.equal(v.stop, undefined);
  assert.equal(v.stopped, false);
  assert.equal(v.error?.type, 'api_error');
  assert.match(v.error!.message, /cut short.*write/);
  assert.deepEqual(repair.record()!.finishReason, { upstream: 'end_turn', delivered: 'error' });
  assert.equal(repair.record()!.calls[0].status, 'withheld');
  const capped = clientView(feed(kimi(), [stream([{ type: 'text', deltas: [KIMI_CUT] }], 'max_tokens')]).text);
  assert.deepEqual(
    capped.blocks.map((b) => b.type),
    ['text'],
  );
  assert.equal(capped.stop, 'max_tokens');
  assert.ok(capped.stopped);
});

test('a truncated call with passthrough: the text as it came, stop_reason unchanged', () => {
  const v = clientView(
    feed(ctxFor('kimi-k2', { truncated: 'passthrough' }), [stream([{ type: 'text', deltas: pieces(KIMI_CUT, 7) }])]).text,
  );
  assert.deepEqual(v.blocks, [{ type: 'text', text: KIMI_CUT }]);
  assert.equal(v.stop, 'end_turn');
});

test('healthy streams pass byte for byte with nothing recorded, however the reads are cut', () => {
  const healthy = [
    stream([
      { type: 'thinking', deltas: ['Hmm <b> ', 'ok'] },
      { type: 'text', deltas: ['if a < b', ' then <toolbox> x', ' '] },
    ]),
    stream(
      [
        { type: 'text', text: 'Reading.' },
        { type: 'tool_use', id: 'toolu_01', name: 'read', input: '{"path":"<tool_call>"}' },
      ] as Block[],
      'tool_use',
    ),
    stream([
      { type: 'text', deltas: [' '] },
      { type: 'text', deltas: ['Hi'] },
    ]),
  ];
  for (const upstream of healthy) {
    const bytes = Buffer.from(upstream);
    for (let seed = 1; seed <= 20; seed++) {
      const { text, repair } = feed(ctxFor(undefined), randomSplit(bytes, prng(seed), 30));
      assert.equal(text, upstream, `seed ${seed}`);
      assert.equal(repair.record(), undefined);
    }
  }
});

test('split across SSE chunk boundaries byte by byte (UTF-8 inside characters too): the same turn', () => {
  const upstream = Buffer.from(
    stream([
      { type: 'thinking', deltas: ['Réfléchir…'] },
      { type: 'text', deltas: pieces(`Voilà — ${KIMI_LEAK}`, 9) },
    ]),
  );
  const whole = clientView(feed(kimi(), [upstream]).text);
  const bytes = [...upstream].map((b) => Uint8Array.of(b));
  const { text, outs } = feed(kimi(), bytes);
  assert.deepEqual(clientView(text), whole);
  assert.equal(whole.blocks[1].type === 'text' && whole.blocks[1].text, "Voilà — I'll write it.");
  assert.equal(whole.blocks[2].type, 'tool_use');
  // Events go out whole: every output piece ends at an event boundary.
  for (const o of outs) if (o.length) assert.match(o.toString('utf8'), /\n\n$/);
  for (let seed = 1; seed <= 30; seed++)
    assert.deepEqual(clientView(feed(kimi(), randomSplit(upstream, prng(seed), 40)).text), whole, `seed ${seed}`);
});

test('text is released as it streams; it waits only at a possible marker', () => {
  const upstream = stream([{ type: 'text', deltas: ['Hello ', 'world <', '|tool_calls_section_begin|>'] }]);
  const parts = upstream.split(/(?<=\n\n)/);
  const { outs } = feed(kimi(), parts);
  const texts = outs.map((o) =>
    [...o.toString().matchAll(/"text_delta","text":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1])).join(''),
  );
  const startAt = parts.findIndex((p) => p.includes('content_block_start'));
  assert.equal(texts[startAt], '', 'the start waits for text');
  assert.equal(texts[startAt + 1], 'Hello ', 'text goes out with its event');
  assert.equal(texts[startAt + 2], 'world ', 'a possible marker start is held');
});

test('without a model id the markup tells the family; a stream cut before message_delta still delivers the call', () => {
  const full = stream([{ type: 'text', deltas: pieces(KIMI_LEAK, 8) }]);
  const cut = full.slice(0, full.indexOf('event: content_block_stop'));
  const { text } = feed(ctxFor(undefined), [cut]);
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((e) =>
      JSON.parse(
        e
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6),
      ),
    );
  const tool = events.find((e) => e.content_block?.type === 'tool_use');
  assert.equal(tool?.content_block.id, 'functions_write_0');
  assert.equal(tool?.index, 1);
});

test('whole bodies: text then tool_use blocks, stop_reason tool_use; truncated: an error object; healthy: same bytes', () => {
  const msg = (content: unknown[], stop = 'end_turn') =>
    Buffer.from(
      JSON.stringify({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'kimi-k2',
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 9 },
      }),
    );
  const thinking = { type: 'thinking', thinking: `x ${SB}`, signature: 'sig' };
  const two = `Two.${SB}${call('functions.write:0', '{"path": "a.md", "content": "1"}')}${call('functions.write:1', '{"path": "b.md", "content": "2"}')}`;
  const { bytes, record } = repairAnthropicBody(msg([thinking, { type: 'text', text: two }]), kimi());
  const out = JSON.parse(bytes.toString());
  assert.deepEqual(out.content, [
    thinking,
    { type: 'text', text: 'Two.' },
    { type: 'tool_use', id: 'functions_write_0', name: 'write', input: { path: 'a.md', content: '1' } },
    { type: 'tool_use', id: 'functions_write_1', name: 'write', input: { path: 'b.md', content: '2' } },
  ]);
  assert.equal(out.stop_reason, 'tool_use');
  assert.deepEqual(record!.finishReason, { upstream: 'end_turn', delivered: 'tool_use' });
  const only = JSON.parse(
    repairAnthropicBody(
      msg([{ type: 'text', text: `${SB}${call('functions.write:0', '{"path": "a.md", "content": "1"}')}` }]),
      kimi(),
    ).bytes.toString(),
  );
  assert.deepEqual(
    only.content.map((b: any) => b.type),
    ['tool_use'],
    'an emptied text block is dropped',
  );

  const cut = repairAnthropicBody(msg([{ type: 'text', text: KIMI_CUT }]), kimi());
  assert.equal(JSON.parse(cut.bytes.toString()).type, 'error');
  assert.equal(cut.record!.calls[0].status, 'withheld');
  const capped = JSON.parse(repairAnthropicBody(msg([{ type: 'text', text: KIMI_CUT }], 'max_tokens'), kimi()).bytes.toString());
  assert.deepEqual([capped.stop_reason, capped.content], ['max_tokens', [{ type: 'text', text: "I'll write it." }]]);
  const passed = repairAnthropicBody(msg([{ type: 'text', text: KIMI_CUT }]), ctxFor('kimi-k2', { truncated: 'passthrough' }));
  assert.equal(passed.bytes.toString(), msg([{ type: 'text', text: KIMI_CUT }]).toString());

  const healthy = msg(
    [thinking, { type: 'text', text: 'if a < b then <toolbox>' }, { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } }],
    'tool_use',
  );
  const same = repairAnthropicBody(healthy, kimi());
  assert.equal(same.bytes, healthy);
  assert.equal(same.record, undefined);
});

test("a CRLF stream stays CRLF: the events repair writes use the upstream's line endings", () => {
  const upstream = stream([{ type: 'text', deltas: pieces(KIMI_LEAK, 6) }]).replace(/\n/g, '\r\n');
  const { text } = feed(kimi(), pieces(upstream, 50));
  assert.doesNotMatch(text.replace(/\r\n/g, ''), /\n/, 'no bare LF');
  const v = clientView(text.replace(/\r\n/g, '\n'));
  assert.deepEqual(
    v.blocks.map((b) => b.type),
    ['text', 'tool_use'],
  );
  assert.equal(v.stop, 'tool_use');
});
