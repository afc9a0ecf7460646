import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseResponseBody } from '../../../src/core/wire/index';
import { anthropicThinkingStream, anthropicToolStream, sse } from './samples';

test('tool-use stream (wire-formats §5): input = concatenated partial_json, tool_use → tool_calls', () => {
  const r = parseResponseBody(anthropicToolStream, { contentType: 'text/event-stream' });
  assert.equal(r.protocol, 'anthropic-messages');
  assert.equal(r.streamed, true);
  assert.equal(r.terminated, true);
  assert.deepEqual(r.wireIssues, []);
  assert.deepEqual(r.message.toolCalls, [
    {
      index: 0,
      id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
      name: 'json',
      arguments: '{"elements": [{"location": "San Francisco", "temperature": 58}]}',
    },
  ]);
  assert.equal(r.message.content, undefined);
  assert.equal(r.finishReason, 'tool_calls');
  assert.equal(r.nativeFinishReason, 'tool_use');
  assert.equal(r.id, 'msg_01K2JqJ7Yx1');
  assert.equal(r.model, 'claude-haiku-4-5-20251001');
  assert.deepEqual(r.usage, { promptTokens: 849, completionTokens: 47, cachedTokens: 0 });
  assert.equal(r.events[0].event, 'message_start');
});

test('thinking + text stream: thinking_delta → reasoning, signature ignored, max_tokens → length', () => {
  const r = parseResponseBody(anthropicThinkingStream);
  assert.equal(r.protocol, 'anthropic-messages');
  assert.equal(r.message.reasoning, 'Portuguese for hi is "Oi".');
  assert.equal(r.message.content, 'Oi! Olá também. 👋');
  assert.equal(r.finishReason, 'length');
  assert.equal(r.nativeFinishReason, 'max_tokens');
  assert.deepEqual(r.usage, { promptTokens: 20, completionTokens: 30 });
});

test('stop_reason mapping: end_turn and stop_sequence → stop', () => {
  for (const reason of ['end_turn', 'stop_sequence']) {
    const r = parseResponseBody(
      sse([
        { type: 'message_start', message: { id: 'm', content: [] } },
        { type: 'message_delta', delta: { stop_reason: reason } },
        { type: 'message_stop' },
      ]),
    );
    assert.equal(r.finishReason, 'stop');
    assert.equal(r.nativeFinishReason, reason);
  }
});

test('error event interrupting a stream; no message_stop', () => {
  const body = sse(
    [
      { type: 'message_start', message: { id: 'msg_1', content: [] } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ],
    { named: true },
  );
  const r = parseResponseBody(body, { path: '/v1/messages' });
  assert.equal(r.message.content, 'Hel');
  assert.deepEqual(r.error, { code: 'overloaded_error', message: 'Overloaded' });
  assert.equal(r.finishReason, 'error');
  assert.equal(r.terminated, false);
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['error-event', 'no-terminal-event'],
  );
  assert.equal(r.wireIssues[0].eventIndex, 3);
});

test('a delta for a block never started is flagged, its text kept', () => {
  const r = parseResponseBody(
    sse([
      { type: 'message_start', message: {} },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'x' } },
      { type: 'message_stop' },
    ]),
  );
  assert.equal(r.message.content, 'x');
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['unexpected-event'],
  );
});

test('tool_use whose whole input comes in content_block_start', () => {
  const r = parseResponseBody(
    sse([
      { type: 'message_start', message: {} },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a' } },
      },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_stop' },
    ]),
  );
  assert.deepEqual(r.message.toolCalls, [{ index: 0, id: 'toolu_1', name: 'Read', arguments: '{"file_path":"/a"}' }]);
});

test('non-streamed Messages JSON: thinking, text, tool_use; cache reads count in the prompt', () => {
  const body = {
    id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'Need the file.', signature: 'sig' },
      { type: 'text', text: 'Reading it.' },
      { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { file_path: '/tmp/a.txt' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 0, output_tokens: 25 },
  };
  const r = parseResponseBody(JSON.stringify(body));
  assert.equal(r.protocol, 'anthropic-messages');
  assert.equal(r.streamed, false);
  assert.equal(r.terminated, true);
  assert.equal(r.message.reasoning, 'Need the file.');
  assert.equal(r.message.content, 'Reading it.');
  assert.deepEqual(r.message.toolCalls, [{ index: 0, id: 'toolu_01A', name: 'Read', arguments: '{"file_path":"/tmp/a.txt"}' }]);
  assert.equal(r.finishReason, 'tool_calls');
  assert.deepEqual(r.usage, { promptTokens: 100, completionTokens: 25, cachedTokens: 90 });
});

test('non-streamed error body', () => {
  const r = parseResponseBody('{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}');
  assert.equal(r.protocol, 'anthropic-messages');
  assert.deepEqual(r.error, { code: 'invalid_request_error', message: 'max_tokens: Field required' });
});
