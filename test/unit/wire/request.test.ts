import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeRequest } from '../../../src/core/wire/index';
import { RECORDINGS, recording } from '../../helpers/shared';

test('recorded requests: Chat Completions with the weather tool', (t) => {
  let ran = 0;
  for (const name of RECORDINGS) {
    const body = recording(name)?.files['request.json'];
    if (!body) continue;
    ran++;
    const req = normalizeRequest(body);
    assert.equal(req.protocol, 'openai-chat', name);
    assert.deepEqual(
      req.messages,
      [
        { role: 'system', content: 'You are a helpful assistant' },
        { role: 'user', content: "What's the weather in Florence,Italy?" },
      ],
      name,
    );
    assert.equal(req.tools.length, 1, name);
    assert.equal(req.tools[0].name, 'weather', name);
    assert.deepEqual((req.tools[0].parameters as { required: string[] }).required, ['location'], name);
  }
  if (ran === 0) t.skip('shared recordings absent (set TOKENSCOPE_SHARED)');
  const streamed = recording('18-kimi-fantasy-openrouter-tool-stream')?.files['request.json'];
  if (streamed) {
    const req = normalizeRequest(streamed, { path: '/api/v1/chat/completions' });
    assert.equal(req.stream, true);
    assert.equal(req.model, 'moonshotai/kimi-k2.5');
  }
});

test('Chat Completions: tool calls and tool results in history, reasoning, content parts, provider pin', () => {
  const body = {
    model: 'moonshotai/kimi-k2-0905',
    stream: true,
    provider: { only: ['chutes'], allow_fallbacks: false, require_parameters: true },
    messages: [
      { role: 'system', content: 'You are OpenCode.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Read ' },
          { type: 'text', text: 'a.txt' },
        ],
      },
      {
        role: 'assistant',
        content: '',
        reasoning_content: 'Need to read.',
        tool_calls: [{ id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } }],
      },
      { role: 'tool', tool_call_id: 'functions.read:0', content: 'hello' },
    ],
    tools: [
      {
        type: 'function',
        function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
    ],
  };
  const req = normalizeRequest(body);
  assert.equal(req.protocol, 'openai-chat');
  assert.equal(req.model, 'moonshotai/kimi-k2-0905');
  assert.equal(req.stream, true);
  assert.deepEqual(req.provider, { only: ['chutes'], allowFallbacks: false, require_parameters: true });
  assert.deepEqual(req.messages, [
    { role: 'system', content: 'You are OpenCode.' },
    { role: 'user', content: 'Read a.txt' },
    {
      role: 'assistant',
      reasoning: 'Need to read.',
      toolCalls: [{ index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path":"a.txt"}' }],
    },
    { role: 'tool', content: 'hello', toolCallId: 'functions.read:0' },
  ]);
  assert.deepEqual(req.tools, [
    { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  ]);
  assert.equal(req.raw, body);
});

test('Anthropic Messages: system blocks, thinking, tool_use, tool_result, input_schema', () => {
  const body = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'You are Claude Code.' }],
    messages: [
      { role: 'user', content: 'List files' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Use Bash.', signature: 'sig' },
          { type: 'text', text: 'Listing.' },
          { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'a.txt' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ],
    tools: [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
      },
    ],
  };
  const req = normalizeRequest(JSON.stringify(body));
  assert.equal(req.protocol, 'anthropic-messages');
  assert.deepEqual(req.messages, [
    { role: 'system', content: 'You are Claude Code.' },
    { role: 'user', content: 'List files' },
    {
      role: 'assistant',
      content: 'Listing.',
      reasoning: 'Use Bash.',
      toolCalls: [{ index: 0, id: 'toolu_01', name: 'Bash', arguments: '{"command":"ls"}' }],
    },
    { role: 'tool', content: 'a.txt', toolCallId: 'toolu_01' },
    { role: 'user', content: 'Thanks' },
  ]);
  assert.deepEqual(req.tools, [{ name: 'Bash', description: 'Run a command', parameters: body.tools[0].input_schema }]);
});

test('Responses: instructions, message / reasoning / function_call / function_call_output items, tools', () => {
  const body = {
    model: 'gpt-5-codex',
    instructions: 'You are Codex.',
    stream: true,
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run ls' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Use shell.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
      { role: 'user', content: 'ok' },
    ],
    tools: [
      { type: 'function', name: 'shell', description: 'Run a shell command', parameters: { type: 'object' } },
      { type: 'web_search' },
    ],
  };
  const req = normalizeRequest(body, { path: '/v1/responses' });
  assert.equal(req.protocol, 'openai-responses');
  assert.deepEqual(req.messages, [
    { role: 'system', content: 'You are Codex.' },
    { role: 'user', content: 'Run ls' },
    {
      role: 'assistant',
      reasoning: 'Use shell.',
      content: 'Running.',
      toolCalls: [{ index: 0, id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' }],
    },
    { role: 'tool', content: 'a.txt', toolCallId: 'call_1' },
    { role: 'user', content: 'ok' },
  ]);
  assert.deepEqual(req.tools, [
    { name: 'shell', description: 'Run a shell command', parameters: { type: 'object' } },
    { name: 'web_search' },
  ]);
  assert.equal(normalizeRequest({ model: 'm', input: 'hi' }).messages[0].content, 'hi');
});

test('SGLang /generate: text prompt or input_ids, no tools', () => {
  const byText = normalizeRequest({ text: '<|im_user|>hi<|im_end|>', sampling_params: { max_new_tokens: 64 }, stream: true });
  assert.equal(byText.protocol, 'sglang-generate');
  assert.deepEqual(byText.messages, [{ role: 'prompt', content: '<|im_user|>hi<|im_end|>' }]);
  assert.deepEqual(byText.tools, []);
  assert.equal(byText.stream, true);
  const byIds = normalizeRequest(new TextEncoder().encode('{"input_ids":[1,2,3]}'), { path: '/generate' });
  assert.equal(byIds.protocol, 'sglang-generate');
  assert.deepEqual(byIds.raw, { input_ids: [1, 2, 3] });
});

test('bodies that are not requests never throw', () => {
  for (const body of [undefined, null, 42, 'not json', '[1,2]', { messages: 'x', tools: 'y' }, { messages: [null, 1, { role: 7 }] }]) {
    const req = normalizeRequest(body);
    assert.ok(Array.isArray(req.messages) && Array.isArray(req.tools));
  }
  assert.equal(normalizeRequest('not json').raw, 'not json');
  assert.equal(normalizeRequest('not json').protocol, 'unknown');
});
