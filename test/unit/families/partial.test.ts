// A turn cut short (`render(m, { complete: false })`): the reconstruction holds what arrived and no closing markup the
// model never sent (no end of turn, no `</think>` ending reasoning that nothing followed, the last call left open).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formats } from '../../../src/core/families/index';
import type { AssistantMessage } from '../../../src/core/model';
import { assertSegments } from './helpers';

const REASONING_ONLY: AssistantMessage = { reasoning: 'The user is asking for the weather', toolCalls: [] };
const CONTENT_ONLY: AssistantMessage = { content: 'It is sunny in Flor', toolCalls: [] };
const CALLS: AssistantMessage = {
  reasoning: 'Two lookups.',
  toolCalls: [
    { index: 0, name: 'weather', arguments: '{"location": "Florence"}' },
    { index: 1, name: 'weather', arguments: '{"location": "Ro' },
  ],
};

describe('render of a turn cut short', () => {
  for (const f of formats) {
    test(`${f.id}: a prefix of the complete render, without the end of turn`, () => {
      for (const m of [REASONING_ONLY, CONTENT_ONLY, CALLS]) {
        const full = f.render(m);
        const cut = f.render(m, { complete: false });
        assert.deepEqual(f.render(m, { complete: true }), full, 'complete is the default');
        assert.ok(cut.text.length < full.text.length, `${f.id}: something was left unwritten in ${JSON.stringify(full.text)}`);
        assert.ok(full.text.startsWith(cut.text), `${f.id}: ${JSON.stringify(cut.text)} is not a prefix of ${JSON.stringify(full.text)}`);
        assertSegments(cut.text, cut.segments);
        assert.ok(!cut.segments.some((s) => s.kind === 'end'), `${f.id}: end-of-turn marker in ${JSON.stringify(cut.text)}`);
        // Everything the model wrote is there, where the complete render has it, and nothing follows the last of it.
        const written = full.segments.filter((s) => s.kind === 'reasoning' || s.kind === 'content' || s.kind === 'arguments');
        for (const w of written)
          assert.ok(
            cut.segments.some((s) => s.kind === w.kind && s.start === w.start && s.end === w.end),
            `${f.id}: ${w.kind} missing`,
          );
        assert.equal(cut.text.trimEnd().length, written.at(-1)!.end, `${f.id}: markup after the last text in ${JSON.stringify(cut.text)}`);
      }
    });

    test(`${f.id}: the parse sees the block the model was in as open, and the earlier call as closed`, () => {
      const reasoning = f.parse(f.render(REASONING_ONLY, { complete: false }).text);
      if (f.id !== 'gpt-oss')
        assert.deepEqual(
          reasoning.problems.map((p) => p.code),
          ['reasoning-unclosed'],
          f.id,
        );
      assert.equal(reasoning.message.reasoning, REASONING_ONLY.reasoning);
      const calls = f.parse(f.render(CALLS, { complete: false }).text);
      assert.equal(calls.message.toolCalls.length, 2, f.id);
      assert.ok(
        calls.problems.every((p) => p.callIndex !== 0),
        `${f.id}: the first call was followed by the second, so it closed: ${JSON.stringify(calls.problems)}`,
      );
      assert.ok(
        calls.problems.some((p) => p.code === 'call-unclosed' && p.callIndex === 1),
        `${f.id}: ${JSON.stringify(calls.problems)}`,
      );
    });
  }
});
