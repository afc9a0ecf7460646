import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { UserError } from '../../../src/core/model';
import type { DownloadProgress } from '../../../src/core/tokens/hub';
import { bundledTokenizerDir, TokenizerMissingError } from '../../../src/core/tokens/local';
import { loadTokenizer, localTokenizerDir, TokenizerPool, tokenizerRepo } from '../../../src/core/tokens/resolve';
import { repoRoot } from '../../helpers/shared';
import { startHfEmulator, type HfEmulator } from '../../fixtures/hf-emulator';
import { kimiTokenizerDir, lenmlDir } from './helpers';

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-resolve-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(tmp, `data-${n++}`);

/** A loopback port nothing listens on: a Hub there is unreachable (connection refused). */
function closedPort(): Promise<number> {
  return new Promise<number>((ok) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });
}

async function rejectsUser(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof UserError, `a UserError, got ${e}`);
    assert.match(e.message, re);
    assert.ok(!e.message.includes('\n'), 'one line');
    return true;
  });
}

describe('model id → tokenizer repo', () => {
  test('known ids map to the repo holding their tokenizer; others fall back to the id', () => {
    const cases: [string, string][] = [
      ['moonshotai/kimi-k2-0905', 'moonshotai/Kimi-K2-Instruct-0905'],
      ['moonshotai/kimi-k2', 'moonshotai/Kimi-K2-Instruct'],
      ['moonshotai/kimi-k2:free', 'moonshotai/Kimi-K2-Instruct'],
      ['moonshotai/kimi-k2-thinking', 'moonshotai/Kimi-K2-Thinking'],
      ['moonshotai/kimi-k2.5', 'moonshotai/Kimi-K2.5'],
      ['deepseek/deepseek-chat-v3.1', 'deepseek-ai/DeepSeek-V3.1'],
      ['deepseek/deepseek-chat', 'deepseek-ai/DeepSeek-V3'],
      ['deepseek/deepseek-chat-v3-0324', 'deepseek-ai/DeepSeek-V3-0324'],
      ['qwen/qwen3-coder', 'Qwen/Qwen3-Coder-480B-A35B-Instruct'],
      ['qwen/qwen3-235b-a22b-2507', 'Qwen/Qwen3-235B-A22B-Instruct-2507'],
      ['z-ai/glm-4.6', 'zai-org/GLM-4.6'],
      ['z-ai/glm-4.5-air', 'zai-org/GLM-4.5-Air'],
      ['openai/gpt-oss-20b', 'openai/gpt-oss-20b'],
      ['openai/gpt-oss-120b:exacto', 'openai/gpt-oss-120b'],
      ['minimax/minimax-m2', 'MiniMaxAI/MiniMax-M2'],
      ['someone/Some-Model-7B', 'someone/Some-Model-7B'],
      // OpenRouter ids whose own name is no Hub repo.
      ['z-ai/glm-5-turbo', 'zai-org/GLM-5'],
      ['z-ai/glm-5-turbo-20260315', 'zai-org/GLM-5'],
      ['z-ai/glm-5', 'zai-org/GLM-5'],
      ['z-ai/glm-5.1', 'zai-org/GLM-5.1'],
      ['z-ai/glm-4.7', 'zai-org/GLM-4.7'],
      ['z-ai/glm-4.6v', 'zai-org/GLM-4.6V'],
      ['z-ai/glm-4.5v', 'zai-org/GLM-4.5V'],
      ['z-ai/glm-4.5-air:free', 'zai-org/GLM-4.5-Air'],
      ['z-ai/glm-4.5', 'zai-org/GLM-4.5'],
      ['z-ai/glm-4-32b', 'zai-org/GLM-4-32B-0414'],
      ['deepseek/deepseek-r1-distill-llama-70b', 'deepseek-ai/DeepSeek-R1-Distill-Llama-70B'],
      ['deepseek/deepseek-r1-distill-qwen-32b', 'deepseek-ai/DeepSeek-R1-Distill-Qwen-32B'],
      ['deepseek/deepseek-r1-0528-qwen3-8b', 'deepseek-ai/DeepSeek-R1-0528-Qwen3-8B'],
      ['deepseek/deepseek-r1-0528', 'deepseek-ai/DeepSeek-R1-0528'],
      ['deepseek/deepseek-v3.1-terminus:exacto', 'deepseek-ai/DeepSeek-V3.1-Terminus'],
      ['deepseek/deepseek-v3.2-exp', 'deepseek-ai/DeepSeek-V3.2-Exp'],
      ['qwen/qwen-2.5-72b-instruct', 'Qwen/Qwen2.5-72B-Instruct'],
      ['qwen/qwen-2.5-coder-32b-instruct', 'Qwen/Qwen2.5-Coder-32B-Instruct'],
      ['qwen/qwq-32b', 'Qwen/QwQ-32B'],
      ['qwen/qwen3-coder-30b-a3b-instruct', 'Qwen/Qwen3-Coder-30B-A3B-Instruct'],
      ['qwen/qwen3-next-80b-a3b-instruct', 'Qwen/Qwen3-235B-A22B-Instruct-2507'],
      ['openai/gpt-oss-safeguard-20b', 'openai/gpt-oss-120b'],
      ['minimax/minimax-m2.1', 'MiniMaxAI/MiniMax-M2.1'],
      ['minimax/minimax-m1', 'MiniMaxAI/MiniMax-M1-80k'],
      ['minimax/minimax-01', 'MiniMaxAI/MiniMax-Text-01'],
      ['moonshotai/kimi-dev-72b', 'moonshotai/Kimi-Dev-72B'],
    ];
    for (const [id, repo] of cases) assert.equal(tokenizerRepo(id), repo, id);
  });
});

describe('local tokenizer folders', () => {
  test('a tiktoken folder loads as Kimi, a tokenizer.json folder through @huggingface/tokenizers', async (t) => {
    const kimi = kimiTokenizerDir();
    const qwen = lenmlDir('qwen3');
    if ('skip' in kimi) return t.skip(kimi.skip);
    if ('skip' in qwen) return t.skip(qwen.skip);
    const k = await loadTokenizer({ tokenizerDir: kimi.dir, cacheDir: freshDir() });
    assert.deepEqual(k.encode('<|im_end|>'), [163586]);
    assert.match(k.name, /tiktoken/);
    const q = await loadTokenizer({ tokenizerDir: qwen.dir });
    assert.deepEqual(q.encode('<|im_end|>'), [151645]);
  });

  test('a folder without tokenizer files is a UserError', async () => {
    await rejectsUser(loadTokenizer({ tokenizerDir: tmp }), /neither tiktoken\.model nor tokenizer\.json/);
    await rejectsUser(loadTokenizer({ tokenizerDir: join(tmp, 'missing') }), /does not exist/);
  });
});

describe('Hugging Face Hub downloads (local emulator)', () => {
  const kimi = kimiTokenizerDir();
  const qwen = lenmlDir('qwen3');
  let hub: HfEmulator;
  before(async () => {
    hub = await startHfEmulator({
      ...('dir' in kimi
        ? {
            'moonshotai/Kimi-K2-Instruct-0905': {
              files: {
                'tiktoken.model': join(kimi.dir, 'tiktoken.model'),
                'tokenizer_config.json': join(kimi.dir, 'tokenizer_config.json'),
              },
            },
          }
        : {}),
      ...('dir' in qwen
        ? {
            'Qwen/Qwen3-Coder-480B-A35B-Instruct': {
              files: {
                'tokenizer.json': join(qwen.dir, 'tokenizer.json'),
                'tokenizer_config.json': join(qwen.dir, 'tokenizer_config.json'),
              },
              token: 'hf_test_token',
            },
          }
        : {}),
    });
  });
  after(() => hub.close());

  test('Kimi: downloads tiktoken.model (through the CDN redirect) once, with progress, then loads from the cache', async (t) => {
    if ('skip' in kimi) return t.skip(kimi.skip);
    const cacheDir = freshDir();
    const progress: DownloadProgress[] = [];
    const before = hub.requests.length;
    // Without the shipped copy, as a Kimi repo Tokenscope does not ship would be fetched.
    const tok = await loadTokenizer({
      model: 'moonshotai/kimi-k2-0905',
      cacheDir,
      bundledDir: false,
      hub: { endpoint: hub.url, onProgress: (p) => progress.push(p) },
    });
    assert.deepEqual(tok.encode('Hello 世界'), [19180, 220, 2243]);
    const fetched = hub.requests.slice(before).map((r) => r.path);
    assert.ok(fetched.includes('/moonshotai/Kimi-K2-Instruct-0905/resolve/main/tiktoken.model'));
    assert.ok(fetched.includes('/cdn/moonshotai/Kimi-K2-Instruct-0905/tiktoken.model'), 'followed the redirect');
    const last = progress.filter((p) => p.file === 'tiktoken.model').at(-1)!;
    assert.equal(last.received, 2_795_286);
    assert.equal(last.total, 2_795_286);
    const files = readdirSync(join(cacheDir, 'tokenizers', 'moonshotai', 'Kimi-K2-Instruct-0905')).sort();
    assert.deepEqual(files, ['tiktoken.model', 'tokenizer_config.json'], 'no partial files left');
    const repoDir = join(cacheDir, 'tokenizers', 'moonshotai', 'Kimi-K2-Instruct-0905');
    assert.equal(statSync(repoDir).mode & 0o777, 0o700, 'downloaded tokenizers are private like the data dir');
    for (const f of files) assert.equal(statSync(join(repoDir, f)).mode & 0o777, 0o600, f);
    assert.ok(
      readdirSync(join(cacheDir, 'tokenizers')).some((f) => f.startsWith('ranks-')),
      'rank cache written',
    );

    const again = hub.requests.length;
    const cached = await loadTokenizer({ model: 'moonshotai/kimi-k2-0905', cacheDir, bundledDir: false, offline: true });
    assert.deepEqual(cached.encode('Hello'), [19180]);
    assert.equal(hub.requests.length, again, 'no request once cached');
  });

  test('gated repo: a clear message without a token; with HF_TOKEN it downloads and sends the token', async (t) => {
    if ('skip' in qwen) return t.skip(qwen.skip);
    await rejectsUser(
      loadTokenizer({ model: 'qwen/qwen3-coder', cacheDir: freshDir(), hub: { endpoint: hub.url, token: '' } }),
      /gated or private.*HF_TOKEN/,
    );
    const saved = process.env.HF_TOKEN;
    process.env.HF_TOKEN = 'hf_test_token';
    try {
      const cacheDir = freshDir();
      const tok = await loadTokenizer({ model: 'qwen/qwen3-coder', cacheDir, hub: { endpoint: hub.url } });
      assert.deepEqual(tok.encode('<tool_call>'), [151657]);
      assert.equal(hub.requests.at(-1)?.authorization, 'Bearer hf_test_token');
      assert.ok(existsSync(join(cacheDir, 'tokenizers', 'Qwen', 'Qwen3-Coder-480B-A35B-Instruct', 'tokenizer_config.json')));
    } finally {
      if (saved === undefined) delete process.env.HF_TOKEN;
      else process.env.HF_TOKEN = saved;
    }
  });

  test('HF_ENDPOINT picks the endpoint; an unknown model is a clear message', async () => {
    const saved = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = hub.url;
    try {
      await rejectsUser(
        loadTokenizer({ model: 'nobody/no-such-model', cacheDir: freshDir() }),
        /no tokenizer found for nobody\/no-such-model/,
      );
      assert.equal(hub.requests.at(-1)?.path, '/nobody/no-such-model/resolve/main/tiktoken.model');
    } finally {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
    }
  });

  test('an unreachable Hub and offline mode are clear messages, not crashes', async () => {
    const port = await closedPort();
    await rejectsUser(
      loadTokenizer({ model: 'z-ai/glm-4.6', cacheDir: freshDir(), hub: { endpoint: `http://127.0.0.1:${port}` } }),
      /cannot reach the Hugging Face Hub.*ECONNREFUSED.*--tokenizer-dir/,
    );
    const data = freshDir();
    const offline = loadTokenizer({ model: 'moonshotai/kimi-k2', cacheDir: data, offline: true, bundledDir: false });
    // Offline is the caller's choice (export never downloads): the message says where it looked and what to run.
    await rejectsUser(
      offline,
      /^no tokenizer for moonshotai\/Kimi-K2-Instruct in .+; run `tokenscope tokens --model moonshotai\/kimi-k2 --data-dir .+ FILE` once to download it, or pass --tokenizer-dir$/,
    );
    await assert.rejects(
      offline,
      (e: Error) => e.message.includes(join(data, 'tokenizers', 'moonshotai', 'Kimi-K2-Instruct')) && !/is offline/.test(e.message),
    );
    await rejectsUser(loadTokenizer({ family: 'glm45', cacheDir: data, offline: true }), /tokenscope tokens --family glm45 /);
    await assert.rejects(
      offline,
      (e: unknown) =>
        e instanceof TokenizerMissingError &&
        e.repo === 'moonshotai/Kimi-K2-Instruct' &&
        e.dir === join(data, 'tokenizers', 'moonshotai', 'Kimi-K2-Instruct'),
    );
    await rejectsUser(loadTokenizer({ model: 'z-ai/glm-4.6' }), /no data dir/);
    await rejectsUser(loadTokenizer({}), /no model id/);
  });

  test('the pool loads each tokenizer once and forgets failures', async (t) => {
    if ('skip' in kimi) return t.skip(kimi.skip);
    const pool = new TokenizerPool();
    const cacheDir = freshDir();
    const req = { model: 'moonshotai/kimi-k2-0905', cacheDir, bundledDir: false as const };
    await rejectsUser(pool.get({ ...req, offline: true }), /no tokenizer for moonshotai\/Kimi-K2-Instruct-0905/);
    const a = await pool.get({ ...req, hub: { endpoint: hub.url } });
    const b = await pool.get({ ...req, offline: true });
    assert.equal(a, b);
    // A download asked for while a load that may not download is in flight (another panel) waits for it, then loads.
    const other = new TokenizerPool();
    const fresh = { ...req, cacheDir: freshDir() };
    const offline = other.get({ ...fresh, offline: true });
    const online = other.get({ ...fresh, hub: { endpoint: hub.url } });
    await rejectsUser(offline, /no tokenizer for moonshotai\/Kimi-K2-Instruct-0905/);
    assert.deepEqual((await online).encode('Hello'), [19180]);
    assert.equal(await other.get({ ...fresh, offline: true }), await online, 'kept once loaded');
  });
});

describe('the Kimi K2 tokenizer shipped with Tokenscope (tokenizers/kimi-k2/)', () => {
  const shipped = join(repoRoot, 'tokenizers', 'kimi-k2');

  test('the repository ships the files with their licence', () => {
    for (const f of ['tiktoken.model', 'tokenizer_config.json', 'LICENSE', 'README.md']) assert.ok(existsSync(join(shipped, f)), f);
    assert.equal(statSync(join(shipped, 'tiktoken.model')).size, 2_795_286);
  });

  test('every Kimi K2 model id and the kimi-k2 family resolve to it; other models do not', () => {
    for (const model of [
      'moonshotai/kimi-k2',
      'moonshotai/kimi-k2-0905',
      'moonshotai/kimi-k2:free',
      'moonshotai/kimi-k2-thinking',
      'moonshotai/kimi-k2.5',
      'moonshotai/kimi-k2.6',
      'moonshotai/Kimi-K2-Instruct',
      'kimi-k2-turbo-preview',
    ]) {
      assert.equal(localTokenizerDir({ model, cacheDir: freshDir() }), shipped, model);
    }
    assert.equal(localTokenizerDir({ family: 'kimi-k2', cacheDir: freshDir() }), shipped);
    for (const model of ['moonshotai/kimi-dev-72b', 'moonshotai/kimi-k3', 'z-ai/glm-4.6', 'qwen/qwen3-coder']) {
      assert.equal(localTokenizerDir({ model, cacheDir: freshDir() }), undefined, model);
    }
    assert.equal(bundledTokenizerDir('moonshotai/Kimi-K2-Instruct', false), undefined, 'false leaves the shipped copies out');
    assert.equal(bundledTokenizerDir('moonshotai/Kimi-K2-Instruct', join(tmp, 'nowhere')), undefined, 'a root without the files');
  });

  test('offline, with an empty data dir and the Hub on a closed port, Kimi ids come from the shipped copy', async () => {
    const port = await closedPort();
    const cacheDir = freshDir();
    for (const offline of [true, false]) {
      const tok = await loadTokenizer({
        model: 'moonshotai/kimi-k2-0905',
        cacheDir,
        offline,
        hub: { endpoint: `http://127.0.0.1:${port}` },
      });
      assert.equal(tok.name, 'moonshotai/Kimi-K2-Instruct-0905 (tiktoken)');
      assert.deepEqual(tok.encode('<|tool_calls_section_begin|>'), [163595]);
      assert.deepEqual(tok.encode('Hello 世界'), [19180, 220, 2243]);
    }
    assert.deepEqual(
      (await loadTokenizer({ family: 'kimi-k2', offline: true })).encode('<|im_end|>'),
      [163586],
      'no data dir needed either',
    );
    assert.ok(!existsSync(join(cacheDir, 'tokenizers', 'moonshotai')), 'nothing downloaded into the data dir');
  });

  test('it wins over a cached download, and a tokenizer folder named wins over it', async (t) => {
    const cacheDir = freshDir();
    const cached = join(cacheDir, 'tokenizers', 'moonshotai', 'Kimi-K2-Instruct-0905');
    mkdirSync(cached, { recursive: true });
    writeFileSync(join(cached, 'tiktoken.model'), 'not a rank file\n');
    writeFileSync(join(cached, 'tokenizer_config.json'), '{}');
    const tok = await loadTokenizer({ model: 'moonshotai/kimi-k2-0905', cacheDir, offline: true });
    assert.deepEqual(tok.encode('<|tool_calls_section_begin|>'), [163595]);
    const qwen = lenmlDir('qwen3');
    if ('skip' in qwen) return t.skip(qwen.skip);
    const named = await loadTokenizer({ model: 'moonshotai/kimi-k2-0905', tokenizerDir: qwen.dir, cacheDir, offline: true });
    assert.deepEqual(named.encode('<|im_end|>'), [151645]);
  });
});
