// The store's response read a block at a time (readResponseFrames) holds what readResponse holds: the same bytes,
// chunk by chunk with the same times, for frames that straddle the read blocks, and for a torn last frame.
import assert from 'node:assert/strict';
import { truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { prng } from '../../helpers/prng';
import { tempDir } from '../proxy/local-upstream';

function joined(frames: Iterable<{ bytes: Uint8Array; t: number }>): { bytes: Buffer; times: number[]; lengths: number[] } {
  const parts: Uint8Array[] = [];
  const times: number[] = [];
  for (const f of frames) {
    parts.push(f.bytes);
    times.push(f.t);
  }
  return { bytes: Buffer.concat(parts), times, lengths: parts.map((p) => p.length) };
}

test('readResponseFrames: the bytes and chunk times of readResponse, over frames that straddle the read blocks', async () => {
  const { dir, remove } = tempDir('tokenscope-frames-');
  const store = await openStore(dir, { analyze: false, maxBodyBytes: 16 << 20 });
  try {
    const w = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/openrouter/v1/chat/completions',
      requestHeaders: {},
      requestBody: '{"model":"m"}',
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    const rand = prng(7);
    let t = 0;
    for (let sent = 0; sent < 3.5 * (1 << 20); ) {
      // Mostly small chunks, some larger than a read block.
      const n = rand() < 0.02 ? (1 << 20) + Math.floor(rand() * 4096) : 1 + Math.floor(rand() * 20000);
      w.chunk(Buffer.alloc(n, 97 + (sent % 26)), (t += 1.5));
      sent += n;
    }
    const id = (await w.finish()).id;
    const whole = store.readResponse(id)!;
    const frames = joined(store.readResponseFrames(id)!);
    assert.ok(whole.bytes.length > 3 << 20);
    assert.ok(Buffer.from(whole.bytes).equals(frames.bytes), 'same bytes');
    assert.deepEqual(
      frames.times,
      whole.chunks.map((c) => c.t),
      'same chunk times',
    );
    assert.deepEqual(
      frames.lengths,
      whole.chunks.map((c) => c.length),
      'same chunks',
    );

    // A body file cut inside its last frame (a crash mid-write): both keep what it holds.
    const file = join(dir, 'bodies', `${id}.cap`);
    truncateSync(file, statSync(file).size - 1000);
    const cutWhole = store.readResponse(id)!;
    const cutFrames = joined(store.readResponseFrames(id)!);
    assert.equal(cutFrames.bytes.length, whole.bytes.length - 1000);
    assert.ok(Buffer.from(cutWhole.bytes).equals(cutFrames.bytes));
    assert.equal(store.readResponseFrames('0000nosuchid0000'), undefined);
  } finally {
    await store.close();
    remove();
  }
});
