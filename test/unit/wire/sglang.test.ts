import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseResponseBody } from '../../../src/core/wire/index';
import { sglangCumulativeStream, sse } from './samples';

test('JSON /generate (wire-formats §2.4 sample): text, output_ids, finish length, usage', () => {
  const body = {
    text: ' the capital',
    output_ids: [11319, 6864],
    meta_info: {
      id: '1b5d',
      finish_reason: { type: 'length', length: 2 },
      prompt_tokens: 2,
      completion_tokens: 2,
      cached_tokens: 0,
      e2e_latency: 35.56,
    },
  };
  const r = parseResponseBody(JSON.stringify(body));
  assert.equal(r.protocol, 'sglang-generate');
  assert.equal(r.streamed, false);
  assert.equal(r.terminated, true);
  assert.equal(r.message.content, ' the capital');
  assert.deepEqual(r.outputIds, [11319, 6864]);
  assert.equal(r.finishReason, 'length');
  assert.equal(r.nativeFinishReason, 'length');
  assert.equal(r.id, '1b5d');
  assert.deepEqual(r.usage, { promptTokens: 2, completionTokens: 2, cachedTokens: 0 });
});

test('batched array body: the first output; stop with matched token id; logprob texts', () => {
  const body = [
    {
      text: 'Hi',
      output_ids: [5, 163586],
      meta_info: {
        id: 'a',
        finish_reason: { type: 'stop', matched: 163586 },
        output_token_logprobs: [
          [-0.1, 5, 'Hi'],
          [-0.01, 163586, '<|im_end|>'],
        ],
      },
    },
    { text: 'other', meta_info: { id: 'b', finish_reason: { type: 'stop', matched: '\n' } } },
  ];
  const r = parseResponseBody(JSON.stringify(body), { path: '/generate' });
  assert.equal(r.message.content, 'Hi');
  assert.equal(r.matchedStop, 163586);
  assert.deepEqual(r.logprobTokens, [{ token: 'Hi' }, { token: '<|im_end|>' }]);
});

test('cumulative SSE stream: the last chunk is the whole output', () => {
  const r = parseResponseBody(sglangCumulativeStream);
  assert.equal(r.protocol, 'sglang-generate');
  assert.equal(r.streamed, true);
  assert.equal(r.terminated, true);
  assert.deepEqual(r.wireIssues, []);
  assert.equal(r.message.content, 'Hello<|im_end|>');
  assert.deepEqual(r.outputIds, [9906, 13, 163586]);
  assert.equal(r.finishReason, 'stop');
  assert.equal(r.matchedStop, 163586);
  assert.deepEqual(r.usage, { promptTokens: 5, completionTokens: 3, cachedTokens: 2 });
});

test('incremental stream (--incremental-streaming-output): chunks are concatenated', () => {
  const r = parseResponseBody(
    sse([
      { text: 'Hel', output_ids: [1], meta_info: { finish_reason: null } },
      { text: 'lo', output_ids: [2], meta_info: { finish_reason: null } },
      { text: ' you', output_ids: [3], meta_info: { finish_reason: { type: 'length', length: 3 } } },
    ]),
  );
  assert.equal(r.message.content, 'Hello you');
  assert.deepEqual(r.outputIds, [1, 2, 3]);
  assert.equal(r.terminated, true); // a non-null finish_reason ends a /generate stream
});

test('legacy NUL-delimited chunks', () => {
  const chunks = [
    { text: 'A', meta_info: { finish_reason: null } },
    { text: 'AB', meta_info: { finish_reason: { type: 'stop', matched: 2 } } },
  ];
  const body = chunks.map((c) => JSON.stringify(c)).join('\0') + '\0';
  const r = parseResponseBody(body);
  assert.equal(r.protocol, 'sglang-generate');
  assert.equal(r.streamed, true);
  assert.equal(r.message.content, 'AB');
  assert.equal(r.events.length, 2);
  assert.equal(r.events[1].offset, JSON.stringify(chunks[0]).length + 1);
  assert.equal(r.terminated, true);
});

test('stream cut before any finish_reason: no-terminal-event', () => {
  const r = parseResponseBody(sse([{ text: 'a', meta_info: { finish_reason: null } }]), { path: '/generate' });
  assert.equal(r.terminated, false);
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['no-terminal-event'],
  );
});

test('abort with a message is an upstream error', () => {
  const r = parseResponseBody(
    JSON.stringify({
      text: '',
      meta_info: { id: 'x', finish_reason: { type: 'abort', message: 'The input is longer than the context length', status_code: 400 } },
    }),
  );
  assert.equal(r.finishReason, 'abort');
  assert.deepEqual(r.error, { code: 400, message: 'The input is longer than the context length' });
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['error-event'],
  );
});

test('cumulative text with incremental ids (some SGLang versions): both rebuilt, repeated tokens kept', () => {
  const r = parseResponseBody(
    sse([
      { text: '\n', output_ids: [198], meta_info: { finish_reason: null, completion_tokens: 1 } },
      { text: '\n\n', output_ids: [198], meta_info: { finish_reason: null, completion_tokens: 2 } },
      { text: '\n\nok', output_ids: [564], meta_info: { finish_reason: { type: 'stop', matched: 163586 }, completion_tokens: 3 } },
      '[DONE]',
    ]),
  );
  assert.equal(r.message.content, '\n\nok');
  assert.deepEqual(r.outputIds, [198, 198, 564]);
});
