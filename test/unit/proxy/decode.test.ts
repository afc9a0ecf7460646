import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { decodingTee } from '../../../src/core/proxy/decode';

/** Feeds `chunks` through a tee and collects what reaches the capture. */
async function through(encoding: string, chunks: Buffer[], limits?: Parameters<typeof decodingTee>[2]) {
  const got: Buffer[] = [];
  const tee = decodingTee(encoding, (b) => got.push(Buffer.from(b)), limits);
  for (const c of chunks) tee.write(c);
  const result = await tee.end();
  return { bytes: Buffer.concat(got), ...result };
}

test('a real gzip body is decoded, in pieces, with nothing to say', async () => {
  const text = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'.repeat(500);
  const gz = gzipSync(text);
  const r = await through('gzip', [gz.subarray(0, 10), gz.subarray(10, 300), gz.subarray(300)]);
  assert.equal(r.bytes.toString(), text);
  assert.equal(r.error, undefined);
  assert.equal(r.notAnalysed, undefined);
});

test('a body labelled gzip that is not gzip is kept as received, and the error says the label is wrong', async () => {
  const plain = Buffer.from('data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n');
  const r = await through('gzip', [plain.subarray(0, 20), plain.subarray(20)]);
  assert.equal(r.bytes.toString(), plain.toString(), 'every byte, in order');
  assert.match(
    r.error!,
    /^the response is labelled Content-Encoding: gzip but is not gzip \(.+\); the capture keeps its 62 bytes as received$/,
  );
});

test('a body that breaks after decoding started keeps what decoded and says where', async () => {
  const gz = gzipSync(Buffer.alloc(200_000, 'a'));
  const broken = Buffer.concat([gz.subarray(0, gz.length - 8), Buffer.from('garbage!garbage!')]);
  const r = await through('gzip', [broken]);
  assert.ok(r.bytes.length > 0);
  assert.match(r.error!, /could not decode the gzip response for the capture after \d+ decoded bytes/);
});

test('a decompression bomb stops being decoded at the cap or past the ratio, and is not analysed', async () => {
  // 64 gzip members of 1 MiB of zeros each: 64 MiB from about 64 KB (a multi-member gzip decodes as one body).
  const member = gzipSync(Buffer.alloc(1024 * 1024));
  const bomb = Buffer.concat(Array.from({ length: 64 }, () => member));
  const capped = await through('gzip', [bomb], { maxBytes: 4 * 1024 * 1024, maxRatio: 1e9 });
  assert.equal(capped.bytes.length, 4 * 1024 * 1024, 'exactly the cap is kept');
  assert.match(capped.notAnalysed!, /^not analysed: decompressed body over 4 MB \(the capture keeps at most 4 MB\)/);
  assert.equal(capped.error, undefined);
  const ratio = await through('gzip', [bomb], { maxBytes: 1024 * 1024 * 1024, maxRatio: 100, ratioAfterBytes: 1024 * 1024 });
  assert.ok(ratio.bytes.length < 8 * 1024 * 1024, `${ratio.bytes.length} bytes decoded before the ratio stopped it`);
  assert.match(ratio.notAnalysed!, /^not analysed: decompressed body over [\d.]+ MB \(it inflates over 100×/);
});
