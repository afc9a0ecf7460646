// Property tests over real recordings and the hand-written samples: random truncations and byte mutations never
// throw, and a truncated body yields a prefix of what the whole body yields.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ParsedResponse } from '../../../src/core/model';
import { parseResponseBody } from '../../../src/core/wire/index';
import { RECORDINGS, recording } from '../../helpers/shared';
import { prng } from '../../helpers/prng';
import { anthropicThinkingStream, anthropicToolStream, chatStream, responsesToolStream, sglangCumulativeStream } from './samples';

const enc = new TextEncoder();

function bodies(): { name: string; bytes: Uint8Array; streamed: boolean }[] {
  const out = [
    { name: 'chat', bytes: enc.encode(chatStream()), streamed: true },
    { name: 'chat-crlf', bytes: enc.encode(chatStream('\r\n')), streamed: true },
    { name: 'anthropic-tool', bytes: enc.encode(anthropicToolStream), streamed: true },
    { name: 'anthropic-thinking', bytes: enc.encode(anthropicThinkingStream), streamed: true },
    { name: 'responses', bytes: enc.encode(responsesToolStream), streamed: true },
    { name: 'sglang', bytes: enc.encode(sglangCumulativeStream), streamed: true },
  ];
  for (const name of RECORDINGS) {
    const files = recording(name)?.files;
    if (files?.['stream.sse']) out.push({ name, bytes: enc.encode(files['stream.sse']), streamed: true });
    if (files?.['response.json']) out.push({ name, bytes: enc.encode(files['response.json']), streamed: false });
  }
  return out;
}

/** A cut can end inside a UTF-8 character, decoded as U+FFFD; compare text without it. */
const clean = (s: string | undefined) => (s ?? '').replace(/\uFFFD$/, '');

function assertPrefix(part: ParsedResponse, whole: ParsedResponse, why: string): void {
  assert.ok(clean(whole.message.content).startsWith(clean(part.message.content)), `${why}: content`);
  assert.ok(clean(whole.message.reasoning).startsWith(clean(part.message.reasoning)), `${why}: reasoning`);
  assert.ok(part.message.toolCalls.length <= whole.message.toolCalls.length, `${why}: tool call count`);
  part.message.toolCalls.forEach((call, k) => {
    assert.ok(clean(whole.message.toolCalls[k].arguments).startsWith(clean(call.arguments)), `${why}: arguments ${k}`);
  });
}

test('fuzz: random truncations never throw, are reported, and keep a prefix of the content (300 per body)', () => {
  const all = bodies();
  for (const { name, bytes, streamed } of all) {
    const whole = parseResponseBody(bytes);
    assert.equal(whole.terminated, true, name);
    assert.deepEqual(whole.wireIssues, [], name);
    const rand = prng(name.length * 7919);
    for (let k = 0; k < 300; k++) {
      const cut = Math.floor(rand() * bytes.length);
      const why = `${name} cut at ${cut}`;
      // The protocol is given as the proxy knows it from the path: detection is tested on whole bodies.
      const part = parseResponseBody(bytes.subarray(0, cut), { protocol: whole.protocol });
      if (cut === 0) {
        assert.deepEqual(
          part.wireIssues.map((i) => i.code),
          ['empty-body'],
          why,
        );
        continue;
      }
      assert.equal(part.protocol, whole.protocol, why);
      if (!streamed) {
        assert.equal(part.terminated, false, why);
        assert.ok(
          part.wireIssues.some((i) => i.code === 'truncated-body'),
          why,
        );
      } else if (!part.terminated) {
        // Under 6 bytes (`event:`) the body is not recognizable as SSE: it is flagged as not the protocol's format.
        const flagged = (code: string) => code === 'no-terminal-event' || (cut < 6 && code === 'invalid-json');
        assert.ok(
          part.wireIssues.some((i) => flagged(i.code)),
          why,
        );
      }
      assertPrefix(part, whole, why);
    }
  }
});

test('fuzz: random byte mutations never throw (500 per body)', () => {
  for (const { name, bytes } of bodies()) {
    const rand = prng(name.length * 104729);
    for (let k = 0; k < 500; k++) {
      const copy = bytes.slice();
      const flips = 1 + Math.floor(rand() * 8);
      for (let f = 0; f < flips; f++) copy[Math.floor(rand() * copy.length)] = Math.floor(rand() * 256);
      const r = parseResponseBody(copy, rand() < 0.5 ? {} : { path: '/v1/messages' });
      assert.ok(Array.isArray(r.events) && Array.isArray(r.wireIssues) && Array.isArray(r.message.toolCalls), `${name} #${k}`);
    }
  }
});

test('fuzz: hostile shapes never throw', () => {
  const shapes = [
    'data: null\n\n',
    'data: 1\n\ndata: "x"\n\ndata: []\n\n',
    '{"choices":[null,{"delta":7}]}',
    '{"choices":{"0":1}}',
    '[[[[[[[[',
    '{"a":"\\',
    '{"a":"\\u12',
    '\0\0\0',
    '{"meta_info":{"finish_reason":{"type":7,"matched":[1,"x"]}}}',
    'data: {"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":7}}\n\n',
    'data: {"type":"response.function_call_arguments.delta","delta":{}}\n\n',
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":"x"},{"index":-1,"function":null}]}}],"usage":"x"}\n\n',
    'data: {"error":null,"choices":[{"logprobs":{"content":[null,{"token":1}]}}]}\n\n',
    '{"error":{"code":{},"message":{}}}',
    '{"type":"error","error":[]}',
    '['.repeat(100000),
  ];
  for (const s of shapes)
    for (const protocol of [undefined, 'openai-chat', 'anthropic-messages', 'openai-responses', 'sglang-generate'] as const) {
      assert.doesNotThrow(() => parseResponseBody(s, { protocol }), `${JSON.stringify(s.slice(0, 40))} as ${protocol}`);
    }
});
