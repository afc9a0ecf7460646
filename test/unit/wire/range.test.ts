// One range of a body's wire events (wire/range.ts) is exactly that slice of what the whole-body parse lists in
// `events`, with the same times, whatever the chunk boundaries: on SSE streams (comments, CRLF, a BOM, a torn last
// event), JSON, plain text and NUL-delimited bodies. It stops reading once the range is full.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseResponseBody } from '../../../src/core/wire/index';
import { wireEventRange } from '../../../src/core/wire/range';
import { prng } from '../../helpers/prng';
import { anthropicToolStream, chatStream, responsesToolStream } from './samples';

const enc = new TextEncoder();

/** A chat stream of `n` content deltas with a keep-alive comment every 7th event, and `[DONE]`. */
function longChat(n: number, eol = '\n'): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 7 === 3) parts.push(`: OPENROUTER PROCESSING${eol}${eol}`);
    parts.push(`data: {"choices":[{"index":0,"delta":{"content":"w${i} café 😀"}}]}${eol}${eol}`);
  }
  parts.push(`data: [DONE]${eol}${eol}`);
  return parts.join('');
}

function bodies(): { name: string; bytes: Uint8Array }[] {
  return [
    { name: 'chat', bytes: enc.encode(chatStream()) },
    { name: 'long-chat', bytes: enc.encode(longChat(300)) },
    { name: 'long-chat-crlf', bytes: enc.encode(longChat(120, '\r\n')) },
    { name: 'bom', bytes: enc.encode('\uFEFF\n' + longChat(40)) },
    { name: 'torn-last-event', bytes: enc.encode(longChat(50).slice(0, -9)) },
    { name: 'anthropic', bytes: enc.encode(anthropicToolStream) },
    { name: 'responses', bytes: enc.encode(responsesToolStream) },
    {
      name: 'json',
      bytes: enc.encode(
        JSON.stringify({ object: 'chat.completion', choices: [{ index: 0, message: { content: 'hi' }, finish_reason: 'stop' }] }),
      ),
    },
    { name: 'text', bytes: enc.encode('<think>plain model text</think>done') },
    {
      name: 'nul-delimited',
      bytes: enc.encode('{"text":"a","meta_info":{}}\0{"text":"ab","meta_info":{}}\0{"text":"abc","meta_info":{}}\0'),
    },
  ];
}

/** `bytes` cut at random places (one-byte chunks now and then, so line ends and characters split), times 10, 20, …. */
function chunked(bytes: Uint8Array, rand: () => number): { bytes: Uint8Array; t: number }[] {
  const out: { bytes: Uint8Array; t: number }[] = [];
  for (let at = 0; at < bytes.length; ) {
    const n = rand() < 0.2 ? 1 : 1 + Math.floor(rand() * 300);
    out.push({ bytes: bytes.slice(at, at + n), t: 10 * (out.length + 1) });
    at += n;
  }
  return out;
}

test('a range is the same slice of events, with the same times, as the whole-body parse lists', () => {
  const rand = prng(16);
  let ranges = 0;
  for (const { name, bytes } of bodies()) {
    for (let round = 0; round < 3; round++) {
      const chunks = chunked(bytes, rand);
      let offset = 0;
      const timing = chunks.map((c) => ({ t: c.t, offset: (offset += c.bytes.length) - c.bytes.length, length: c.bytes.length }));
      const all = parseResponseBody(bytes, { chunks: timing }).events;
      assert.ok(all.length > 0, name);
      for (const [from, count] of [
        [0, 5],
        [1, 3],
        [Math.floor(all.length / 2), 7],
        [all.length - 4, 10],
        [all.length - 1, 1],
        [0, all.length + 5],
      ]) {
        if (from < 0) continue;
        const r = wireEventRange(chunks, from, count);
        const want = all.slice(from, from + count);
        const why = `${name} round ${round} [${from}, +${count})`;
        assert.deepEqual(
          r.events.map((e) => ({ t: e.t, event: e.event, data: e.data, comment: e.comment })),
          want.map((e) => ({ t: e.t, event: e.event, data: e.data, comment: e.comment })),
          why,
        );
        const before = all
          .slice(0, from)
          .filter((e) => e.t !== undefined)
          .at(-1)?.t;
        assert.equal(r.timeBefore, before, `${why}: the time the first gap is measured from`);
        if (from + count >= all.length) assert.equal(r.total, all.length, `${why}: a range reaching the end knows the total`);
        ranges++;
      }
    }
  }
  assert.ok(ranges > 150);
});

test('past the end there are no events and the total is known; a full range stops reading', () => {
  const bytes = enc.encode(longChat(1000));
  const chunks = chunked(bytes, prng(7));
  const total = parseResponseBody(bytes).events.length;
  assert.deepEqual(wireEventRange(chunks, total, 10), { events: [], timeBefore: chunks.at(-1)!.t, total });
  assert.deepEqual(wireEventRange([], 0, 10), { events: [], timeBefore: undefined, total: 0 });

  let read = 0;
  const counted = (function* () {
    for (const c of chunks) {
      read++;
      yield c;
    }
  })();
  const first = wireEventRange(counted, 0, 20);
  assert.equal(first.events.length, 20);
  assert.equal(first.total, undefined, 'a range that stopped early does not claim a total');
  assert.ok(read < chunks.length / 10, `read ${read} of ${chunks.length} chunks for the first 20 events`);
});
