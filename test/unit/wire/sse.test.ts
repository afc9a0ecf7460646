import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseReader, parseSse } from '../../../src/core/wire/sse';
import { RECORDINGS, recording } from '../../helpers/shared';
import { prng, randomSplit } from '../../helpers/prng';
import { anthropicToolStream, chatStream, openrouterMidStreamError, responsesToolStream, sglangCumulativeStream } from './samples';

const enc = new TextEncoder();

test('data events, comments, offsets', () => {
  const body = ': OPENROUTER PROCESSING\n\ndata: {"a":1}\n\ndata: [DONE]\n\n';
  assert.deepEqual(parseSse(body), [
    { data: 'OPENROUTER PROCESSING', comment: true, offset: 0 },
    { data: '{"a":1}', offset: 25 },
    { data: '[DONE]', offset: 40 },
  ]);
});

test('CRLF, CR and LF line ends give the same events', () => {
  const lf = 'event: message_start\ndata: {"x":"é"}\n\n: ka\n\ndata: two\n\n';
  const strip = (evs: ReturnType<typeof parseSse>) => evs.map(({ offset: _o, ...rest }) => rest);
  const expected = strip(parseSse(lf));
  assert.equal(expected.length, 3);
  assert.deepEqual(strip(parseSse(lf.replace(/\n/g, '\r\n'))), expected);
  assert.deepEqual(strip(parseSse(lf.replace(/\n/g, '\r'))), expected);
  // Offsets stay byte offsets of the event's first line in each variant.
  assert.equal(
    parseSse(lf.replace(/\n/g, '\r\n'))[2].offset,
    enc.encode('event: message_start\r\ndata: {"x":"é"}\r\n\r\n: ka\r\n\r\n').length,
  );
});

test('multi-line data is joined with \\n; event field; optional space after the colon', () => {
  assert.deepEqual(parseSse('event: ping\ndata:first\ndata: second\ndata\n\n'), [{ event: 'ping', data: 'first\nsecond\n', offset: 0 }]);
});

test('id/retry/unknown fields are ignored; event without data is still reported', () => {
  assert.deepEqual(parseSse('id: 7\nretry: 100\n\nevent: ping\n\nfoo: bar\ndata: x\n\n'), [
    { event: 'ping', data: '', offset: 18 },
    { data: 'x', offset: 31 },
  ]);
});

test('missing final blank line and missing final line end', () => {
  assert.deepEqual(parseSse('data: a\n\ndata: b'), [
    { data: 'a', offset: 0 },
    { data: 'b', offset: 9 },
  ]);
  assert.deepEqual(parseSse('data: a\n'), [{ data: 'a', offset: 0 }]);
  assert.deepEqual(parseSse(''), []);
});

test('a leading BOM is skipped and offsets still count it', () => {
  assert.deepEqual(parseSse('\uFEFFdata: a\n\n'), [{ data: 'a', offset: 3 }]);
});

test('split inside a multi-byte character and between \\r and \\n', () => {
  const bytes = enc.encode('data: 😀é\r\n\r\ndata: x\r\n\r\n');
  const r = new SseReader();
  const out = [
    ...r.push(bytes.subarray(0, 8)), // inside the 4-byte emoji
    ...r.push(bytes.subarray(8, 13)), // ends on \r
    ...r.push(bytes.subarray(13, 14)), // the \n alone
    ...r.push(bytes.subarray(14)),
    ...r.end(),
  ];
  assert.deepEqual(out, [
    { data: '😀é', offset: 0 },
    { data: 'x', offset: 16 },
  ]);
});

test('events get the arrival time of the chunk holding their first byte', () => {
  const r = new SseReader();
  const a = r.push('data: one\n\nda', 5);
  const b = r.push('ta: two\n\n: c\n\n', 9);
  const c = r.end();
  assert.deepEqual(
    [...a, ...b, ...c],
    [
      { data: 'one', offset: 0, t: 5 },
      { data: 'two', offset: 11, t: 5 },
      { data: 'c', comment: true, offset: 22, t: 9 },
    ],
  );
});

test('the reader copies pending bytes: callers may reuse their buffer', () => {
  const r = new SseReader();
  const buf = enc.encode('data: abc');
  const first = r.push(buf);
  buf.fill(0x7a);
  assert.deepEqual([...first, ...r.push('\n\n'), ...r.end()], [{ data: 'abc', offset: 0 }]);
});

test('the reader copies pending bytes of a Buffer too (whose own slice is a view)', () => {
  const r = new SseReader();
  const buf = Buffer.from('data: abc');
  const first = r.push(buf);
  buf.fill(0x7a);
  assert.deepEqual([...first, ...r.push('\n\n'), ...r.end()], [{ data: 'abc', offset: 0 }]);
});

test('lines are read in place inside a chunk that is a view into a larger buffer', () => {
  // Field names that only start like `data`/`event`, bare names, empty values, a comment without its space, two
  // spaces after the colon (one is part of the value), all inside a view with a non-zero byteOffset.
  const body = ':\n:x\ndata\n\ndat: no\ndatas: no\nevent\ndata:\n\ndata:  two\ndata:ü\n\neventx: no\nevent: e\n\n';
  const expected = [
    { data: '', comment: true, offset: 0 },
    { data: 'x', comment: true, offset: 2 },
    { data: '', offset: 5 },
    { data: '', event: '', offset: 11 },
    { data: ' two\nü', offset: 42 },
    { data: '', event: 'e', offset: 62 },
  ];
  assert.deepEqual(parseSse(body), expected);
  const padded = Buffer.from(`garbage\n\n${body}tail`);
  const view = padded.subarray(9, 9 + Buffer.byteLength(body));
  assert.deepEqual(parseSse(view), expected);
  assert.deepEqual(parseSse(new Uint8Array(view)), expected);
});

test('events serialize with their fields in a fixed order (captures and exports print them)', () => {
  const r = new SseReader();
  const events = [...r.push(': keep-alive\n\ndata: x\nevent: e\n\n', 7), ...r.end()];
  assert.equal(
    JSON.stringify(events),
    '[{"data":"keep-alive","comment":true,"offset":0,"t":7},{"data":"x","offset":14,"event":"e","t":7}]',
  );
});

/** Every body the fuzz runs over: recordings (when present) and the hand-written samples in several line-end styles. */
function fuzzBodies(): [string, Uint8Array][] {
  const bodies: [string, Uint8Array][] = [
    ['chat', enc.encode(chatStream())],
    ['chat-crlf', enc.encode(chatStream('\r\n'))],
    ['chat-cr', enc.encode(chatStream('\r'))],
    ['anthropic', enc.encode(anthropicToolStream)],
    ['responses', enc.encode(responsesToolStream)],
    ['sglang', enc.encode(sglangCumulativeStream)],
    ['midstream-error', enc.encode(openrouterMidStreamError)],
    ['multiline', enc.encode('event: e\r\ndata: a\r\ndata: ü\r\n: c\r\n\r\ndata: 😀😀\n\n')],
  ];
  for (const name of RECORDINGS) {
    const rec = recording(name);
    const body = rec?.files['stream.sse'];
    if (body) bodies.push([name, enc.encode(body)]);
  }
  return bodies;
}

test('fuzz: any byte split gives exactly the events of one push (400 seeds per body)', () => {
  for (const [name, bytes] of fuzzBodies()) {
    const whole = parseSse(bytes);
    assert.ok(whole.length > 0, name);
    for (let seed = 1; seed <= 400; seed++) {
      const r = new SseReader();
      const got = [];
      for (const part of randomSplit(bytes, prng(seed), seed % 4 === 0 ? 200 : 12)) got.push(...r.push(part));
      got.push(...r.end());
      assert.deepEqual(got, whole, `${name}, seed ${seed}`);
    }
  }
});

test('fuzz: one byte at a time', () => {
  for (const [name, bytes] of fuzzBodies()) {
    const r = new SseReader();
    const got = [];
    for (let i = 0; i < bytes.length; i++) got.push(...r.push(bytes.subarray(i, i + 1)));
    got.push(...r.end());
    assert.deepEqual(got, parseSse(bytes), name);
  }
});

test('recordings: comments and data events are all found', (t) => {
  const rec = recording('18-kimi-fantasy-openrouter-tool-stream');
  if (!rec?.files['stream.sse']) return t.skip('shared recordings absent (set TOKENSCOPE_SHARED)');
  const events = parseSse(rec.files['stream.sse']);
  assert.equal(events.filter((e) => e.comment).length, 2);
  assert.equal(events.filter((e) => !e.comment).length, 77);
  assert.equal(events.at(-1)?.data, '[DONE]');
});
