import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRequest } from '../../../src/core/analyze';
import historyToolOrder from '../../../src/core/checks/history-tool-order';
import { normalizeRequest } from '../../../src/core/wire/index';
import { response, run } from './helpers';

// The response names no model: the family comes from the request's.
const ok = response({ model: undefined, message: { content: 'Done.' }, finishReason: 'stop' });
const lint = (body: object, path?: string) => run(historyToolOrder, { response: ok, request: normalizeRequest(body, { path }) }).findings;

const chatCall = (id: string, name = 'read') => ({ id, type: 'function', function: { name, arguments: '{"path":"a"}' } });
const tool = (id: string, content = 'ok') => ({ role: 'tool', tool_call_id: id, content });
const use = (id: string) => ({ type: 'tool_use', id, name: 'read', input: { path: 'a' } });
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });

describe('history-tool-order', () => {
  test('Chat: a user message between an assistant tool call and its result (DeepSeek answers 400)', () => {
    const f = lint({
      model: 'deepseek-chat',
      messages: [
        { role: 'user', content: 'read a' },
        { role: 'assistant', content: null, tool_calls: [chatCall('call_1')] },
        { role: 'user', content: 'hurry up' },
        tool('call_1'),
      ],
    });
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.equal(f[0].location, 'request.messages[3]');
    assert.match(
      f[0].message,
      /"call_1" \(request\.messages\[3\]\) does not follow .*request\.messages\[1\]\.tool_calls\[0\].*the user message at request\.messages\[2\]/,
    );
    assert.match(f[0].message, /Messages with role 'tool' must be a response to a preceding message with 'tool_calls'/);
  });

  test('Chat: a result before its call, and a second turn separated by an assistant message', () => {
    const f = lint({
      messages: [
        { role: 'user', content: 'go' },
        tool('call_2'),
        { role: 'assistant', tool_calls: [chatCall('call_2')] },
        { role: 'assistant', content: 'thinking aloud' },
        tool('call_2b'),
        { role: 'assistant', tool_calls: [chatCall('call_3')] },
        { role: 'assistant', content: 'meanwhile' },
        tool('call_3'),
      ],
    });
    const kinds = f.map((x) => x.message);
    assert.equal(f.length, 2);
    assert.ok(kinds.some((m) => /"call_2" \(request\.messages\[1\]\) comes before the call \(request\.messages\[2\]/.test(m)));
    assert.ok(kinds.some((m) => /"call_3" .* the assistant message at request\.messages\[6\] comes between/.test(m)));
  });

  test('Chat: parallel calls answered in any order, several turns, no finding', () => {
    const f = lint({
      messages: [
        { role: 'system', content: 'You are an agent.' },
        { role: 'user', content: 'read a and b' },
        { role: 'assistant', content: '', tool_calls: [chatCall('call_a'), chatCall('call_b'), chatCall('call_c')] },
        tool('call_c'),
        tool('call_a'),
        tool('call_b'),
        { role: 'assistant', tool_calls: [chatCall('call_d')] },
        tool('call_d'),
        { role: 'assistant', content: 'Both read.' },
        { role: 'user', content: 'thanks' },
      ],
    });
    assert.deepEqual(f, []);
  });

  test('Anthropic: tool_result not first in the next user turn, and a result one message late', () => {
    const f = lint({
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      messages: [
        { role: 'user', content: 'read a' },
        { role: 'assistant', content: [{ type: 'text', text: 'Reading.' }, use('toolu_1')] },
        { role: 'user', content: [{ type: 'text', text: 'here you go' }, result('toolu_1')] },
        { role: 'assistant', content: [use('toolu_2')] },
        { role: 'user', content: [{ type: 'text', text: 'wait' }] },
        { role: 'user', content: [result('toolu_2')] },
      ],
    });
    assert.equal(f.length, 2);
    const first = f.find((x) => /comes after other content/.test(x.message));
    assert.ok(first);
    assert.equal(first.location, 'request.messages[2].content[1]');
    assert.match(first.message, /Did not find 1 `tool_result` block\(s\) at the beginning of this message/);
    const late = f.find((x) => /not in the user message right after/.test(x.message));
    assert.ok(late);
    assert.equal(late.location, 'request.messages[5].content[0]');
    assert.match(late.message, /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_2/);
  });

  test('Anthropic: parallel tool_use answered in one user turn, results first then text: no finding', () => {
    const f = lint({
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      messages: [
        { role: 'user', content: 'read a and b' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'two reads', signature: 'sig' }, use('toolu_a'), use('toolu_b')] },
        { role: 'user', content: [result('toolu_b'), result('toolu_a'), { type: 'text', text: 'also check c' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    assert.deepEqual(f, []);
  });

  test('Responses: an output before its call; interleaved call/output pairs are fine', () => {
    const bad = lint(
      {
        model: 'gpt-5',
        input: [
          { role: 'user', content: 'go' },
          { type: 'function_call_output', call_id: 'call_9', output: 'ok' },
          { type: 'function_call', call_id: 'call_9', name: 'read', arguments: '{}' },
        ],
      },
      '/v1/responses',
    );
    assert.equal(bad.length, 1);
    assert.equal(bad[0].severity, 'error');
    assert.match(bad[0].message, /No tool call found for function call output with call_id call_9/);
    const good = lint(
      {
        model: 'gpt-5',
        input: [
          { role: 'user', content: 'go' },
          { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'x' },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{}' },
          { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'read', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_2', output: 'ok' },
          { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
          { type: 'function_call', call_id: 'call_3', name: 'read', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_3', output: 'ok' },
        ],
      },
      '/v1/responses',
    );
    assert.deepEqual(good, []);
  });

  test('Responses: a user message between a call and its output is a warning', () => {
    const f = lint(
      {
        model: 'kimi-k2.5',
        input: [
          { role: 'user', content: 'go' },
          { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
          { role: 'user', content: 'also this' },
          { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        ],
      },
      '/v1/responses',
    );
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'warning');
    assert.match(f[0].message, /the user item at request\.input\[2\] comes between/);
  });

  test('a Codex-style Responses history (encrypted reasoning, shell and custom tool calls, developer notes) is clean for every request rule', () => {
    const body = {
      model: 'gpt-5-codex',
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      instructions: 'You are Codex.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions>…</permissions>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix the test' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Look first.' }], encrypted_content: 'gAAAA1' },
        { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_sh', status: 'completed', action: { type: 'exec', command: ['ls'] } },
        { type: 'function_call', id: 'fc_1', call_id: 'call_rg', name: 'shell', arguments: '{"command":["rg","foo"]}' },
        { type: 'local_shell_call_output', call_id: 'call_sh', output: 'a b' },
        { type: 'function_call_output', call_id: 'call_rg', output: 'src/a.ts:1:foo' },
        { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAA2' },
        { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_patch', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Done' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Fixed.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'thanks' }] },
      ],
    };
    const { analysis } = analyzeRequest({ request: normalizeRequest(body, { path: '/v1/responses' }) });
    assert.deepEqual(analysis.findings, []);
  });

  test('no request, a request without history, or results whose call is nowhere: silent here', () => {
    assert.deepEqual(run(historyToolOrder, { response: ok }).findings, []);
    assert.deepEqual(lint({ messages: [{ role: 'user', content: 'hi' }] }), []);
    assert.deepEqual(lint({ messages: [{ role: 'user', content: 'hi' }, tool('call_gone')] }), []);
  });
});
