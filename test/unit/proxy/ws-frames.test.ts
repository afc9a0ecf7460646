// The capture's WebSocket frame reader (src/core/proxy/ws-frames.ts), against frames built by the test fixture's own
// writer: every length encoding, masks, fragments with control frames between them, any split of the bytes, a
// compressed message, a message over the cap, and what no peer may send.
import assert from 'node:assert/strict';
import { constants, deflateRawSync } from 'node:zlib';
import { test } from 'node:test';
import { WsFrameReader, closeText, type WsMessage } from '../../../src/core/proxy/ws-frames';
import { frame } from '../../fixtures/ws-upstream';

const MASK = Buffer.from([0x12, 0x34, 0x56, 0x78]);

function readAll(bytes: Buffer, pieces: number[] = [bytes.length], max?: number): (WsMessage | { error: string })[] {
  const r = new WsFrameReader(max);
  const out: (WsMessage | { error: string })[] = [];
  let at = 0;
  for (const n of pieces) out.push(...r.push(bytes.subarray(at, (at += n))));
  if (at < bytes.length) out.push(...r.push(bytes.subarray(at)));
  return out;
}

const texts = (ms: (WsMessage | { error: string })[]) =>
  ms.map((m) => ('error' in m ? `error:${m.error}` : `${m.kind}:${m.data.toString('utf8')}`));

test('7-bit, 16-bit and 64-bit lengths, masked and not, come back whole', () => {
  for (const size of [0, 1, 125, 126, 65535, 65536, 200_000]) {
    const payload = 'x'.repeat(size);
    for (const mask of [undefined, MASK]) {
      const [m] = readAll(frame(1, payload, { mask }));
      assert.ok(m && !('error' in m), `size ${size}`);
      assert.equal(m.kind, 'text');
      assert.equal(m.data.length, size);
      assert.equal(m.data.toString(), payload, `size ${size} ${mask ? 'masked' : 'plain'}`);
    }
  }
});

test('fragments are joined, control frames between them come in order, whatever the split of the bytes', () => {
  const bytes = Buffer.concat([
    frame(1, 'hel', { fin: false, mask: MASK }),
    frame(9, 'p1', { mask: MASK }),
    frame(0, 'lo ', { fin: false, mask: MASK }),
    frame(0, 'world', { mask: MASK }),
    frame(2, Buffer.from([1, 2, 3])),
    frame(10, ''),
    frame(8, Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')])),
  ]);
  const want = ['ping:p1', 'text:hello world', 'binary:\u0001\u0002\u0003', 'pong:', 'close:\u0003\ufffdbye'];
  assert.deepEqual(texts(readAll(bytes)), want);
  for (let cut = 1; cut < bytes.length; cut++) assert.deepEqual(texts(readAll(bytes, [cut])), want, `split at ${cut}`);
  assert.deepEqual(
    texts(
      readAll(
        bytes,
        Array.from({ length: bytes.length }, () => 1),
      ),
    ),
    want,
    'one byte at a time',
  );
  const close = readAll(bytes).at(-1) as WsMessage;
  assert.equal(closeText(close.data), '1000 bye');
});

test('a compressed message (permessage-deflate, no context takeover) is inflated; one that needs context is kept as it came', () => {
  const text = JSON.stringify({ type: 'response.output_text.delta', delta: 'abc'.repeat(100) });
  // As a sender compresses a message (RFC 7692 §7.2.1): flushed, not finished, and the flush's 00 00 ff ff removed.
  const flushed = deflateRawSync(Buffer.from(text), { finishFlush: constants.Z_SYNC_FLUSH });
  assert.deepEqual([...flushed.subarray(-4)], [0, 0, 0xff, 0xff]);
  const deflated = flushed.subarray(0, -4);
  const [m] = readAll(frame(1, deflated, { rsv1: true })) as WsMessage[];
  assert.equal(m.data.toString(), text);
  assert.equal(m.compressed, undefined);
  const [bad] = readAll(frame(1, Buffer.from([0xff, 0xfe, 0xfd]), { rsv1: true })) as WsMessage[];
  assert.equal(bad.compressed, true);
  assert.deepEqual([...bad.data], [0xff, 0xfe, 0xfd]);
});

test('a message over the cap keeps its start and says how long it was', () => {
  const [m] = readAll(frame(1, 'y'.repeat(5000), { mask: MASK }), [100, 1000], 1024) as WsMessage[];
  assert.equal(m.data.length, 1024);
  assert.equal(m.cutFrom, 5000);
  assert.equal(m.data.toString(), 'y'.repeat(1024));
});

test('frames no peer may send stop the reading with a reason (reserved opcode, stray continuation, long control frame)', () => {
  assert.match(texts(readAll(Buffer.concat([frame(1, 'a'), frame(3, 'b'), frame(1, 'c')])))[1], /^error:.*reserved opcode 3/);
  assert.match(texts(readAll(frame(0, 'b')))[0], /^error:.*continuation/);
  assert.match(texts(readAll(frame(9, 'p'.repeat(126))))[0], /^error:.*over 125 bytes/);
  assert.match(texts(readAll(Buffer.concat([frame(1, 'a', { fin: false }), frame(1, 'b')])))[0], /^error:.*before the previous one ended/);
  // After an error nothing more is read (the bytes still pass through the proxy untouched).
  const r = new WsFrameReader();
  r.push(frame(3, 'x'));
  assert.deepEqual(r.push(frame(1, 'fine')), []);
});
