import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseResponseBody } from '../../../src/core/wire/index';
import { responsesToolStream, sse } from './samples';

test('stream: reasoning summary, output text, function call by call_id, response.completed', () => {
  const r = parseResponseBody(responsesToolStream);
  assert.equal(r.protocol, 'openai-responses');
  assert.equal(r.streamed, true);
  assert.equal(r.terminated, true);
  assert.deepEqual(r.wireIssues, []);
  assert.equal(r.message.reasoning, 'Need to list the files.');
  assert.equal(r.message.content, 'Listing files.');
  assert.deepEqual(r.message.toolCalls, [{ index: 0, id: 'call_abc', name: 'shell', arguments: '{"command":["ls","-la"]}' }]);
  assert.equal(r.finishReason, 'tool_calls');
  assert.equal(r.nativeFinishReason, 'completed');
  assert.equal(r.id, 'resp_123');
  assert.equal(r.model, 'gpt-5-codex');
  assert.deepEqual(r.usage, { promptTokens: 500, completionTokens: 40, reasoningTokens: 12, cachedTokens: 128, totalTokens: 540 });
});

test('stream without response.completed: no-terminal-event ([DONE] is not this protocol’s terminator)', () => {
  const cut = responsesToolStream.slice(0, responsesToolStream.indexOf('event: response.completed'));
  const r = parseResponseBody(cut + 'data: [DONE]\n\n', { path: '/v1/responses' });
  assert.equal(r.terminated, false);
  assert.equal(r.message.toolCalls[0].arguments, '{"command":["ls","-la"]}');
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['no-terminal-event'],
  );
});

test('items that never streamed deltas are taken whole from output_item.done', () => {
  const r = parseResponseBody(
    sse([
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { id: 'msg_1', type: 'message', content: [{ type: 'output_text', text: 'Done.' }] },
      },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' },
      },
      { type: 'response.completed', response: { id: 'resp_1', status: 'completed' } },
    ]),
  );
  assert.equal(r.message.content, 'Done.');
  assert.deepEqual(r.message.toolCalls, [{ index: 0, id: 'call_1', name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' }]);
});

test('response.incomplete (max_output_tokens) → length; response.failed → error', () => {
  const inc = parseResponseBody(
    sse([
      { type: 'response.output_text.delta', item_id: 'm', output_index: 0, delta: 'cut' },
      { type: 'response.incomplete', response: { id: 'r', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } },
    ]),
  );
  assert.equal(inc.finishReason, 'length');
  assert.equal(inc.nativeFinishReason, 'max_output_tokens');
  assert.equal(inc.terminated, true);

  const failed = parseResponseBody(
    sse([
      { type: 'response.failed', response: { id: 'r', status: 'failed', error: { code: 'server_error', message: 'The model failed' } } },
    ]),
  );
  assert.equal(failed.finishReason, 'error');
  assert.deepEqual(failed.error, { code: 'server_error', message: 'The model failed' });
  assert.equal(failed.terminated, true);
  assert.deepEqual(
    failed.wireIssues.map((i) => i.code),
    ['error-event'],
  );
});

test('error event', () => {
  const r = parseResponseBody(sse([{ type: 'error', code: 'rate_limit_exceeded', message: 'Slow down', param: null, sequence_number: 1 }]));
  assert.equal(r.protocol, 'openai-responses');
  assert.deepEqual(r.error, { code: 'rate_limit_exceeded', message: 'Slow down' });
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['error-event', 'no-terminal-event'],
  );
});

test('non-streamed response object', () => {
  const body = {
    id: 'resp_67cc',
    object: 'response',
    status: 'completed',
    model: 'gpt-4.1',
    output: [
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Check weather.' }] },
      { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.', annotations: [] }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_12345xyz', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
    ],
    usage: { input_tokens: 36, output_tokens: 87, total_tokens: 123 },
  };
  const r = parseResponseBody(JSON.stringify(body));
  assert.equal(r.protocol, 'openai-responses');
  assert.equal(r.streamed, false);
  assert.equal(r.message.reasoning, 'Check weather.');
  assert.equal(r.message.content, 'Let me look.');
  assert.deepEqual(r.message.toolCalls, [
    { index: 0, id: 'call_12345xyz', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
  ]);
  assert.equal(r.finishReason, 'tool_calls');
  assert.deepEqual(r.usage, { promptTokens: 36, completionTokens: 87, totalTokens: 123 });
});
