// Hand-written wire bodies for the wire tests, each following a documented real shape (sources in comments).

/** SSE framing of JSON payloads: `event:` line (optional) + `data:` line + blank line. */
export function sse(payloads: (object | string)[], opts: { named?: boolean; eol?: string } = {}): string {
  const eol = opts.eol ?? '\n';
  return payloads
    .map((p) => {
      const data = typeof p === 'string' ? p : JSON.stringify(p);
      const type = typeof p === 'object' && opts.named ? (p as { type?: string }).type : undefined;
      return (type ? `event: ${type}${eol}` : '') + `data: ${data}${eol}${eol}`;
    })
    .join('');
}

/**
 * Anthropic Messages tool-use stream: the Vercel AI SDK fixture quoted in wire-formats.md §5
 * (`anthropic-json-tool.1.chunks.txt`), with the elided parts filled in.
 */
export const anthropicToolStream = sse(
  [
    {
      type: 'message_start',
      message: {
        model: 'claude-haiku-4-5-20251001',
        id: 'msg_01K2JqJ7Yx1',
        type: 'message',
        role: 'assistant',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 849, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10 },
      },
    },
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA', name: 'json', input: {} },
    },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
    { type: 'ping' },
    {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"elements": [{"location": "San Francisco", "temperature": 58' },
    },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '}]' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '}' } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 849, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 47 },
    },
    { type: 'message_stop' },
  ],
  { named: true },
);

/** Anthropic stream with extended thinking then text (thinking_delta / signature_delta / text_delta). */
export const anthropicThinkingStream = sse(
  [
    {
      type: 'message_start',
      message: {
        id: 'msg_think',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        usage: { input_tokens: 20, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Portuguese for hi ' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'is "Oi".' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Oi! ' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Olá também. 👋' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 30 } },
    { type: 'message_stop' },
  ],
  { named: true },
);

/** OpenAI Responses stream (wire-formats.md §6): reasoning summary, text, one function call, response.completed. */
export const responsesToolStream = sse(
  [
    {
      type: 'response.created',
      sequence_number: 0,
      response: { id: 'resp_123', object: 'response', status: 'in_progress', model: 'gpt-5-codex', output: [] },
    },
    {
      type: 'response.in_progress',
      sequence_number: 1,
      response: { id: 'resp_123', object: 'response', status: 'in_progress', model: 'gpt-5-codex', output: [] },
    },
    { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
    {
      type: 'response.reasoning_summary_text.delta',
      sequence_number: 3,
      item_id: 'rs_1',
      output_index: 0,
      summary_index: 0,
      delta: 'Need to list ',
    },
    {
      type: 'response.reasoning_summary_text.delta',
      sequence_number: 4,
      item_id: 'rs_1',
      output_index: 0,
      summary_index: 0,
      delta: 'the files.',
    },
    {
      type: 'response.output_item.done',
      sequence_number: 5,
      output_index: 0,
      item: { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Need to list the files.' }] },
    },
    {
      type: 'response.output_item.added',
      sequence_number: 6,
      output_index: 1,
      item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] },
    },
    { type: 'response.output_text.delta', sequence_number: 7, item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Listing ' },
    { type: 'response.output_text.delta', sequence_number: 8, item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'files.' },
    { type: 'response.output_text.done', sequence_number: 9, item_id: 'msg_1', output_index: 1, content_index: 0, text: 'Listing files.' },
    {
      type: 'response.output_item.done',
      sequence_number: 10,
      output_index: 1,
      item: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Listing files.' }] },
    },
    {
      type: 'response.output_item.added',
      sequence_number: 11,
      output_index: 2,
      item: { id: 'fc_1', type: 'function_call', call_id: 'call_abc', name: 'shell', arguments: '' },
    },
    { type: 'response.function_call_arguments.delta', sequence_number: 12, item_id: 'fc_1', output_index: 2, delta: '{"command":' },
    { type: 'response.function_call_arguments.delta', sequence_number: 13, item_id: 'fc_1', output_index: 2, delta: '["ls","-la"]}' },
    {
      type: 'response.function_call_arguments.done',
      sequence_number: 14,
      item_id: 'fc_1',
      output_index: 2,
      arguments: '{"command":["ls","-la"]}',
    },
    {
      type: 'response.output_item.done',
      sequence_number: 15,
      output_index: 2,
      item: {
        id: 'fc_1',
        type: 'function_call',
        call_id: 'call_abc',
        name: 'shell',
        arguments: '{"command":["ls","-la"]}',
        status: 'completed',
      },
    },
    {
      type: 'response.completed',
      sequence_number: 16,
      response: {
        id: 'resp_123',
        object: 'response',
        status: 'completed',
        model: 'gpt-5-codex',
        usage: {
          input_tokens: 500,
          input_tokens_details: { cached_tokens: 128 },
          output_tokens: 40,
          output_tokens_details: { reasoning_tokens: 12 },
          total_tokens: 540,
        },
      },
    },
  ],
  { named: true },
);

/** The mid-stream error event exactly as OpenRouter documents it (wire-formats.md §1.6). */
export const openrouterMidStreamError =
  'data: {"id":"cmpl-abc123","object":"chat.completion.chunk","created":1234567890,"model":"gpt-3.5-turbo","provider":"openai","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}';

/** A short OpenRouter chat stream: comment, role chunk, content, a tool call in fragments, usage chunk with empty choices. */
export function chatStream(eol = '\n'): string {
  const base = { id: 'gen-1-abc', object: 'chat.completion.chunk', created: 1, model: 'moonshotai/kimi-k2', provider: 'Fireworks' };
  const chunk = (delta: object, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, native_finish_reason: finish }],
  });
  return (
    `: OPENROUTER PROCESSING${eol}${eol}` +
    sse(
      [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Héllo ' }),
        chunk({ content: 'wörld 😀' }),
        chunk({ tool_calls: [{ index: 0, id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"a.txt"}' } }] }),
        chunk({
          tool_calls: [{ index: 1, id: 'functions.read:1', type: 'function', function: { name: 'read', arguments: '{"path":"b.txt"}' } }],
        }),
        chunk({}, 'tool_calls'),
        {
          ...base,
          choices: [],
          usage: {
            prompt_tokens: 10,
            completion_tokens: 20,
            total_tokens: 30,
            cost: 0.001,
            completion_tokens_details: { reasoning_tokens: 0 },
          },
        },
        '[DONE]',
      ],
      { eol },
    )
  );
}

/** SGLang /generate streamed in the default cumulative mode: every chunk repeats all text and ids so far. */
export const sglangCumulativeStream = sse([
  { text: 'Hel', output_ids: [9906], meta_info: { id: 'r1', finish_reason: null, prompt_tokens: 5, completion_tokens: 1 } },
  { text: 'Hello', output_ids: [9906, 13], meta_info: { id: 'r1', finish_reason: null, prompt_tokens: 5, completion_tokens: 2 } },
  {
    text: 'Hello<|im_end|>',
    output_ids: [9906, 13, 163586],
    meta_info: { id: 'r1', finish_reason: { type: 'stop', matched: 163586 }, prompt_tokens: 5, completion_tokens: 3, cached_tokens: 2 },
  },
  '[DONE]',
]);
