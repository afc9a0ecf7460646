// Llama 4 pythonic calls carry no marker: leaked into content they are still found (checks/markerless-leak.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import finishReasonMismatch from '../../../src/core/checks/finish-reason-mismatch';
import markupInContent from '../../../src/core/checks/markup-in-content';
import { call, response, run, slice } from './helpers';

const LLAMA4 = 'meta-llama/llama-4-maverick';

test('a pythonic call list returned as content, finish stop: markup-in-content and finish-reason-mismatch, the call recovered', () => {
  const input = {
    response: response({ model: LLAMA4, message: { content: 'Reading it.\n[read(path="a.md", lines=20)]' }, finishReason: 'stop' }),
  };
  const r = run(markupInContent, input);
  assert.equal(r.findings.length, 1);
  const [f] = r.findings;
  assert.equal(f.severity, 'error');
  assert.match(f.message, /Llama 4 \(pythonic tool calls\) tool-call markup leaked into content \(\[read\(\)/);
  assert.match(f.message, /1 call: read/);
  assert.equal(slice(r, f), '[read(path="a.md", lines=20)]');
  assert.equal(run(finishReasonMismatch, input).findings.length, 1);
});

test('brackets and calls in prose or code, or a call already structured, are not a leak', () => {
  for (const content of ['Use a[len(x)] to index, see [the docs](https://example.com).', 'Call `f(x)` then `[1, 2]`.', '']) {
    assert.deepEqual(
      run(markupInContent, { response: response({ model: LLAMA4, message: { content }, finishReason: 'stop' }) }).findings,
      [],
      content,
    );
  }
  const structured = response({
    model: LLAMA4,
    message: { content: 'Reading it.', toolCalls: [call('read', '{"path":"a.md"}', 'c1')] },
    finishReason: 'tool_calls',
  });
  assert.deepEqual(run(markupInContent, { response: structured }).findings, []);
});

test('another family named by the model id: pythonic-looking content is its text, not a leak', () => {
  const r = run(markupInContent, {
    response: response({ model: 'moonshotai/kimi-k2-0905', message: { content: '[read(path="a.md")]' }, finishReason: 'stop' }),
  });
  assert.deepEqual(r.findings, []);
});
