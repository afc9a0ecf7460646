// The unknown-dialect-call scan stays linear on text built to make every opener scan to the end of the turn (each of
// these took 20–40 s of CPU with a scan per opener), and still finds a real call in a long answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepare } from '../../../src/core/analyze';
import check from '../../../src/core/checks/unknown-dialect-call';
import type { NormalizedRequest } from '../../../src/core/model';
import { timeCpu } from '../../helpers/timing';

const request: NormalizedRequest = {
  protocol: 'openai-chat',
  model: 'some/unknown-model',
  tools: [{ name: 'get_weather' }, { name: 'f' }],
  messages: [],
  raw: {},
};

test('adversarial openers: bounded CPU time, with and without the request', () => {
  // Budgets are ~20x what a 2-core machine measures (CPU time of this thread), so a shared box stays green while a
  // scan per opener (seconds to minutes here) fails.
  const inputs = {
    'unclosed JSON after tags': '<call>{'.repeat(30_000),
    'unclosed JSON after bracket tokens': '[TOOL]{'.repeat(30_000),
    'call-list words': 'tool_calls: ['.repeat(30_000),
    'unclosed named elements': '<tool name="f">'.repeat(20_000),
    'elements named after a tool': '<f>'.repeat(30_000),
    'inline code and tags': '`a` <call>x{} '.repeat(20_000),
    'ReAct lines without a blank line': 'Action: f\nAction Input: x\n'.repeat(20_000),
  };
  for (const [name, text] of Object.entries(inputs)) {
    for (const req of [undefined, request]) {
      const { ctx } = prepare({ nativeText: text, model: 'some/unknown-model', request: req });
      const { cpuMs } = timeCpu(() => check.run(ctx));
      assert.ok(cpuMs < 4000, `${name}${req ? ' (tools)' : ''}: ${cpuMs.toFixed(0)} ms of CPU for ${text.length} chars`);
    }
  }
});

test('a call at the end of a 1 MB answer is found, and the scan of the answer stays linear', () => {
  const answer =
    'The new markup:\n\n```html\n<nav><button type="button" onclick="go()">Go</button></nav>\n```\n\nThe <button> has a type now; `npm test` passes.\n\n';
  const text = `${answer.repeat(Math.ceil(1_000_000 / answer.length))}<call>get_weather{"city": "Paris"}</call>`;
  const { ctx } = prepare({ nativeText: text, model: 'some/unknown-model', request });
  const { value, cpuMs } = timeCpu(() => check.run(ctx));
  assert.equal(value.length, 1);
  assert.equal(text.slice(value[0].start, value[0].end), '<call>get_weather{"city": "Paris"}</call>');
  assert.ok(cpuMs < 4000, `${cpuMs.toFixed(0)} ms of CPU for ${text.length} chars`);
});
