/**
 * Raw ⇄ Delivered compares a repaired stream event by event, by payload: the events repair passed through are folded,
 * the ones it held back or wrote are shown pretty-printed without the envelope every event repeats, so the change is
 * a short line of its own and not the end of a long `data: {"id":"gen-…` line.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alignKeys, deliveredDiffDocuments, fitJson } from '../../../src/extension/deliveredDiffText';
import { ctxFor, feed, stream } from '../repair/helpers';

const SB = '<|tool_calls_section_begin|>';
/** The leaked call, a delta per marker or text, as a provider streams it. */
const LEAK = [
  'Let me read it.',
  SB,
  '<|tool_call_begin|>',
  'functions.read:0',
  '<|tool_call_argument_begin|>',
  '{"path": "a.md"}',
  '<|tool_call_end|>',
];
const bytes = (s: string) => new TextEncoder().encode(s);

/** A long healthy preamble (40 deltas), then the leaked call: what a user diffs after repair mode rewrote it. */
function repaired(): { upstream: string; delivered: string } {
  const preamble = Array.from({ length: 40 }, (_, i) => ({ content: `word${i} ` }));
  const upstream = stream([...preamble, ...LEAK.map((content) => ({ content }))]);
  return { upstream, delivered: feed(ctxFor('kimi-k2'), [upstream]).text };
}

/** The lines of a document that are not in the other one (what the diff editor highlights). */
function onlyIn(doc: string, other: string): string[] {
  const theirs = new Set(other.split('\n'));
  return doc.split('\n').filter((l) => !theirs.has(l));
}

test('a repaired stream is diffed event by event: passed-through events fold, the rewritten ones show', () => {
  const { upstream, delivered } = repaired();
  const d = deliveredDiffDocuments(bytes(upstream), bytes(delivered));
  // The comment, the 40 preamble events and the text before the markup went through unchanged: folded into one
  // line, the same on both sides, but for the last one before the change, kept for context.
  const kept = /┄┄ 41 identical events folded ┄┄\ndata: \{"choices": \[\{"delta": \{"content": "Let me read it\."\}\}\]\}\n/;
  assert.match(d.upstream, kept);
  assert.match(d.delivered, kept);
  assert.equal(d.folded, 41);
  assert.ok(d.removed > 0 && d.added > 0, d.summary);
  // The fields most events share are named once at the top, and no event repeats them.
  assert.match(d.upstream, /^Raw ⇄ Delivered, event by event: \d+ upstream events, \d+ delivered events; \d+ only upstream/);
  const [head, body] = d.upstream.split('\n\n');
  assert.match(head, /\nFields most events share, left out of every event below that has them:\n {2}id: "gen-1"\n/);
  assert.match(head, /\n {2}choices\[0\]\.delta\.role: "assistant"\n/);
  assert.doesNotMatch(body, /gen-1|"role"|"index": 0, "delta"/);
  // What repair changed is on short lines of its own: the markup on the left, the structured call on the right.
  const left = onlyIn(d.upstream, d.delivered);
  const right = onlyIn(d.delivered, d.upstream);
  assert.ok(
    left.some((l) => l.includes('tool_calls_section_begin')),
    left.join('\n'),
  );
  assert.ok(
    right.some((l) => /"id": "functions\.read:0"/.test(l)),
    right.join('\n'),
  );
  assert.ok(
    right.some((l) => /"finish_reason": ?"tool_calls"/.test(l)),
    right.join('\n'),
  );
  for (const l of [...left, ...right]) assert.ok(l.length <= 80, `a changed line stays within a side of the diff: ${l}`);
  // Both documents are short: one fold line instead of 40 events.
  assert.ok(d.upstream.split('\n').length < 200, `${d.upstream.split('\n').length} lines`);
});

test('events equal by payload are equal whatever their key order or spacing', () => {
  const a =
    'data: {"id":"g","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: {"id":"g","choices":[{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n';
  const b =
    'data: {"choices": [{"delta": {"content": "hi"}, "index": 0}], "id": "g"}\n\ndata: {"id":"g","choices":[{"index":0,"delta":{"content":"y"}}]}\n\ndata: [DONE]\n\n';
  const d = deliveredDiffDocuments(bytes(a), bytes(b));
  assert.equal(d.removed, 1);
  assert.equal(d.added, 1);
  assert.deepEqual(onlyIn(d.upstream, d.delivered), ['data: {"choices": [{"delta": {"content": "x"}}]}']);
  assert.deepEqual(onlyIn(d.delivered, d.upstream), ['data: {"choices": [{"delta": {"content": "y"}}]}']);
});

test('the same events on both sides say so and fold everything', () => {
  const { upstream } = repaired();
  const d = deliveredDiffDocuments(bytes(upstream), bytes(upstream));
  assert.equal(d.removed + d.added, 0);
  assert.match(d.summary, /the same events, payload for payload/);
  assert.equal(d.upstream, d.delivered);
});

test('a whole JSON body is pretty-printed on both sides', () => {
  const a = JSON.stringify({
    id: 'gen-1',
    choices: [{ index: 0, message: { role: 'assistant', content: `x${SB}` }, finish_reason: 'stop' }],
  });
  const b = JSON.stringify({
    id: 'gen-1',
    choices: [{ index: 0, message: { role: 'assistant', content: 'x', tool_calls: [] }, finish_reason: 'tool_calls' }],
  });
  const d = deliveredDiffDocuments(bytes(a), bytes(b));
  assert.match(d.summary, /^Raw ⇄ Delivered, the whole body: /);
  assert.ok(onlyIn(d.upstream, d.delivered).some((l) => l.trim() === '"finish_reason": "stop"'));
  assert.ok(onlyIn(d.delivered, d.upstream).some((l) => l.trim() === '"finish_reason": "tool_calls"'));
});

test('alignment keeps the common start and end and the longest common middle', () => {
  const ops = alignKeys(['a', 'b', 'c', 'd', 'e'], ['a', 'x', 'c', 'y', 'e']);
  assert.deepEqual(
    ops.map((o) => o.kind),
    ['equal', 'removed', 'added', 'equal', 'removed', 'added', 'equal'],
  );
});

test('JSON is fitted to the width: what fits stays on its line, the rest gets a line per member', () => {
  const v = { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello there' }, finish_reason: null }] };
  assert.equal(
    fitJson(v, 200),
    '{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello there"}, "finish_reason": null}]}',
  );
  assert.equal(
    fitJson(v, 70),
    [
      '{',
      '  "choices": [',
      '    {',
      '      "index": 0,',
      '      "delta": {"role": "assistant", "content": "Hello there"},',
      '      "finish_reason": null',
      '    }',
      '  ]',
      '}',
    ].join('\n'),
  );
  assert.deepEqual(JSON.parse(fitJson(v, 10)), v, 'still the same JSON');
});

test('a shared field an event lacks is said, so leaving fields out never hides a difference', () => {
  const ev = (content: string, extra: Record<string, unknown> = { native_finish_reason: null }) =>
    `data: ${JSON.stringify({ id: 'g', choices: [{ index: 0, delta: { content }, ...extra }] })}\n\n`;
  const a = ev('a') + ev('b') + ev('c');
  const b = ev('a') + ev('b', {}) + ev('c');
  const d = deliveredDiffDocuments(bytes(a), bytes(b));
  assert.equal(d.removed, 1);
  assert.equal(d.added, 1);
  // The two events read the same but for the line that says what the delivered one lacks: that line is the change.
  assert.deepEqual(onlyIn(d.upstream, d.delivered), []);
  assert.deepEqual(onlyIn(d.delivered, d.upstream), ['(without choices[0].native_finish_reason)']);
});

test("both documents name what repair changed, in the protocol's words, under their first line", async () => {
  const { AnthropicSseRepair } = await import('../../../src/core/repair/anthropic');
  const { repairSummary } = await import('../../../src/core/repair/describe');
  const ev = (o: Record<string, unknown>) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
  const upstream =
    ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], stop_reason: null } }) +
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
    LEAK.map((text) => ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })).join('') +
    ev({ type: 'content_block_stop', index: 0 }) +
    ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }) +
    ev({ type: 'message_stop' });
  const repair = new AnthropicSseRepair(ctxFor('kimi-k2'));
  const delivered = Buffer.concat([repair.push(Buffer.from(upstream)), repair.end()]).toString('utf8');
  const d = deliveredDiffDocuments(bytes(upstream), bytes(delivered), repairSummary(repair.record()!));
  for (const doc of [d.upstream, d.delivered]) {
    const [first, second] = doc.split('\n');
    assert.match(first, /^Raw ⇄ Delivered, event by event:/);
    assert.match(
      second,
      /^Repaired: 1 call delivered as tool_use blocks, \d+ chars of markup removed from text, stop_reason end_turn → tool_use\.$/,
    );
  }
  assert.doesNotMatch(d.delivered, /Repaired: .*(tool_calls|finish_reason)/);
  // Without a summary the documents are as before.
  assert.match(deliveredDiffDocuments(bytes(upstream), bytes(delivered)).upstream.split('\n')[1], /^(Fields|$)/);
});
