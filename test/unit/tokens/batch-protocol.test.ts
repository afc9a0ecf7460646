import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chunkLines, LineBytes } from '../../../src/core/tokens/batch/protocol';

const chunk = (text: string | Uint8Array) => ({
  seq: 0,
  firstLine: 1,
  bytes: typeof text === 'string' ? new TextEncoder().encode(text) : text,
});

test('batch chunk lines: LF and CRLF ends, blank lines, no final newline, multi-byte and broken UTF-8 as a whole-chunk decode gives', () => {
  const text = 'a\r\n世界\n\n  \r\n{"x":"é"}\nlast';
  assert.deepEqual([...chunkLines(chunk(text))], ['a', '世界', '', '  ', '{"x":"é"}', 'last']);
  assert.deepEqual([...chunkLines(chunk('one\n'))], ['one']);
  assert.deepEqual([...chunkLines(chunk(''))], []);
  // A cut multi-byte sequence before a line end: replaced the same way as when the chunk is decoded at once.
  const broken = new Uint8Array([0x61, 0xe4, 0xb8, 0x0a, 0xe4, 0x0d, 0x0a, 0x62]);
  const whole = Buffer.from(broken)
    .toString('utf8')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''));
  assert.deepEqual([...chunkLines(chunk(broken))], whole);
});

test('batch output bytes: lines end in \\n, grow past the first buffer, encode as UTF-8, and own their buffer', () => {
  const b = new LineBytes();
  assert.equal(b.bytes().byteLength, 0);
  const lines = Array.from({ length: 300 }, (_, i) => `{"line":${i},"text":"${'x世'.repeat(i * 3)}"}`);
  for (const l of lines) b.add(l);
  const bytes = b.bytes();
  assert.equal(Buffer.from(bytes).toString('utf8'), lines.join('\n') + '\n');
  assert.ok(bytes.byteLength > 64 * 1024, 'more than the first buffer holds');
  assert.equal(bytes.byteOffset, 0);
  // Transferable: the buffer is not Buffer's shared pool.
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
  assert.equal(bytes.byteLength, 0, 'moved');
  port1.close();
  port2.close();
});
