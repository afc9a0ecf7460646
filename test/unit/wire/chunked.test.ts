// The chunked parse (wire/chunked.ts) gives what the whole-body parse gives, whatever the chunk boundaries: on the
// samples and recordings, cut short and mutated, with and without a protocol hint, and it keeps no stream events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ParsedResponse } from '../../../src/core/model';
import { parseResponseChunks } from '../../../src/core/wire/chunked';
import { eventCount } from '../../../src/core/wire/common';
import { parseResponseBody, type BodyHint } from '../../../src/core/wire/index';
import { RECORDINGS, recording } from '../../helpers/shared';
import { prng } from '../../helpers/prng';
import {
  anthropicThinkingStream,
  anthropicToolStream,
  chatStream,
  openrouterMidStreamError,
  responsesToolStream,
  sglangCumulativeStream,
} from './samples';

const enc = new TextEncoder();

function bodies(): { name: string; bytes: Uint8Array }[] {
  const out = [
    { name: 'chat', bytes: enc.encode(chatStream()) },
    { name: 'chat-crlf', bytes: enc.encode(chatStream('\r\n')) },
    { name: 'anthropic-tool', bytes: enc.encode(anthropicToolStream) },
    { name: 'anthropic-thinking', bytes: enc.encode(anthropicThinkingStream) },
    { name: 'responses', bytes: enc.encode(responsesToolStream) },
    { name: 'sglang', bytes: enc.encode(sglangCumulativeStream) },
    { name: 'mid-stream-error', bytes: enc.encode(openrouterMidStreamError + '\n\n') },
    { name: 'bom-and-blank-lines', bytes: enc.encode('\uFEFF\n\n' + chatStream()) },
    {
      name: 'json',
      bytes: enc.encode(
        JSON.stringify({
          id: 'gen-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { content: 'hi' }, finish_reason: 'stop' }],
        }),
      ),
    },
    { name: 'text', bytes: enc.encode('<think>plain model text</think>done') },
    {
      name: 'nul-delimited',
      bytes: enc.encode('{"text":"a","meta_info":{"finish_reason":null}}\0{"text":"ab","meta_info":{"finish_reason":"stop"}}\0'),
    },
  ];
  for (const name of RECORDINGS) {
    const files = recording(name)?.files;
    if (files?.['stream.sse']) out.push({ name, bytes: enc.encode(files['stream.sse']) });
    if (files?.['response.json']) out.push({ name: `${name}.json`, bytes: enc.encode(files['response.json']) });
  }
  return out;
}

/** `bytes` in chunks at random boundaries (some of one byte, so a line end or a character is split), times 1, 2, …. */
function chunked(bytes: Uint8Array, rand: () => number): { bytes: Uint8Array; t: number }[] {
  const out: { bytes: Uint8Array; t: number }[] = [];
  for (let at = 0; at < bytes.length; ) {
    const n = rand() < 0.3 ? 1 : 1 + Math.floor(rand() * 64);
    out.push({ bytes: bytes.slice(at, at + n), t: out.length + 1 });
    at += n;
  }
  return out;
}

/**
 * The whole-body parse, a stream's event list replaced by its count: what the chunked parse must equal. SGLang's
 * NUL-delimited JSON chunks (a body that opens with `{`) are gathered whole and keep their events.
 */
function expected(bytes: Uint8Array, hint: BodyHint, chunks: { bytes: Uint8Array; t: number }[]): ParsedResponse {
  let offset = 0;
  const timing = chunks.map((c) => ({ t: c.t, offset: (offset += c.bytes.length) - c.bytes.length, length: c.bytes.length }));
  const whole = parseResponseBody(bytes, { ...hint, chunks: timing });
  const sse = whole.streamed && !/^\uFEFF?\s*[{[]/.test(new TextDecoder().decode(bytes.subarray(0, 64)));
  return sse ? { ...whole, events: [], eventCount: whole.events.length } : whole;
}

function same(bytes: Uint8Array, hint: BodyHint, rand: () => number, why: string): ParsedResponse {
  const chunks = chunked(bytes, rand);
  const got = parseResponseChunks(chunks, hint);
  const want = expected(bytes, hint, chunks);
  assert.deepEqual(got, want, why);
  return got;
}

test('chunked parse: the whole-body result at random chunk boundaries, streams keeping no events', () => {
  let streams = 0;
  for (const { name, bytes } of bodies()) {
    const rand = prng(name.length * 31337);
    for (let k = 0; k < 20; k++) {
      const r = same(bytes, {}, rand, `${name} #${k}`);
      if (r.streamed && name !== 'nul-delimited') {
        assert.equal(r.events.length, 0, name);
        assert.ok(eventCount(r) > 0, name);
        streams++;
      }
    }
    same(bytes, { path: '/api/v1/chat/completions', contentType: 'text/event-stream' }, rand, `${name} by path`);
    same(bytes, { protocol: 'native-text' }, rand, `${name} as native text`);
  }
  assert.ok(streams >= 20 * 8, 'streams were parsed in chunks');
});

test('chunked parse: cut short and mutated bodies give the whole-body result too', () => {
  for (const { name, bytes } of bodies()) {
    const rand = prng(name.length * 7919);
    const protocol = parseResponseBody(bytes).protocol;
    for (let k = 0; k < 60; k++) {
      const cut = bytes.subarray(0, Math.floor(rand() * bytes.length));
      same(cut, { protocol }, rand, `${name} cut at ${cut.length}`);
      const copy = bytes.slice();
      for (let f = 0; f < 1 + Math.floor(rand() * 6); f++) copy[Math.floor(rand() * copy.length)] = Math.floor(rand() * 256);
      same(copy, k % 2 ? {} : { path: '/v1/messages' }, rand, `${name} mutated #${k}`);
    }
  }
});
