import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import historyToolResultMissing from '../../../src/core/checks/history-tool-result-missing';
import { normalizeRequest } from '../../../src/core/wire/index';
import { response, run } from './helpers';

// The response names no model: the family comes from the request's.
const ok = response({ model: undefined, message: { content: 'Done.' }, finishReason: 'stop' });
const lint = (body: object, path?: string) =>
  run(historyToolResultMissing, { response: ok, request: normalizeRequest(body, { path }) }).findings;

const chatCall = (id: string) => ({ id, type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } });
const tool = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'ok' });

describe('history-tool-result-missing', () => {
  test('Chat: one of two parallel calls lost its result, and a result whose call was compacted away', () => {
    const f = lint({
      model: 'moonshotai/kimi-k2.5',
      messages: [
        { role: 'user', content: 'read a and b' },
        { role: 'assistant', tool_calls: [chatCall('functions.read:0'), chatCall('functions.read:1')] },
        tool('functions.read:0'),
        { role: 'assistant', content: 'Read one.' },
        { role: 'user', content: 'go on' },
        tool('functions.read:7'),
      ],
    });
    assert.equal(f.length, 2);
    assert.equal(f[0].location, 'request.messages[1].tool_calls[1]');
    assert.equal(f[0].severity, 'error');
    assert.match(f[0].message, /^1 tool call in the request history has no result \("functions\.read:1"/);
    assert.match(f[0].message, /The following tool_call_ids did not have response messages: functions\.read:1/);
    assert.equal(f[1].location, 'request.messages[5]');
    assert.match(f[1].message, /^1 tool message in the request history answers no call in it \("functions\.read:7"/);
  });

  test('Chat: a history that ends on an unanswered tool call', () => {
    const f = lint({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', tool_calls: [chatCall('call_x')] },
      ],
    });
    assert.equal(f.length, 1);
    assert.equal(f[0].location, 'request.messages[1].tool_calls[0]');
  });

  test('Anthropic: tool_use without tool_result (Claude Code error), and an unexpected tool_use_id', () => {
    const f = lint({
      model: 'claude-opus-4-5',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A', name: 'bash', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01B', content: 'a b' }] },
      ],
    });
    assert.equal(f.length, 2);
    assert.match(
      f[0].message,
      /1 tool_use block .* \("toolu_01A".*`tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A/,
    );
    assert.match(f[1].message, /unexpected `tool_use_id` found in `tool_result` blocks: toolu_01B/);
    assert.equal(f[1].location, 'request.messages[2].content[0]');
  });

  test('Responses: a function_call without output; an output whose call lives in previous_response_id is fine', () => {
    const f = lint(
      {
        model: 'gpt-5',
        input: [
          { role: 'user', content: 'go' },
          { type: 'function_call', call_id: 'call_q', name: 'read', arguments: '{}' },
        ],
      },
      '/v1/responses',
    );
    assert.equal(f.length, 1);
    assert.match(f[0].message, /No tool output found for function call call_q\./);
    const chained = lint(
      { model: 'gpt-5', previous_response_id: 'resp_1', input: [{ type: 'function_call_output', call_id: 'call_prev', output: 'ok' }] },
      '/v1/responses',
    );
    assert.deepEqual(chained, []);
    const orphan = lint(
      {
        model: 'gpt-5',
        input: [
          { role: 'user', content: 'go' },
          { type: 'function_call_output', call_id: 'call_prev', output: 'ok' },
        ],
      },
      '/v1/responses',
    );
    assert.equal(orphan.length, 1);
    assert.match(orphan[0].message, /No tool call found for function call output with call_id call_prev\./);
  });

  test('complete histories in every protocol, and calls without ids, give no finding', () => {
    assert.deepEqual(
      lint({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', tool_calls: [chatCall('a'), chatCall('b')] },
          tool('b'),
          tool('a'),
          { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'read', arguments: '{}' } }] },
        ],
      }),
      [],
    );
    assert.deepEqual(
      lint({
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'x', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
        ],
      }),
      [],
    );
    assert.deepEqual(run(historyToolResultMissing, { response: ok }).findings, []);
  });
});
