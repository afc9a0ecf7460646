import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseResponseBody } from '../../../src/core/wire/index';
import { recording } from '../../helpers/shared';
import { chatStream, openrouterMidStreamError, sse } from './samples';

const SKIP = 'shared recordings absent (set TOKENSCOPE_SHARED)';

test('recording 18 (Kimi K2.5 via OpenRouter/Chutes, streamed): reasoning, tool call, usage, provider', (t) => {
  const body = recording('18-kimi-fantasy-openrouter-tool-stream')?.files['stream.sse'];
  if (!body) return t.skip(SKIP);
  const r = parseResponseBody(body, { path: '/api/v1/chat/completions', contentType: 'text/event-stream' });
  assert.equal(r.protocol, 'openai-chat');
  assert.equal(r.streamed, true);
  assert.equal(r.terminated, true);
  assert.deepEqual(r.wireIssues, []);
  assert.equal(
    r.message.reasoning,
    ' The user is asking for the weather in Florence, Italy. I have a `weather` function that takes a `location` parameter which is the city name. I should call this function with "Florence" or "Florence,Italy" as the location. Let me use the location provided by the user.',
  );
  assert.equal(r.message.content, undefined); // only empty content deltas were sent
  assert.deepEqual(r.message.toolCalls, [
    { index: 0, id: 'functions.weather:0', name: 'weather', arguments: '{"location": "Florence,Italy"}' },
  ]);
  assert.equal(r.provider, 'Chutes');
  assert.equal(r.model, 'moonshotai/kimi-k2.5-0127');
  assert.equal(r.id, 'gen-1777319903-e8Q7Du7mmUgiYBDzoHE6');
  assert.equal(r.finishReason, 'tool_calls');
  assert.equal(r.nativeFinishReason, 'tool_calls');
  assert.deepEqual(r.usage, {
    promptTokens: 69,
    completionTokens: 87,
    totalTokens: 156,
    reasoningTokens: 66,
    cachedTokens: 0,
    cost: 0.00020436,
  });
  assert.equal(r.events.length, 79);
  assert.deepEqual(r.events[0], { data: 'OPENROUTER PROCESSING', comment: true, offset: 0 });
});

test('recording 19 (GLM via OpenRouter/Z.AI, streamed): tool call arguments arrive whole after name', (t) => {
  const body = recording('19-glm-fantasy-openrouter-tool-stream')?.files['stream.sse'];
  if (!body) return t.skip(SKIP);
  const r = parseResponseBody(body);
  assert.equal(r.protocol, 'openai-chat');
  assert.equal(r.terminated, true);
  assert.deepEqual(r.wireIssues, []);
  assert.equal(r.message.reasoning, 'The user wants to know the weather in Florence, Italy. Let me call the weather function.');
  assert.deepEqual(r.message.toolCalls, [
    { index: 0, id: 'call_9400b8b3405c4d74b5b97e12', name: 'weather', arguments: '{"location":"Florence, Italy"}' },
  ]);
  assert.equal(r.provider, 'Z.AI');
  assert.equal(r.finishReason, 'tool_calls');
  assert.equal(r.usage?.cachedTokens, 128);
  assert.equal(r.usage?.reasoningTokens, 19);
});

test('recordings 17, 20–23 (JSON bodies)', (t) => {
  const cases = [
    [
      '17-kimi-fantasy-openrouter-tool-json',
      'Moonshot AI',
      "I'll check the weather in Florence, Italy for you.",
      undefined,
      { id: 'weather:0', args: '{"location": "Florence,Italy"}' },
      'tool_calls',
      99,
    ],
    [
      '20-harmony-fantasy-llamacpp-tool-json',
      undefined,
      undefined,
      'The user asks: "What\'s the weather in Florence, Italy?" We have a tool "functions.weather" that can get weather information. We should call it.',
      { id: 'mvVq65j66dyGRizURhbdNCEnSO56GhXx', args: '{"location":"Florence,Italy"}' },
      'tool_calls',
      197,
    ],
    [
      '21-deepseek-fantasy-v31-tool-json',
      'DeepInfra',
      "I'll check the weather in Florence, Italy for you.",
      undefined,
      { id: 'call_9a0a', args: '{"location": "Florence"}' },
      'tool_calls',
      187,
    ],
    [
      '22-qwen-fantasy-qwen3-235b-tool-json',
      'Alibaba',
      undefined,
      undefined,
      { id: 'call_72e6b5890385469d9a5c17', args: '{"location": "Florence,Italy"}' },
      'tool_calls',
      188,
    ],
    [
      '23-kimi-fantasy-k25-prose-only',
      'Inceptron',
      ' Oi! \n\n(You can also say **"Olá"** – it\'s slightly more formal, while "Oi" is casual and very common in both Brazil and Portugal.)',
      undefined,
      undefined,
      'stop',
      223,
    ],
  ] as const;
  let ran = 0;
  for (const [name, provider, content, reasoning, call, finish, total] of cases) {
    const body = recording(name)?.files['response.json'];
    if (!body) continue;
    ran++;
    const r = parseResponseBody(body, { contentType: 'application/json' });
    assert.equal(r.protocol, 'openai-chat', name);
    assert.equal(r.streamed, false, name);
    assert.equal(r.terminated, true, name);
    assert.deepEqual(r.wireIssues, [], name);
    assert.equal(r.provider, provider, name);
    assert.equal(r.message.content, content, name);
    if (reasoning !== undefined) assert.equal(r.message.reasoning, reasoning, name);
    assert.deepEqual(r.message.toolCalls, call ? [{ index: 0, id: call.id, name: 'weather', arguments: call.args }] : [], name);
    assert.equal(r.finishReason, finish, name);
    assert.equal(r.usage?.totalTokens, total, name);
  }
  if (ran === 0) t.skip(SKIP);
});

test('recording 23: reasoning text starts as sent and usage carries reasoning tokens', (t) => {
  const body = recording('23-kimi-fantasy-k25-prose-only')?.files['response.json'];
  if (!body) return t.skip(SKIP);
  const r = parseResponseBody(body);
  assert.ok(r.message.reasoning?.startsWith(' The user wants me to say "hi" in Portuguese.'));
  assert.ok(r.message.reasoning?.endsWith('Keep it simple and helpful.'));
  assert.equal(r.usage?.reasoningTokens, 166);
  assert.equal(r.nativeFinishReason, 'stop');
});

test('streamed: content, two tool calls by index, usage chunk with empty choices', () => {
  for (const eol of ['\n', '\r\n', '\r']) {
    const r = parseResponseBody(chatStream(eol));
    assert.equal(r.protocol, 'openai-chat');
    assert.equal(r.terminated, true);
    assert.deepEqual(r.wireIssues, []);
    assert.equal(r.message.content, 'Héllo wörld 😀');
    assert.deepEqual(r.message.toolCalls, [
      { index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path":"a.txt"}' },
      { index: 1, id: 'functions.read:1', name: 'read', arguments: '{"path":"b.txt"}' },
    ]);
    assert.equal(r.provider, 'Fireworks');
    assert.equal(r.finishReason, 'tool_calls');
    assert.deepEqual(r.usage, { promptTokens: 10, completionTokens: 20, totalTokens: 30, reasoningTokens: 0, cost: 0.001 });
    assert.equal(r.events[0].comment, true);
  }
});

test('OpenRouter mid-stream error (documented shape): error field, finish_reason error, error-event issue', () => {
  const body =
    sse([
      {
        id: 'cmpl-abc123',
        object: 'chat.completion.chunk',
        model: 'gpt-3.5-turbo',
        provider: 'openai',
        choices: [{ index: 0, delta: { content: 'Partial ans' }, finish_reason: null }],
      },
    ]) +
    openrouterMidStreamError +
    '\n\n';
  const r = parseResponseBody(body);
  assert.equal(r.message.content, 'Partial ans');
  assert.deepEqual(r.error, { code: 'server_error', message: 'Provider disconnected unexpectedly' });
  assert.equal(r.finishReason, 'error');
  assert.equal(r.provider, 'openai');
  const codes = r.wireIssues.map((i) => i.code);
  assert.deepEqual(codes, ['error-event', 'no-terminal-event']);
  assert.equal(r.wireIssues[0].eventIndex, 1);
  assert.equal(r.wireIssues[0].offset, body.indexOf(openrouterMidStreamError));
});

test('pre-stream error body {"error":{code,message,metadata}}', () => {
  const body = JSON.stringify({
    error: { code: 502, message: 'Provider returned error', metadata: { raw: 'upstream timeout', provider_name: 'Chutes' } },
  });
  const r = parseResponseBody(body, { path: '/api/v1/chat/completions' });
  assert.equal(r.protocol, 'openai-chat');
  assert.deepEqual(r.error, { code: 502, message: 'Provider returned error' });
  assert.equal(r.provider, 'Chutes');
  assert.equal(r.terminated, true);
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['error-event'],
  );
  assert.deepEqual(r.message, { toolCalls: [] });
});

test('an error body without a hint is still read (protocol unknown)', () => {
  const r = parseResponseBody('{"error":{"code":401,"message":"No auth credentials found"}}');
  assert.equal(r.protocol, 'unknown');
  assert.deepEqual(r.error, { code: 401, message: 'No auth credentials found' });
});

test('SGLang OpenAI-compatible extras: reasoning_content, matched_stop, logprobs tokens', () => {
  const body = {
    id: 'a1b2',
    object: 'chat.completion',
    model: 'moonshotai/Kimi-K2-Instruct',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hi', reasoning_content: 'Say hi.', tool_calls: null },
        logprobs: {
          content: [
            { token: 'H', bytes: [72], logprob: -0.1, top_logprobs: [] },
            { token: 'i', bytes: [105], logprob: -0.2, top_logprobs: [] },
          ],
        },
        finish_reason: 'stop',
        matched_stop: 163586,
      },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
  const r = parseResponseBody(JSON.stringify(body));
  assert.equal(r.message.content, 'Hi');
  assert.equal(r.message.reasoning, 'Say hi.');
  assert.equal(r.matchedStop, 163586);
  assert.equal(r.nativeFinishReason, undefined);
  assert.deepEqual(r.logprobTokens, [
    { token: 'H', bytes: [72] },
    { token: 'i', bytes: [105] },
  ]);
});

test('streamed reasoning_content (SGLang/vLLM) and reasoning_details without a reasoning string', () => {
  const r = parseResponseBody(
    sse([
      { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { reasoning_content: 'think ' } }] },
      {
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { reasoning_details: [{ type: 'reasoning.summary', summary: 'more' }] } }],
      },
      { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop', matched_stop: '</s>' }] },
      '[DONE]',
    ]),
  );
  assert.equal(r.message.reasoning, 'think more');
  assert.equal(r.message.content, 'ok');
  assert.equal(r.matchedStop, '</s>');
});

test('tool-call fragments without index: a new id opens a new call, fragments go to the last one', () => {
  const r = parseResponseBody(
    sse([
      {
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { tool_calls: [{ id: 'c1', function: { name: 'a', arguments: '{"x"' } }] } }],
      },
      { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ function: { arguments: ':1}' } }] } }] },
      {
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { tool_calls: [{ id: 'c2', function: { name: 'b', arguments: { y: 2 } } }] } }],
      },
      '[DONE]',
    ]),
  );
  assert.deepEqual(r.message.toolCalls, [
    { index: 0, id: 'c1', name: 'a', arguments: '{"x":1}' },
    { index: 1, id: 'c2', name: 'b', arguments: '{"y":2}' },
  ]);
});

test('legacy /completions text choices are content (raw markers show there)', () => {
  const r = parseResponseBody(
    sse([
      { object: 'text_completion', choices: [{ index: 0, text: '<|tool_calls_section_begin|>' }] },
      { object: 'text_completion', choices: [{ index: 0, text: '<|tool_call_begin|>', finish_reason: 'length' }] },
      '[DONE]',
    ]),
    { path: '/v1/completions' },
  );
  assert.equal(r.message.content, '<|tool_calls_section_begin|><|tool_call_begin|>');
  assert.equal(r.finishReason, 'length');
});

test('invalid JSON in one event is reported and parsing goes on; missing [DONE] is reported', () => {
  const body =
    'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: {"choices":[{\n\ndata: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}\n\n';
  const r = parseResponseBody(body);
  assert.equal(r.message.content, 'ab');
  assert.equal(r.finishReason, 'stop');
  assert.equal(r.terminated, false);
  assert.deepEqual(
    r.wireIssues.map(({ code, eventIndex, offset }) => ({ code, eventIndex, offset })),
    [
      { code: 'invalid-json', eventIndex: 1, offset: body.indexOf('data: {"choices"') },
      { code: 'no-terminal-event', eventIndex: undefined, offset: body.length },
    ],
  );
});
