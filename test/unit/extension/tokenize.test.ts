import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { analyze } from '../../../src/core/analyze';
import type { DownloadProgress } from '../../../src/core/tokens/hub';
import { ExchangeTokenizer } from '../../../src/extension/tokenize';
import { startHfEmulator, type HfEmulator } from '../../fixtures/hf-emulator';
import { buildWorkerBundle, helloKimiResponse, kimiTokenizerDir } from '../tokens/helpers';

const found = kimiTokenizerDir();

describe('the extension tokenizer: Hub download with a token and a progress notification', { skip: 'skip' in found ? found.skip : false }, () => {
  const dir = 'dir' in found ? found.dir : '';
  const out = mkdtempSync(join(tmpdir(), 'tokenscope-ext-tokenize-'));
  const bundle = join(out, 'tokens-worker.js');
  let hub: HfEmulator;
  let tokenizer: ExchangeTokenizer;
  const savedEndpoint = process.env.HF_ENDPOINT;

  before(async () => {
    await buildWorkerBundle(bundle);
    hub = await startHfEmulator({
      'moonshotai/Kimi-K2-Instruct-0905': {
        files: { 'tiktoken.model': join(dir, 'tiktoken.model'), 'tokenizer_config.json': join(dir, 'tokenizer_config.json') },
        token: 'hf_gated_test_token_0123456789',
      },
    });
    // The worker thread reads the endpoint from its environment, copied when it starts.
    process.env.HF_ENDPOINT = hub.url;
  });
  after(async () => {
    await tokenizer?.dispose();
    await hub?.close();
    if (savedEndpoint === undefined) delete process.env.HF_ENDPOINT;
    else process.env.HF_ENDPOINT = savedEndpoint;
    rmSync(out, { recursive: true, force: true });
  });

  test('downloads once with the secret token, reports progress to one sink, and closes it', async () => {
    const events: DownloadProgress[] = [];
    let sinks = 0;
    let closed = 0;
    tokenizer = new ExchangeTokenizer(bundle, async () => ({
      cacheDir: join(out, 'data'),
      hfToken: 'hf_gated_test_token_0123456789',
      startDownload: () => {
        sinks++;
        return { report: (p) => events.push(p), done: () => closed++ };
      },
    }));
    const response = helloKimiResponse();
    const first = await tokenizer.tokens({ response, analysis: analyze({ response }), summary: { counts: { error: 0, warning: 0, info: 0 }, rules: [] } });
    assert.ok(first.stream, first.reason);
    assert.equal(sinks, 1, 'one notification for the whole download');
    assert.equal(closed, 1, 'the notification is closed when the job ends');
    assert.ok(events.some((e) => e.file === 'tiktoken.model' && e.received > 0));
    assert.ok(hub.requests.some((r) => r.authorization === 'Bearer hf_gated_test_token_0123456789'));

    // Cached now: no second download, no notification.
    const second = await tokenizer.tokens({ response, analysis: analyze({ response }), summary: { counts: { error: 0, warning: 0, info: 0 }, rules: [] } });
    assert.ok(second.stream);
    assert.equal(sinks, 1);
  });
});
