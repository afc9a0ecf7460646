import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchProgress } from '../../../../src/cli/commands/tokens-batch';

test('tokens --batch progress: "loading the tokenizer" until the first line is done, then lines, rate, percent read', async () => {
  const shown: (string | undefined)[] = [];
  const p = batchProgress({ out: () => undefined, err: () => undefined, progress: (l) => shown.push(l) });
  p.update({ lines: 0, bytesRead: 4096, totalBytes: 1 << 20, elapsedMs: 900 });
  assert.deepEqual(shown, ['starting: the workers are loading the tokenizer…']);
  await new Promise((r) => setTimeout(r, 260)); // redrawn at most every 250 ms
  p.update({ lines: 500, bytesRead: 1 << 19, totalBytes: 1 << 20, elapsedMs: 2000 });
  assert.match(shown.at(-1) ?? '', /^500 lines, 250\/s, 50% read, ETA 2s$/);
  p.clear();
  assert.equal(shown.at(-1), undefined);
});

test('tokens --batch progress from a pipe (no size): lines and rate, no share read, no ETA', async () => {
  const shown: (string | undefined)[] = [];
  const p = batchProgress({ out: () => undefined, err: () => undefined, progress: (l) => shown.push(l) });
  p.update({ lines: 300, bytesRead: 1 << 19, totalBytes: 0, elapsedMs: 2000 });
  assert.deepEqual(shown, ['300 lines, 150/s']);
});
