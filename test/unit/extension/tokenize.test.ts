import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { analyze } from '../../../src/core/analyze';
import type { ParsedResponse } from '../../../src/core/model';
import type { DownloadProgress } from '../../../src/core/tokens/hub';
import { ExchangeTokenizer, type TokenizeOptions } from '../../../src/extension/tokenize';
import { startHfEmulator, type HfEmulator } from '../../fixtures/hf-emulator';
import { repoRoot } from '../../helpers/shared';
import { buildWorkerBundle, helloKimiResponse, lenmlDir } from '../tokens/helpers';

const SUMMARY = { counts: { error: 0, warning: 0, info: 0 }, rules: [] };
const qwen = lenmlDir('qwen3');
const QWEN_REPO = 'Qwen/Qwen3-Coder-480B-A35B-Instruct';
const TOKEN = 'hf_gated_test_token_0123456789';

function qwenResponse(): ParsedResponse {
  return { ...helloKimiResponse(), model: 'qwen/qwen3-coder', message: { content: 'Hello world', toolCalls: [] } };
}

const exchange = (response: ParsedResponse) => ({ response, analysis: analyze({ response }), summary: SUMMARY });

describe('the extension tokenizer: shipped Kimi offline, other models only on request', {
  skip: 'skip' in qwen ? qwen.skip : false,
}, () => {
  const out = mkdtempSync(join(tmpdir(), 'tokenscope-ext-tokenize-'));
  const bundle = join(out, 'tokens-worker.js');
  let hub: HfEmulator;
  let closedHub: string;
  const tokenizers: ExchangeTokenizer[] = [];
  const savedEndpoint = process.env.HF_ENDPOINT;

  /** A tokenizer as the extension makes it: the shipped folder passed in (the worker bundle lives elsewhere here). */
  function extensionTokenizer(o: Partial<TokenizeOptions> = {}): ExchangeTokenizer {
    const t = new ExchangeTokenizer(bundle, async () => ({ bundledDir: join(repoRoot, 'tokenizers'), ...o }));
    tokenizers.push(t);
    return t;
  }

  before(async () => {
    await buildWorkerBundle(bundle);
    const dir = (qwen as { dir: string }).dir;
    hub = await startHfEmulator({
      [QWEN_REPO]: {
        files: { 'tokenizer.json': join(dir, 'tokenizer.json'), 'tokenizer_config.json': join(dir, 'tokenizer_config.json') },
        token: TOKEN,
      },
    });
    closedHub = await new Promise<string>((ok) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(`http://127.0.0.1:${p}`));
      });
    });
  });
  after(async () => {
    for (const t of tokenizers) await t.dispose();
    await hub?.close();
    if (savedEndpoint === undefined) delete process.env.HF_ENDPOINT;
    else process.env.HF_ENDPOINT = savedEndpoint;
    rmSync(out, { recursive: true, force: true });
  });

  test('Kimi K2: tokens from the shipped tokenizer with an empty data dir, no folder setting and the Hub unreachable', async () => {
    // The worker thread reads the endpoint from its environment, copied when it starts.
    process.env.HF_ENDPOINT = closedHub;
    const sinks: number[] = [];
    const tokenizer = extensionTokenizer({
      cacheDir: join(out, 'kimi-data'),
      startDownload: () => (sinks.push(1), { report: () => undefined, done: () => undefined }),
    });
    const r = await tokenizer.tokens(exchange(helloKimiResponse()));
    assert.ok(r.stream, r.reason);
    assert.equal(r.needed, undefined);
    assert.equal(r.stream.tokenizer, 'moonshotai/Kimi-K2-Instruct-0905 (tiktoken)');
    assert.deepEqual(r.stream.ids.slice(0, 3), [19180, 220, 2243], 'Hello 世界');
    assert.equal(sinks.length, 0, 'no download');
    assert.ok(!existsSync(join(out, 'kimi-data', 'tokenizers', 'moonshotai')), 'nothing downloaded');
  });

  test('another model: `needed` without touching the Hub; the download on request, with the secret token and progress', async () => {
    process.env.HF_ENDPOINT = hub.url;
    const sinkEvents: DownloadProgress[] = [];
    let sinks = 0;
    let closed = 0;
    const cacheDir = join(out, 'data');
    const tokenizer = extensionTokenizer({
      cacheDir,
      hfToken: TOKEN,
      startDownload: () => {
        sinks++;
        return { report: (p) => sinkEvents.push(p), done: () => closed++ };
      },
    });
    const x = exchange(qwenResponse());

    const first = await tokenizer.tokens(x);
    assert.equal(first.stream, undefined);
    assert.deepEqual(first.needed, { repo: QWEN_REPO, dir: join(cacheDir, 'tokenizers', 'Qwen', 'Qwen3-Coder-480B-A35B-Instruct') });
    assert.match(first.reason ?? '', /^No tokenizer for Qwen\/Qwen3-Coder-480B-A35B-Instruct on this machine yet/);
    assert.equal(hub.requests.length, 0, 'opening the exchange asks the Hub nothing');
    assert.equal(sinks, 0);

    const progress: DownloadProgress[] = [];
    const downloaded = await tokenizer.tokens(x, { download: true, onProgress: (p) => progress.push(p) });
    assert.ok(downloaded.stream, downloaded.reason);
    assert.match(downloaded.stream.tokenizer, /Qwen3-Coder-480B-A35B-Instruct \(tokenizer\.json\)/);
    assert.ok(
      progress.some((p) => p.file === 'tokenizer.json' && p.received > 0 && p.received === p.total),
      'progress to the view up to the last byte',
    );
    assert.equal(sinks, 1, 'one notification for the whole download');
    assert.equal(closed, 1, 'the notification is closed when the job ends');
    assert.ok(sinkEvents.length > 0);
    assert.ok(hub.requests.some((r) => r.authorization === `Bearer ${TOKEN}`));

    // Cached now: no second download, no notification.
    const before = hub.requests.length;
    const again = await tokenizer.tokens(x);
    assert.ok(again.stream);
    assert.equal(hub.requests.length, before);
    assert.equal(sinks, 1);
  });

  test('a download that fails says why in one line, and the model still needs its tokenizer', async () => {
    process.env.HF_ENDPOINT = closedHub;
    const tokenizer = extensionTokenizer({ cacheDir: join(out, 'data-offline') });
    const r = await tokenizer.tokens(exchange(qwenResponse()), { download: true });
    assert.equal(r.stream, undefined);
    assert.match(r.reason ?? '', /^No tokenizer: cannot reach the Hugging Face Hub at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    assert.ok(!(r.reason ?? '').includes('\n'));
  });
});
