import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formats, getFormat } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';
import { prng, randomSplit } from '../../helpers/prng';
import { clientView, ctxFor, feed, pieces, stream } from './helpers';

const SB = '<|tool_calls_section_begin|>';
const CB = '<|tool_call_begin|>';
const AB = '<|tool_call_argument_begin|>';
const CE = '<|tool_call_end|>';
const KIMI_LEAK = `I'll call read.${SB}${CB}functions.read:0${AB}{"path": "a.md"}${CE}`;

test('Kimi: a leaked call without its section end becomes a structured call, streamed id+name then arguments', () => {
  const { text, repair } = feed(ctxFor('kimi-k2'), [stream(pieces(KIMI_LEAK, 5).map((content) => ({ content })))]);
  const v = clientView(text);
  assert.equal(v.content, "I'll call read.");
  assert.deepEqual(v.calls, [{ index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path": "a.md"}' }]);
  assert.equal(v.finish, 'tool_calls');
  assert.deepEqual(v.callDeltas[0], { index: 0, id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '' } });
  assert.deepEqual(v.callDeltas[1], { index: 0, function: { arguments: '{"path": "a.md"}' } });
  assert.doesNotMatch(text, /<\|tool_call/, 'no markup reaches the client');
  const record = repair.record()!;
  assert.deepEqual(record.finishReason, { upstream: 'stop', delivered: 'tool_calls' });
  assert.equal(record.calls[0].status, 'delivered');
  assert.equal(record.removedChars.content, KIMI_LEAK.length - "I'll call read.".length);
});

test("Kimi: a model-written id that is not canonical is renumbered in order after the history's calls", () => {
  const leak = `${SB}${CB}read:7${AB}{"path": "a.md"}${CE}${CB}functions.read:9${AB}{"path": "b.md"}${CE}${'<|tool_calls_section_end|>'}`;
  const v = clientView(feed(ctxFor('kimi-k2', { historyCalls: 3 }), [stream([{ content: leak }])]).text);
  assert.deepEqual(
    v.calls.map((c) => [c.index, c.id]),
    [
      [0, 'functions.read:3'],
      [1, 'functions.read:9'],
    ],
  );
});

/** The native text of one turn with a call to read, up to the end of its last call (no end-of-turn marker). */
function leakOf(family: FamilyId, calls = [{ index: 0, name: 'read', arguments: '{"path":"a.md"}' }]): string {
  const r = getFormat(family).render({ content: 'Let me look.', toolCalls: calls });
  const end = Math.max(...r.segments.filter((s) => s.kind === 'section' || s.kind === 'call').map((s) => s.end));
  return r.text.slice(0, end);
}

/** Families repair mode cannot lift yet, each with why (reported as skipped, so the gap stays visible). */
const NOT_YET: Partial<Record<FamilyId, string>> = {
  'llama4-pythonic': 'repair mode finds leaked markup by an opening marker, and a pythonic call list ([read(path="a.md")]) has none',
  'functionary-v32':
    'a correct server also drops the reply\'s leading all\\n recipient line, which repair cannot tell from an "all" that ends a line of prose',
};

// Every family of the registry, so a new family is covered the day it lands.
for (const family of formats.map((f) => f.id)) {
  test(`${family}: leaked markup streamed 3 characters at a time is delivered as a structured call`, (t) => {
    if (NOT_YET[family]) return t.skip(NOT_YET[family]);
    const leak = leakOf(family);
    const first = feed(ctxFor(family), [stream(pieces(leak, 3).map((content) => ({ content })))]);
    const again = feed(ctxFor(family), [stream([{ content: leak }])]);
    const v = clientView(first.text);
    assert.equal(v.content.trim(), 'Let me look.');
    assert.equal(v.calls.length, 1, first.text);
    assert.equal(v.calls[0].name, 'read');
    assert.deepEqual(JSON.parse(v.calls[0].arguments), { path: 'a.md' });
    assert.match(v.calls[0].id!, family === 'kimi-k2' ? /^functions\.read:0$/ : /^call_[0-9a-f]{24}$/);
    assert.equal(clientView(again.text).calls[0].id, v.calls[0].id, 'ids are stable across deliveries');
    assert.equal(v.finish, 'tool_calls');
    for (const m of getFormat(family).toolMarkers) assert.ok(!v.content.includes(m), `${m} left in content`);
  });
}

test('Qwen3/Hermes: two calls in two blocks get indices 0 and 1; the model id is not needed to tell the family', () => {
  const leak = leakOf('qwen3', [
    { index: 0, name: 'read', arguments: '{"path":"a.md"}' },
    { index: 1, name: 'read', arguments: '{"path":"b.md"}' },
  ]);
  const v = clientView(feed(ctxFor(undefined), [stream(pieces(leak, 4).map((content) => ({ content })))]).text);
  assert.deepEqual(
    v.calls.map((c) => [c.index, JSON.parse(c.arguments).path]),
    [
      [0, 'a.md'],
      [1, 'b.md'],
    ],
  );
  assert.equal(v.finish, 'tool_calls');
});

const KIMI_CUT = `I'll call read.${SB}${CB}functions.read:0${AB}{"path": "a.`;

test('a truncated call is never delivered as a call: withhold gives finish_reason error (length when the upstream said so)', () => {
  for (const [upstream, expected] of [
    ['stop', 'error'],
    ['length', 'length'],
  ]) {
    const { text, repair } = feed(ctxFor('kimi-k2'), [
      stream(
        pieces(KIMI_CUT, 7).map((content) => ({ content })),
        upstream,
      ),
    ]);
    const v = clientView(text);
    assert.deepEqual(v.calls, []);
    assert.equal(v.finish, expected);
    assert.equal(v.content, "I'll call read.");
    assert.equal(repair.record()!.calls[0].status, 'withheld');
    assert.match(repair.record()!.calls[0].note!, /not whole JSON/);
  }
});

test('a truncated call with passthrough reaches the client as the untouched text, finish_reason unchanged', () => {
  const v = clientView(
    feed(ctxFor('kimi-k2', { truncated: 'passthrough' }), [stream(pieces(KIMI_CUT, 7).map((content) => ({ content })))]).text,
  );
  assert.deepEqual(v.calls, []);
  assert.equal(v.content, KIMI_CUT);
  assert.equal(v.finish, 'stop');
});

test('XML arguments cut inside a value are truncated although the parser could make JSON of them (Kiro #11533)', () => {
  const whole = leakOf('qwen3-coder', [{ index: 0, name: 'write', arguments: '{"path":"notes.md","content":"first line"}' }]);
  const cut = whole.slice(0, whole.indexOf('first') + 5);
  const { text, repair } = feed(ctxFor('qwen3-coder'), [stream([{ content: cut }])]);
  assert.deepEqual(clientView(text).calls, []);
  assert.equal(clientView(text).finish, 'error');
  assert.equal(repair.record()!.calls[0].status, 'withheld');
});

test("marker text inside a structured call's string argument is left alone, byte for byte", () => {
  const args = JSON.stringify({ path: 'notes.md', content: `use ${SB} and <tool_call>{"name":"x"}</tool_call> here` });
  const upstream = stream(
    [
      { content: 'Writing.' },
      {
        content: null,
        tool_calls: [{ index: 0, id: 'functions.write:0', type: 'function', function: { name: 'write', arguments: args } }],
      },
    ],
    'tool_calls',
  );
  const { text, repair } = feed(ctxFor('kimi-k2'), pieces(upstream, 17));
  assert.equal(text, upstream);
  assert.equal(repair.record(), undefined);
});

test('text is held back only from a possible marker start; a "<" that is not one is released with the next text', () => {
  const upstream = stream([{ content: 'if a <' }, { content: 'b then' }, { content: ' x <tool' }, { content: 'box> y' }]);
  const parts = upstream.split(/(?<=\n\n)/);
  const { outs, text } = feed(ctxFor('qwen3'), parts);
  const seen = outs.map((o) => clientView(o.toString()).content);
  assert.deepEqual(seen.slice(1, 5), ['if a ', '<b then', ' x ', '<toolbox> y']);
  assert.equal(clientView(text).content, 'if a <b then x <toolbox> y');
  assert.equal(clientView(text).finish, 'stop');
});

test('events without "<" pass in the read they arrive in; only an unfinished event waits for its end', () => {
  const upstream = stream([{ reasoning: 'thinking' }, { content: 'plain prose' }, { content: ' more prose' }]);
  const cut = upstream.indexOf('plain') + 3;
  const { outs, text } = feed(ctxFor('kimi-k2'), [upstream.slice(0, cut), upstream.slice(cut)]);
  assert.equal(outs[0].toString(), upstream.slice(0, upstream.lastIndexOf('\n\n', cut) + 2));
  assert.equal(text, upstream);
});

test('a call leaked into reasoning with its section end cut short (OpenCode #8851) is delivered; reasoning keeps its prose', () => {
  const markup = `${SB}${CB}functions.read:0${AB}{"path": "a.md"}${CE}<|tool_calls_section_end|`;
  const v = clientView(
    feed(ctxFor('kimi-k2'), [stream([{ reasoning: 'I should read it.' }, ...pieces(markup, 6).map((reasoning) => ({ reasoning }))])]).text,
  );
  assert.equal(v.reasoning, 'I should read it.');
  assert.equal(v.calls[0]?.id, 'functions.read:0');
  assert.equal(v.finish, 'tool_calls');
});

test('arguments that fail the tool schema are delivered (the agent answers that) and noted in the record', () => {
  const leak = `${SB}${CB}functions.read:0${AB}{"path": 42}${CE}`;
  const { text, repair } = feed(ctxFor('kimi-k2'), [stream([{ content: leak }])]);
  assert.equal(clientView(text).calls.length, 1);
  assert.match(repair.record()!.calls[0].note!, /schema/);
});

test('random byte splits (inside UTF-8 characters too) give the client the same turn', () => {
  const upstream = Buffer.from(stream(pieces(`Voilà — ${KIMI_LEAK}`, 4).map((content) => ({ content }))));
  const expected = clientView(feed(ctxFor('kimi-k2'), [upstream]).text);
  for (let seed = 1; seed <= 40; seed++) {
    const got = clientView(feed(ctxFor('kimi-k2'), randomSplit(upstream, prng(seed), 30)).text);
    assert.deepEqual(got, expected, `seed ${seed}`);
  }
  assert.equal(expected.content, "Voilà — I'll call read.");
});
