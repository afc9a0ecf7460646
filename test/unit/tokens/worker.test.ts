import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { UserError } from '../../../src/core/model';
import { TokenWorker } from '../../../src/core/tokens/client';
import { buildWorkerBundle, helloKimiResponse, kimiTokenizerDir } from './helpers';

const found = kimiTokenizerDir();

describe('token worker thread', { skip: 'skip' in found ? found.skip : false }, () => {
  const dir = 'dir' in found ? found.dir : '';
  // The worker runs as shipped: bundled by esbuild the way scripts/build.mjs bundles dist/tokens-worker.js.
  const out = mkdtempSync(join(tmpdir(), 'tokenscope-worker-'));
  const bundle = join(out, 'tokens-worker.js');
  const worker = new TokenWorker(bundle);
  before(() => buildWorkerBundle(bundle));
  after(async () => {
    await worker.dispose();
    rmSync(out, { recursive: true, force: true });
  });

  test('builds the token stream off the main thread, reusing the loaded tokenizer', async () => {
    const response = helloKimiResponse({ usage: { completionTokens: 4 } });
    const { stream, analysis } = await worker.tokenStream({ tokenizerDir: dir }, { response });
    assert.equal(analysis.family, 'kimi-k2');
    assert.equal(stream.source, 'reconstructed');
    assert.deepEqual(stream.tokens.map((t) => t.id), [19180, 220, 2243, 163586]);
    assert.equal(stream.accounting.delta, 0);
    const t0 = performance.now();
    const again = await worker.tokenStream({ tokenizerDir: dir }, { nativeText: 'Hello' });
    assert.deepEqual(again.stream.tokens.map((t) => t.id), [19180]);
    assert.ok(performance.now() - t0 < 150, 'second job reuses the tokenizer');
  });

  test('a failing job rejects with a UserError and the worker keeps serving', async () => {
    await assert.rejects(worker.tokenStream({ tokenizerDir: '/nonexistent/tokenscope' }, { nativeText: 'x' }), UserError);
    const ok = await worker.tokenStream({ tokenizerDir: dir }, { nativeText: 'You' });
    assert.deepEqual(ok.stream.tokens.map((t) => t.id), [3900]);
  });
});
