import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cli } from '../../helpers/cli-main';
import { startHfEmulator, type HfEmulator } from '../../fixtures/hf-emulator';
import { recording } from '../../helpers/shared';
import { kimiTokenizerDir, lenmlDir } from '../../unit/tokens/helpers';

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-cli-tokens-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const run = (...argv: string[]) => cli('tokens', ...argv);

function file(name: string, body: unknown): string {
  const p = join(tmp, name);
  writeFileSync(p, typeof body === 'string' ? body : JSON.stringify(body));
  return p;
}

type JsonOut = {
  source: string;
  family: string | null;
  tokens: { id: number; text: string; kind: string; segment: string | null }[];
  accounting: { counted: number; billed: number | null; delta: number | null; mismatch: boolean };
  findings: { rule: string; tokens: [number, number] | null; expectedBefore?: number }[];
};

const kimi = kimiTokenizerDir();
const LEAK =
  'I will read the file.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "src/a.ts"}<|tool_call_end|>';

describe('tokenscope tokens', { skip: 'skip' in kimi ? kimi.skip : false }, () => {
  const dir = 'dir' in kimi ? kimi.dir : '';
  const dataDir = join(tmp, 'data');

  test('raw Kimi text: special ids, segments and a ghost for the missing section end (--json)', async () => {
    const f = file('turn.txt', `<think>Check the file.</think>${LEAK}`);
    const r = await run('--model', 'moonshotai/kimi-k2-0905', '--tokenizer-dir', dir, '--data-dir', dataDir, '--json', f);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as JsonOut;
    assert.equal(j.source, 'text');
    assert.equal(j.family, 'kimi-k2');
    assert.deepEqual(
      j.tokens.filter((t) => t.kind === 'special').map((t) => t.id),
      [163606, 163607, 163595, 163597, 163598, 163599],
    );
    assert.ok(j.tokens.some((t) => t.segment === 'arguments' && t.text === '·"'));
    assert.equal(j.accounting.billed, null);
    const unclosed = j.findings.find((x) => x.rule.includes('section-unclosed'));
    assert.ok(unclosed, j.findings.map((x) => x.rule).join());
    assert.equal(unclosed.expectedBefore, j.tokens.length);
  });

  test('an OpenAI response with markup leaked into content: reconstructed, markers as text, accounting (text view)', async () => {
    const body = {
      id: 'gen-1',
      object: 'chat.completion',
      model: 'moonshotai/kimi-k2-0905',
      choices: [{ index: 0, message: { role: 'assistant', content: LEAK }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 100, completion_tokens: 33, total_tokens: 133 },
    };
    const f = file('leak.json', body);
    const json = await run('--tokenizer-dir', dir, '--data-dir', dataDir, '--json', f);
    assert.equal(json.code, 0, json.err);
    const j = JSON.parse(json.out) as JsonOut;
    assert.equal(j.source, 'reconstructed');
    assert.ok(j.tokens.filter((t) => t.kind === 'marker-as-text').length > 10);
    assert.ok(
      j.tokens.every((t) => t.kind !== 'special' || t.id === 163586),
      'only the rendered end marker is special',
    );
    assert.equal(j.accounting.billed, 33);
    assert.equal(j.accounting.delta, j.accounting.counted - 33);

    const text = await run('--tokenizer-dir', dir, '--data-dir', dataDir, f);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /source: reconstructed/);
    assert.match(text.out, /«\.<» «\|» «tool» «_calls» «_section» «_begin»/, 'marker pieces highlighted');
    assert.match(text.out, /\[<\|im_end\|>\]/);
    assert.match(text.out, /33 billed/);
  });

  test('SGLang /generate with output_ids: the server ids as they are; billing far off is flagged', async () => {
    const { loadKimiTokenizer } = await import('../../../src/core/tokens/kimi');
    const k = loadKimiTokenizer({ dir });
    const ids = k.encode(
      'Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
    );
    const body = {
      text: 'Sure.',
      output_ids: ids,
      meta_info: { id: 'x', finish_reason: { type: 'stop', matched: 163586 }, prompt_tokens: 10, completion_tokens: ids.length * 4 },
    };
    const r = await run('--model', 'moonshotai/Kimi-K2-Instruct-0905', '--tokenizer-dir', dir, '--json', file('sglang.json', body));
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as JsonOut;
    assert.equal(j.source, 'server');
    assert.deepEqual(
      j.tokens.map((t) => t.id),
      ids,
    );
    assert.equal(j.accounting.mismatch, true);
    assert.ok(j.findings.some((x) => x.rule === 'token-accounting-mismatch'));
  });

  test('one token is one token, not "1 tokens"', async () => {
    const r = await run('--model', 'moonshotai/kimi-k2-0905', '--tokenizer-dir', dir, file('one.txt', 'Hello'));
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^one\.txt: 1 token, /);
    assert.match(r.out, /accounting: 1 completion token counted/);
  });

  test('a stream cut off mid-reasoning shows no end of turn the model never sent', async (t) => {
    const rec = recording('18-kimi-fantasy-openrouter-tool-stream');
    if (!rec) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    // The first 1500 bytes, as `head -c 1500` would cut them.
    const cut = join(tmp, 'cut.sse');
    writeFileSync(cut, readFileSync(join(rec.dir, 'stream.sse')).subarray(0, 1500));
    const r = await run('--model', 'moonshotai/kimi-k2', '--tokenizer-dir', dir, '--json', cut);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as JsonOut;
    assert.equal(j.source, 'reconstructed');
    assert.ok(j.tokens.some((x) => x.segment === 'reasoning'));
    assert.ok(!j.tokens.some((x) => x.text === '</think>' || x.text === '<|im_end|>'), j.tokens.map((x) => x.text).join(' '));
    assert.equal(j.tokens.at(-1)?.segment, 'reasoning');
    const whole = await run('--model', 'moonshotai/kimi-k2', '--tokenizer-dir', dir, join(rec.dir, 'stream.sse'));
    assert.match(whole.out, /\[<\|im_end\|>\]/, 'the complete stream still ends its turn');
  });

  describe('tokenizer from the Hub (local emulator)', () => {
    let hub: HfEmulator;
    let saved: string | undefined;
    before(async () => {
      const files = { 'tiktoken.model': join(dir, 'tiktoken.model'), 'tokenizer_config.json': join(dir, 'tokenizer_config.json') };
      // Kimi Linear uses Kimi K2's rank file; Tokenscope ships K2's tokenizer only, so Kimi Linear's is downloaded.
      hub = await startHfEmulator({ 'moonshotai/Kimi-K2.5': { files }, 'moonshotai/Kimi-Linear-48B-A3B-Instruct': { files } });
      saved = process.env.HF_ENDPOINT;
      process.env.HF_ENDPOINT = hub.url;
    });
    after(async () => {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
      await hub.close();
    });

    test('downloads into --data-dir with progress on stderr, then works --offline', async () => {
      const data = join(tmp, 'hub-data');
      const f = file('k25.txt', 'Hello 世界<|im_end|>');
      const model = 'moonshotai/Kimi-Linear-48B-A3B-Instruct';
      const first = await run('--model', model, '--data-dir', data, '--json', f);
      assert.equal(first.code, 0, first.err);
      assert.match(first.err, /downloading moonshotai\/Kimi-Linear-48B-A3B-Instruct\/tiktoken\.model: 2\.7 of 2\.7 MB/);
      assert.deepEqual(
        (JSON.parse(first.out) as JsonOut).tokens.map((t) => t.id),
        [19180, 220, 2243, 163586],
      );
      const again = await run('--model', model, '--data-dir', data, '--offline', '--json', f);
      assert.equal(again.code, 0, again.err);
      assert.equal(again.err, '');
    });

    test('Kimi K2 models need no download: the tokenizer shipped with Tokenscope comes first', async () => {
      const before = hub.requests.length;
      const f = file('k25-shipped.txt', 'Hello 世界<|im_end|>');
      const r = await run('--model', 'moonshotai/kimi-k2.5', '--data-dir', join(tmp, 'shipped-data'), '--json', f);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.err, '', 'no download progress');
      assert.equal((JSON.parse(r.out) as { tokenizer: string }).tokenizer, 'moonshotai/Kimi-K2.5 (tiktoken)');
      assert.deepEqual(
        (JSON.parse(r.out) as JsonOut).tokens.map((t) => t.id),
        [19180, 220, 2243, 163586],
      );
      assert.equal(hub.requests.length, before, 'the Hub was not asked');
    });

    test('unknown model and offline without a cached tokenizer: exit 2 with one line', async () => {
      const f = file('x.txt', 'hello');
      const unknown = await run('--model', 'acme/unknown-model', '--data-dir', join(tmp, 'd2'), f);
      assert.equal(unknown.code, 2);
      assert.match(unknown.err, /^tokenscope tokens: no tokenizer found for acme\/unknown-model/);
      assert.equal(unknown.err.split('\n').length, 1);
      const offline = await run('--model', 'qwen/qwen3-coder', '--data-dir', join(tmp, 'd3'), '--offline', f);
      assert.equal(offline.code, 2);
      assert.match(
        offline.err,
        /no tokenizer for Qwen\/Qwen3-Coder-480B-A35B-Instruct in .*; run `tokenscope tokens --model qwen\/qwen3-coder/,
      );
      assert.doesNotMatch(offline.err, /Tokenscope is offline/);
    });
  });
});

describe('tokenscope tokens, other inputs', () => {
  test('a Qwen3 tokenizer.json folder', async (t) => {
    const qwen = lenmlDir('qwen3');
    if ('skip' in qwen) return t.skip(qwen.skip);
    const f = file('qwen.txt', '<think>\nok\n</think>\n\n<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call><|im_end|>');
    const r = await run('--model', 'qwen/qwen3-235b-a22b-2507', '--tokenizer-dir', qwen.dir, '--json', f);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as JsonOut;
    assert.deepEqual(
      j.tokens.filter((x) => x.kind === 'special').map((x) => x.id),
      [151667, 151668, 151657, 151658, 151645],
    );
  });

  test('no FILE, no model, bad flags: exit 2 with a reason', async () => {
    assert.equal((await run()).code, 2);
    const f = file('plain.txt', 'just text');
    const r = await run('--data-dir', join(tmp, 'd4'), f);
    assert.equal(r.code, 2);
    assert.match(r.err, /names no model: pass --model/);
    assert.equal((await run('--bogus', f)).code, 2);
    assert.equal((await run('--help')).code, 0);
  });
});
