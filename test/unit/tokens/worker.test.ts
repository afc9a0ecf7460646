import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { UserError } from '../../../src/core/model';
import { shippedTokenWorker, helloKimiResponse, kimiTokenizerDir } from './helpers';
import { loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { normalizeRequest } from '../../../src/core/wire/index';
import { tokenStreamView } from '../../../src/extension/exchangeView';
import { kimiDirWithTemplate, kimiLayoutPrompt } from '../../fixtures/kimi-template';
import { processCpuMs } from '../../helpers/timing';

const found = kimiTokenizerDir();

describe('token worker thread', { skip: 'skip' in found ? found.skip : false }, () => {
  const dir = 'dir' in found ? found.dir : '';
  const { worker, tmp: out } = shippedTokenWorker('tokenscope-worker-');

  test('builds the token stream off the main thread, reusing the loaded tokenizer', async (t) => {
    const response = helloKimiResponse({ usage: { completionTokens: 4 } });
    // CPU time of the whole process (the worker thread does the work while this one waits), not wall time: on a
    // loaded machine the wall clock also counts other processes' turns, while loading the tokenizer again would
    // cost its hundreds of ms of CPU wherever it runs.
    const c0 = processCpuMs();
    const { stream, analysis } = await worker.tokenStream({ tokenizerDir: dir }, { response });
    const firstCpu = processCpuMs() - c0;
    assert.equal(analysis.family, 'kimi-k2');
    assert.equal(stream.source, 'reconstructed');
    assert.deepEqual(
      stream.tokens.map((t) => t.id),
      [19180, 220, 2243, 163586],
    );
    assert.equal(stream.accounting.delta, 0);
    const c1 = processCpuMs();
    const again = await worker.tokenStream({ tokenizerDir: dir }, { nativeText: 'Hello' });
    const secondCpu = processCpuMs() - c1;
    assert.deepEqual(
      again.stream.tokens.map((t) => t.id),
      [19180],
    );
    t.diagnostic(`first job (worker start, tokenizer load) ${firstCpu.toFixed(0)} ms of CPU, second job ${secondCpu.toFixed(1)} ms`);
    assert.ok(
      secondCpu < 150,
      `second job reuses the tokenizer (${secondCpu.toFixed(1)} ms of CPU; the first, which loaded it, ${firstCpu.toFixed(0)} ms)`,
    );
  });

  test('the token view’s prompt line: a request is rendered with the model’s template in the worker and counted against the bill', async () => {
    const withTemplate = kimiDirWithTemplate(dir, join(out, 'kimi-template'));
    const request = normalizeRequest({ model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: 'Hello' }] });
    const expected = loadKimiTokenizer({ dir: withTemplate }).encode(kimiLayoutPrompt('Hello')).length;
    const row = async (tokenizerDir: string, promptTokens: number) => {
      const response = helloKimiResponse({ usage: { promptTokens, completionTokens: 4 } });
      const { stream } = await worker.tokenStream({ tokenizerDir }, { response, request });
      return tokenStreamView(stream).accounting.find((a) => a.label === 'Prompt')?.value;
    };
    assert.equal(await row(withTemplate, expected), `${expected} tokens in the model's chat template, ${expected} billed (0)`);
    // A provider that added a system line of its own: billed 20 more than the model's template renders.
    assert.equal(
      await row(withTemplate, expected + 20),
      `${expected} tokens in the model's chat template, ${expected + 20} billed (+20). MISMATCH: see the prompt-token-mismatch finding`,
    );
    assert.match((await row(dir, expected))!, /^not rendered: no chat template in /);
  });

  test('a failing job rejects with a UserError and the worker keeps serving', async () => {
    await assert.rejects(worker.tokenStream({ tokenizerDir: '/nonexistent/tokenscope' }, { nativeText: 'x' }), UserError);
    const ok = await worker.tokenStream({ tokenizerDir: dir }, { nativeText: 'You' });
    assert.deepEqual(
      ok.stream.tokens.map((t) => t.id),
      [3900],
    );
  });
});
