// A response stage on a WebSocket connection (src/core/proxy/ws-stage.ts): the upstream's frames are read, each text
// message handed to the stage of its response as one SSE event, and what the stage lets out re-framed as unmasked
// server text frames (7-, 16- and 64-bit lengths); fragmented messages joined, control frames and binary messages
// passed in order, messages outside a repaired response passed as they came.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ExchangeWriter } from '../../../src/core/capture/store';
import type { ResponseStage } from '../../../src/core/proxy/stage';
import { WsCapture } from '../../../src/core/proxy/ws-capture';
import { serverFrame } from '../../../src/core/proxy/ws-frames';
import { textFrames, WsServerRestage } from '../../../src/core/proxy/ws-stage';
import { FixtureReader, frame } from '../../fixtures/ws-upstream';

/** A stage that marks every event it sees (so each is re-serialized), holds nothing, and adds one event at the end. */
function marking(log: string[]): ResponseStage {
  return {
    headers: (h) => h,
    push: (chunk) => {
      const text = chunk.toString('utf8');
      log.push(text);
      const data = /^data: (.*)$/m.exec(text)![1];
      const e = JSON.parse(data);
      return Buffer.from(`event: ${e.type}\ndata: ${JSON.stringify({ ...e, staged: true })}\n\n`);
    },
    end: () => (log.push('end'), Buffer.from('event: extra\ndata: {"type":"extra"}\n\n: a comment\n\n')),
    abort: () => void log.push('abort'),
  };
}

function rig(stageFor: (index: number) => ResponseStage | undefined) {
  const bodies: string[] = [];
  let restage: WsServerRestage;
  const capture = new WsCapture({
    begin(index) {
      bodies.push('');
      const at = bodies.length - 1;
      const w: Partial<ExchangeWriter> = {
        chunk: (b) => void (bodies[at] += Buffer.from(b).toString()),
        annotate: () => undefined,
        ended: () => undefined,
        finish: async () => ({}) as never,
      };
      const stage = stageFor(index);
      if (stage) restage.attach(w as ExchangeWriter, stage);
      return w as ExchangeWriter;
    },
    respond: () => undefined,
    finished: () => undefined,
    ending: (w, ended) => restage.ending(w, ended),
  });
  restage = new WsServerRestage(capture, 1 << 20);
  const client = new FixtureReader();
  const frames: Buffer[] = [];
  const read = (bytes: Buffer) => {
    const { out, error } = restage.push(bytes);
    assert.equal(error, undefined);
    frames.push(out);
    return client.push(out);
  };
  return { capture, restage, bodies, read, frames };
}

const create = Buffer.from(JSON.stringify({ type: 'response.create', model: 'm', input: 'x' }));
const ev = (type: string, extra: object = {}) => JSON.stringify({ type, ...extra });

test('text messages go through the stage and out as whole unmasked text frames; fragments joined, a ping in the middle goes first', () => {
  const log: string[] = [];
  const r = rig(() => marking(log));
  r.capture.fromClient({ kind: 'text', data: create });
  const delta = ev('response.output_text.delta', { delta: 'hello' });
  const bytes = Buffer.concat([
    frame(1, ev('response.created')),
    frame(1, delta.slice(0, 7), { fin: false }),
    frame(9, 'keepalive'),
    frame(0, delta.slice(7, 20), { fin: false }),
    frame(0, delta.slice(20)),
    frame(1, ev('response.completed', { response: { status: 'completed' } })),
  ]);
  // In odd pieces, as TCP delivers them.
  const got = [];
  for (let at = 0; at < bytes.length; at += 5) got.push(...r.read(bytes.subarray(at, at + 5)));
  assert.deepEqual(
    got.map((m) => [m.opcode, m.opcode === 1 ? JSON.parse(m.data.toString()).type : m.data.toString()]),
    [
      [1, 'response.created'],
      [9, 'keepalive'],
      [1, 'response.output_text.delta'],
      [1, 'response.completed'],
      [1, 'extra'],
    ],
  );
  assert.equal(JSON.parse(got[2].data.toString()).delta, 'hello', 'the fragments joined');
  assert.ok(
    got.filter((m) => m.opcode === 1 && JSON.parse(m.data.toString()).type !== 'extra').every((m) => JSON.parse(m.data.toString()).staged),
    'every event went through the stage',
  );
  // The stage saw each message as the SSE event the capture stores.
  assert.equal(log[1], `event: response.output_text.delta\ndata: ${delta}\n\n`);
  assert.equal(log.at(-1), 'end', 'the stage ended at the terminal event');
  // Every frame is FIN, unmasked, no RSV bits.
  const all = Buffer.concat(r.frames);
  for (let at = 0; at < all.length; ) {
    assert.equal(all[at] & 0xf0, 0x80, 'FIN set, RSV clear');
    assert.equal(all[at + 1] & 0x80, 0, 'unmasked');
    const len = all[at + 1] & 0x7f;
    const [ext, n] = len === 126 ? [2, all.readUInt16BE(at + 2)] : len === 127 ? [8, Number(all.readBigUInt64BE(at + 2))] : [0, len];
    at += 2 + ext + n;
  }
  // The capture keeps the upstream's events, not the delivered ones.
  assert.ok(r.bodies[0].includes(`data: ${delta}\n`) && !r.bodies[0].includes('staged'));
});

test('large messages are re-framed with 16- and 64-bit lengths', () => {
  const r = rig(() => marking([]));
  r.capture.fromClient({ kind: 'text', data: create });
  const mid = ev('response.output_text.delta', { delta: 'm'.repeat(1000) });
  const big = ev('response.output_text.delta', { delta: 'z'.repeat(100_000) });
  const got = r.read(Buffer.concat([frame(1, mid), frame(1, big.slice(0, 60_000), { fin: false }), frame(0, big.slice(60_000))]));
  assert.equal(got.length, 2);
  assert.equal(JSON.parse(got[0].data.toString()).delta.length, 1000);
  assert.equal(JSON.parse(got[1].data.toString()).delta.length, 100_000);
  const out = Buffer.concat(r.frames);
  assert.equal(out[1], 126, 'a 16-bit length');
  const second = 4 + out.readUInt16BE(2);
  assert.equal(out[second + 1], 127, 'a 64-bit length');
  assert.equal(Number(out.readBigUInt64BE(second + 2)), got[1].data.length);
});

test('the close, pongs and binary messages pass as they came; a cut response only records (abort), no rest is sent', () => {
  const log: string[] = [];
  const r = rig(() => marking(log));
  r.capture.fromClient({ kind: 'text', data: create });
  const got = r.read(
    Buffer.concat([
      frame(1, ev('response.created')),
      frame(10, 'pong'),
      frame(2, Buffer.from([0, 1, 2])),
      frame(8, Buffer.from([0x03, 0xe8, 0x62, 0x79, 0x65])),
    ]),
  );
  assert.deepEqual(
    got.map((m) => m.opcode),
    [1, 10, 2, 8],
  );
  assert.deepEqual([...got[2].data], [0, 1, 2]);
  assert.deepEqual([...got[3].data], [0x03, 0xe8, 0x62, 0x79, 0x65]);
  r.capture.closed('the upstream closed the connection before the response ended');
  assert.equal(log.at(-1), 'abort');
});

test('messages of a response no stage acts on, and outside any response, go out byte for byte', () => {
  const r = rig(() => undefined);
  const upstream = Buffer.concat([frame(1, ev('session.updated')), frame(9, '')]);
  r.read(upstream);
  r.capture.fromClient({ kind: 'text', data: create });
  const events = Buffer.concat([
    frame(1, ev('response.created')),
    frame(1, 'x'.repeat(300)),
    frame(1, ev('response.completed', { response: {} })),
  ]);
  r.read(events);
  assert.ok(Buffer.concat(r.frames).equals(Buffer.concat([upstream, events])));
});

test('an event the stage lets through unchanged goes out with the upstream text; SSE output becomes one frame per data event', () => {
  const passing: ResponseStage = { headers: (h) => h, push: (c) => c, end: () => Buffer.alloc(0) };
  const r = rig(() => passing);
  r.capture.fromClient({ kind: 'text', data: create });
  const raw = '{ "type" : "response.created" }';
  r.read(frame(1, raw));
  assert.ok(Buffer.concat(r.frames).equals(serverFrame('text', Buffer.from(raw))));
  const multi = textFrames(Buffer.from('event: a\ndata: {"a":\ndata: 1}\n\n: note\n\r\ndata: {"b":2}\r\n\r\n'));
  assert.deepEqual(
    multi.map((f) => f.subarray(2).toString()),
    ['{"a":\n1}', '{"b":2}'],
  );
});
