import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectProtocol, parseResponseBody } from '../../../src/core/wire/index';
import { anthropicToolStream, chatStream, responsesToolStream, sglangCumulativeStream, sse } from './samples';

test('detectProtocol: hint protocol, then path, then content', () => {
  const chat = chatStream();
  assert.equal(detectProtocol(chat), 'openai-chat');
  assert.equal(detectProtocol(anthropicToolStream), 'anthropic-messages');
  assert.equal(detectProtocol(responsesToolStream), 'openai-responses');
  assert.equal(detectProtocol(sglangCumulativeStream), 'sglang-generate');
  assert.equal(detectProtocol('{"object":"chat.completion","choices":[]}'), 'openai-chat');
  assert.equal(detectProtocol('{"type":"message","content":[]}'), 'anthropic-messages');
  assert.equal(detectProtocol('{"object":"response","output":[]}'), 'openai-responses');
  assert.equal(detectProtocol('{"text":"x","meta_info":{}}'), 'sglang-generate');
  assert.equal(detectProtocol('<|tool_calls_section_begin|>'), 'native-text');
  assert.equal(detectProtocol(''), 'unknown');
  // Path wins over content; the explicit protocol wins over both.
  assert.equal(detectProtocol('{"error":{"message":"x"}}', { path: '/api/v1/chat/completions?x=1' }), 'openai-chat');
  assert.equal(detectProtocol('{}', { path: '/v1/messages' }), 'anthropic-messages');
  assert.equal(detectProtocol('{}', { path: '/v1/responses/' }), 'openai-responses');
  assert.equal(detectProtocol('{}', { path: '/generate' }), 'sglang-generate');
  assert.equal(detectProtocol(chat, { protocol: 'native-text', path: '/v1/messages' }), 'native-text');
  // Anthropic and Responses both send type:"error"; the nesting tells them apart.
  assert.equal(detectProtocol('data: {"type":"error","error":{"type":"api_error","message":"x"}}\n\n'), 'anthropic-messages');
  assert.equal(detectProtocol('data: {"type":"error","code":"x","message":"y"}\n\n'), 'openai-responses');
  // A stream cut inside its first event.
  assert.equal(detectProtocol('data: {"type":"message_start","message":{"id":"msg_1","mod'), 'anthropic-messages');
});

test('raw native text: content is the text, terminated', () => {
  const text = 'Let me read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a"}';
  const r = parseResponseBody(new TextEncoder().encode(text));
  assert.equal(r.protocol, 'native-text');
  assert.equal(r.message.content, text);
  assert.equal(r.terminated, true);
  assert.deepEqual(r.wireIssues, []);
  // A hint can force raw text even when it looks like JSON.
  assert.equal(parseResponseBody('{"a":1}', { protocol: 'native-text' }).message.content, '{"a":1}');
});

test('raw native text is the body decoded once, exactly as TextDecoder reads it, whatever the framing', () => {
  // A BOM, invalid UTF-8 (becomes U+FFFD), a multi-byte character, and text that looks like JSON or SSE but is
  // declared raw by the hint.
  const utf8 = new TextDecoder();
  const bodies = [
    Uint8Array.from([0xef, 0xbb, 0xbf, 0x3c, 0x7c, 0xff, 0x7c, 0x3e, 0xc3, 0xa9, 0x20, 0xe2, 0x82]),
    new TextEncoder().encode('{"choices": [1, 2'),
    new TextEncoder().encode('data: {"a":1}\n\ndata: [DONE]\n\n'),
  ];
  for (const bytes of bodies) {
    const r = parseResponseBody(bytes, { protocol: 'native-text' });
    assert.equal(r.protocol, 'native-text');
    assert.equal(r.message.content, utf8.decode(bytes));
    assert.deepEqual(r.events, [{ data: utf8.decode(bytes), offset: 0 }]);
  }
  assert.equal(parseResponseBody(bodies[0]).message.content, utf8.decode(bodies[0]));
});

test('empty body', () => {
  for (const body of ['', '  \r\n', new Uint8Array(0)]) {
    const r = parseResponseBody(body, { path: '/api/v1/chat/completions' });
    assert.equal(r.protocol, 'openai-chat');
    assert.equal(r.terminated, false);
    assert.deepEqual(
      r.wireIssues.map((i) => i.code),
      ['empty-body'],
    );
  }
});

test('text where JSON or SSE was expected (an HTML error page)', () => {
  const r = parseResponseBody('<html><body>502 Bad Gateway</body></html>', { path: '/api/v1/chat/completions' });
  assert.equal(r.protocol, 'openai-chat');
  assert.equal(r.terminated, false);
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['invalid-json'],
  );
  assert.match(r.wireIssues[0].message, /502 Bad Gateway/);
});

test('truncated JSON body: truncated-body, what was received is kept', () => {
  const full = JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    provider: 'Novita',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Hello there, reading the file',
          tool_calls: [{ index: 0, id: 'functions.read:0', function: { name: 'read', arguments: '{"path":"a' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
  });
  const marker = '\\"path\\":\\"a'; // inside the (escaped) arguments string
  const cut = full.slice(0, full.indexOf(marker) + marker.length);
  const r = parseResponseBody(cut);
  assert.equal(r.protocol, 'openai-chat');
  assert.equal(r.terminated, false);
  assert.equal(r.provider, 'Novita');
  assert.equal(r.message.content, 'Hello there, reading the file');
  assert.deepEqual(r.message.toolCalls, [{ index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path":"a' }]);
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['truncated-body'],
  );
  assert.equal(r.wireIssues[0].offset, cut.length);
});

test('JSON followed by garbage is not a truncation: read as text against the hint', () => {
  const r = parseResponseBody('{"a":1} trailing', { path: '/api/v1/chat/completions' });
  assert.deepEqual(
    r.wireIssues.map((i) => i.code),
    ['invalid-json'],
  );
});

test('hint.chunks gives each event the time of the chunk holding its first byte', () => {
  const body = sse(['{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}', '[DONE]']);
  const split = body.indexOf('[DONE]') - 3;
  const r = parseResponseBody(body, {
    chunks: [
      { t: 120, offset: 0, length: split },
      { t: 480, offset: split, length: body.length - split },
    ],
  });
  assert.deepEqual(
    r.events.map((e) => e.t),
    [120, 120],
  );
  const later = parseResponseBody(body, {
    chunks: [
      { t: 120, offset: 0, length: 10 },
      { t: 480, offset: 10, length: body.length - 10 },
    ],
  });
  assert.deepEqual(
    later.events.map((e) => e.t),
    [120, 480],
  );
});

test('content-type text/event-stream makes a body without a recognizable first line SSE', () => {
  const r = parseResponseBody('\n\ndata: {"object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n', {
    contentType: 'text/event-stream; charset=utf-8',
  });
  assert.equal(r.streamed, true);
  assert.equal(r.terminated, true);
});

test('raw text that starts with [ or { is not taken for truncated JSON', () => {
  for (const text of ['[thinking] the user wants', '{ let me check }', '[1] First point', '{"a": tru e}']) {
    const r = parseResponseBody(text);
    assert.equal(r.protocol, 'native-text', text);
    assert.equal(r.message.content, text);
  }
  // …while real truncations still are.
  for (const cut of ['{"a": tr', '[1, 2', '{"a": -1.5e', '{"a": "x\\u00']) {
    const r = parseResponseBody(cut);
    assert.deepEqual(
      r.wireIssues.map((i) => i.code),
      ['truncated-body'],
      cut,
    );
  }
});
