import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import historyReasoningMissing from '../../../src/core/checks/history-reasoning-missing';
import { normalizeRequest } from '../../../src/core/wire/index';
import { response, run } from './helpers';

// The response names no model: the family comes from the request's.
const ok = response({ model: undefined, message: { content: 'Done.' }, finishReason: 'stop' });
const lint = (body: object, path?: string) =>
  run(historyReasoningMissing, { response: ok, request: normalizeRequest(body, { path }) }).findings;

const call = (id: string) => ({ id, type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } });
const tool = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'ok' });
/** A two-step tool loop in Chat: the second assistant turn carries its reasoning or not. */
const chatLoop = (model: string, extra: object = {}, firstReasoning?: string, secondReasoning?: string) => ({
  model,
  ...extra,
  messages: [
    { role: 'user', content: 'fix the bug' },
    {
      role: 'assistant',
      content: '',
      ...(firstReasoning !== undefined && { reasoning_content: firstReasoning }),
      tool_calls: [call('functions.read:0')],
    },
    tool('functions.read:0'),
    {
      role: 'assistant',
      content: '',
      ...(secondReasoning !== undefined && { reasoning_content: secondReasoning }),
      tool_calls: [call('functions.read:1')],
    },
    tool('functions.read:1'),
  ],
});

describe('history-reasoning-missing', () => {
  test('Kimi K2.5 (thinks by default): tool-call turns without reasoning_content get the Moonshot 400', () => {
    const f = lint(chatLoop('moonshotai/kimi-k2.5'));
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.equal(f[0].location, 'request.messages[1]');
    assert.match(
      f[0].message,
      /^2 assistant turns that made tool calls are sent back without their reasoning_content \(request\.messages\[1\], request\.messages\[3\]\)/,
    );
    assert.match(f[0].message, /moonshotai\/kimi-k2\.5 thinks unless the request turns it off/);
    assert.match(f[0].message, /"thinking is enabled but reasoning_content is missing in assistant tool call message at index 1"/);
  });

  test('Kimi K2 thinking: one turn kept its reasoning, the other lost it', () => {
    const f = lint(chatLoop('kimi-k2-0905', {}, 'I should read the file.'));
    assert.equal(f.length, 1);
    assert.match(
      f[0].message,
      /^1 assistant turn .* \(request\.messages\[3\]\) while thinking is on \(1 other assistant turn carries reasoning_content\)/,
    );
    assert.match(f[0].message, /at index 3"/);
  });

  test('Kimi without thinking: K2-0905 with no reasoning anywhere, or thinking turned off, is silent', () => {
    assert.deepEqual(lint(chatLoop('moonshotai/kimi-k2-0905')), []);
    assert.deepEqual(lint(chatLoop('moonshotai/kimi-k2.5', { thinking: { type: 'disabled' } })), []);
    assert.deepEqual(lint(chatLoop('kimi-k2-0905', { thinking: { type: 'disabled' } }, 'kept')), []);
    // An empty reasoning_content is the field sent back: Moonshot accepts it.
    assert.deepEqual(lint(chatLoop('moonshotai/kimi-k2.5', {}, '', '')), []);
  });

  test('DeepSeek: deepseek-chat with thinking enabled (opencode #9397), V3.2 via OpenRouter reasoning, V4 by default', () => {
    const chat = lint(chatLoop('deepseek-chat', { thinking: { type: 'enabled' } }));
    assert.equal(chat.length, 1);
    assert.match(chat[0].message, /the request sets "thinking": \{"type": "enabled"\}/);
    assert.match(chat[0].message, /Missing `reasoning_content` field in the assistant message at message index 1/);
    assert.deepEqual(lint(chatLoop('deepseek-chat')), [], 'non-thinking deepseek-chat');
    assert.deepEqual(lint(chatLoop('deepseek/deepseek-r1', { reasoning: { effort: 'high' } })), [], 'R1 is not the thinking-mode API');
    const v32 = lint(chatLoop('deepseek/deepseek-v3.2', { reasoning: { enabled: true } }, 'plan'));
    assert.equal(v32.length, 1);
    assert.equal(v32[0].location, 'request.messages[3]');
    const v4 = lint(chatLoop('deepseek-v4-pro'));
    assert.match(v4[0].message, /The reasoning_content in the thinking mode must be passed back to the API\./);
    assert.deepEqual(lint(chatLoop('deepseek-v4-pro', { reasoning_effort: 'none' })), []);
    assert.deepEqual(lint(chatLoop('deepseek-v4-pro', {}, 'a', 'b')), []);
  });

  test('families that demand nothing (Qwen3) and unknown models are silent, thinking or not', () => {
    assert.deepEqual(lint(chatLoop('qwen/qwen3-235b-a22b-thinking-2507', { reasoning: { effort: 'high' } }, 'x')), []);
    assert.deepEqual(lint(chatLoop('some-model', { thinking: { type: 'enabled' } })), []);
  });

  const anthropic = (thinking: object | undefined, lastBlocks: object[]) => ({
    model: 'claude-sonnet-4-5',
    max_tokens: 2000,
    ...(thinking && { thinking }),
    messages: [
      { role: 'user', content: 'list files' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a b' }] },
      { role: 'assistant', content: lastBlocks },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'c' }] },
    ],
  });
  const use2 = { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'ls -a' } };

  test('Anthropic extended thinking: the last tool-use turn must open with its thinking block', () => {
    const f = lint(anthropic({ type: 'enabled', budget_tokens: 1024 }, [{ type: 'text', text: 'Again.' }, use2]));
    assert.equal(f.length, 1);
    assert.equal(f[0].location, 'request.messages[3].content[0]');
    assert.match(f[0].message, /messages\.3\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `text`/);
    // Earlier turns may drop their thinking; the last one keeps it (signed or redacted): fine.
    assert.deepEqual(
      lint(anthropic({ type: 'enabled', budget_tokens: 1024 }, [{ type: 'thinking', thinking: 'again', signature: 's' }, use2])),
      [],
    );
    assert.deepEqual(lint(anthropic({ type: 'enabled', budget_tokens: 1024 }, [{ type: 'redacted_thinking', data: 'xyz' }, use2])), []);
    assert.deepEqual(lint(anthropic(undefined, [use2])), [], 'thinking not enabled');
    assert.deepEqual(lint(anthropic({ type: 'disabled' }, [use2])), []);
  });

  test('Anthropic Messages to Kimi: every tool-use turn needs its thinking block', () => {
    const body = {
      ...anthropic({ type: 'enabled', budget_tokens: 1024 }, [{ type: 'thinking', thinking: 'again', signature: 's' }, use2]),
      model: 'kimi-k2.5',
    };
    const f = lint(body);
    assert.equal(f.length, 1);
    assert.match(f[0].message, /^1 assistant turn .* without its thinking block \(request\.messages\[1\]\)/);
    // A redacted thinking block is the reasoning sent back.
    const redacted = structuredClone(body);
    redacted.messages[1].content = [{ type: 'redacted_thinking', data: 'xyz' }, ...(redacted.messages[1].content as object[])];
    assert.deepEqual(lint(redacted), []);
  });

  test('Responses: a function_call item id without its reasoning item (OpenAI 400) is a warning; reasoning items count even when encrypted', () => {
    const input = (withReasoning: boolean, itemId = true) => ({
      model: 'gpt-5',
      reasoning: { effort: 'medium' },
      input: [
        { role: 'user', content: 'go' },
        ...(withReasoning ? [{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' }] : []),
        { type: 'function_call', ...(itemId && { id: 'fc_1' }), call_id: 'call_1', name: 'read', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
      ],
    });
    const f = lint(input(false), '/v1/responses');
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'warning');
    assert.match(f[0].message, /Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item/);
    assert.deepEqual(lint(input(true), '/v1/responses'), []);
    assert.deepEqual(lint(input(false, false), '/v1/responses'), []);
    assert.deepEqual(lint({ ...input(false), reasoning: { effort: 'none' } }, '/v1/responses'), []);
    // Kimi over Responses: an encrypted-only reasoning item is the reasoning sent back.
    assert.deepEqual(lint({ ...input(true, false), model: 'kimi-k2.5' }, '/v1/responses'), []);
    assert.equal(lint({ ...input(false, false), model: 'kimi-k2.5' }, '/v1/responses').length, 1);
  });

  test('no request is silent', () => {
    assert.deepEqual(run(historyReasoningMissing, { response: ok }).findings, []);
  });
});
