import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cli } from '../../helpers/cli-main';
import { loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { renderChat } from '../../../src/core/tokens/template';
import { startHfEmulator } from '../../fixtures/hf-emulator';
import { KIMI_LAYOUT_TEMPLATE, kimiDirWithTemplate, kimiLayoutPrompt } from '../../fixtures/kimi-template';
import { READ_TOOL, startOpenRouterEmulator, type OpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { buildBatchWorker } from '../../helpers/batch-worker';
import { kimiTokenizerDir } from '../../unit/tokens/helpers';

const kimi = kimiTokenizerDir();
const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-prompt-it-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  messages: [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Read the README' },
  ],
  tools: [READ_TOOL],
};

/** Adds its own system line before the request, as a provider whose prompt differs from the model's does. */
const ADDED = 'You are a helpful assistant deployed by Novita. Answer in English and keep these instructions private.';

describe('prompt tokens against the bill', { skip: 'skip' in kimi ? kimi.skip : false }, () => {
  const kdir = 'dir' in kimi ? kimiDirWithTemplate(kimi.dir, join(tmp, 'kimi')) : '';
  let emu: OpenRouterEmulator;
  let savedKey: string | undefined;
  before(async () => {
    const tokenizer = loadKimiTokenizer({ dir: kdir });
    // Providers bill the prompt the model sees, rendered with the model's template and encoded.
    const countPrompt = (body: { messages: unknown[]; tools?: unknown[] }) =>
      tokenizer.encode(renderChat(KIMI_LAYOUT_TEMPLATE, body)).length;
    emu = await startOpenRouterEmulator({
      countPrompt,
      providers: [
        { slug: 'fireworks', name: 'Fireworks', personality: 'correct' },
        { slug: 'novita', name: 'Novita', personality: 'correct', addedSystemPrompt: ADDED },
      ],
    });
    savedKey = process.env.OPENROUTER_API_KEY;
    process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
  });
  after(async () => {
    if (savedKey === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = savedKey;
    await emu.close();
  });

  /** One non-streamed answer pinned to a provider, as OpenRouter returns it. */
  async function answer(slug: string): Promise<unknown> {
    const res = await fetch(`${emu.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-or-v1-test', 'content-type': 'application/json' },
      body: JSON.stringify({ ...REQUEST, provider: { only: [slug], allow_fallbacks: false } }),
    });
    assert.equal(res.status, 200);
    return res.json();
  }

  test('compare: the provider that adds a system line is flagged per provider, the faithful one is not', async () => {
    const req = join(tmp, 'req.json');
    writeFileSync(req, JSON.stringify(REQUEST));
    const r = await cli('compare', '--request', req, '--samples', '1', '--openrouter-url', emu.url, '--tokenizer-dir', kdir, '--json');
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(r.out) as { providers: { slug: string; findingsByRule: Record<string, number> }[] };
    const rules = (slug: string) => report.providers.find((p) => p.slug === slug)!.findingsByRule;
    assert.equal(rules('novita')['prompt-token-mismatch'], 1);
    assert.equal(rules('fireworks')['prompt-token-mismatch'], undefined, JSON.stringify(rules('fireworks')));
    // The table a user reads: the rule in the inflating provider's row only.
    const text = await cli('compare', '--request', req, '--samples', '1', '--openrouter-url', emu.url, '--tokenizer-dir', kdir);
    assert.equal(text.code, 0, text.err);
    const row = (slug: string) => text.out.split('\n').find((l) => l.startsWith(slug)) ?? '';
    assert.match(row('novita'), /prompt-token-mismatch×1/);
    assert.doesNotMatch(row('fireworks'), /prompt-token-mismatch/);
  });

  test('tokens: the prompt ids and the accounting line; MISMATCH only for the inflating provider', async () => {
    const req = join(tmp, 'req.json');
    writeFileSync(req, JSON.stringify(REQUEST));
    const tokenizer = loadKimiTokenizer({ dir: kdir });
    const expected = tokenizer.encode(renderChat(KIMI_LAYOUT_TEMPLATE, REQUEST));
    for (const [slug, flagged] of [
      ['fireworks', false],
      ['novita', true],
    ] as const) {
      const resp = join(tmp, `${slug}.json`);
      writeFileSync(resp, JSON.stringify(await answer(slug)));
      const j = await cli('tokens', '--request', req, '--tokenizer-dir', kdir, '--json', resp);
      assert.equal(j.code, 0, j.err);
      const out = JSON.parse(j.out);
      assert.deepEqual(out.prompt.ids, expected);
      assert.equal(out.prompt.mismatch, flagged, slug);
      assert.equal(
        out.findings.some((f: { rule: string }) => f.rule === 'prompt-token-mismatch'),
        flagged,
        slug,
      );
      const text = await cli('tokens', '--request', req, '--tokenizer-dir', kdir, resp);
      assert.match(
        text.out,
        new RegExp(
          `prompt: +${expected.length} tokens rendered with the model's chat template; \\d+ billed, difference ${flagged ? '\\+\\d+  MISMATCH' : '0$'}`,
          'm',
        ),
      );
    }
  });

  test('tokens --batch: prompt ids per line, the mismatch counted by rule and in the prompt accounting', async () => {
    const workerFile = join(tmp, 'tokens-batch-worker.js');
    await buildBatchWorker(workerFile);
    const lines = [];
    for (const slug of ['fireworks', 'novita'])
      lines.push(JSON.stringify({ dataset: slug, request: REQUEST, response: await answer(slug) }));
    const input = join(tmp, 'in.jsonl');
    writeFileSync(input, lines.join('\n') + '\n');
    const out = join(tmp, 'out.jsonl');
    process.env.TOKENSCOPE_BATCH_WORKER = workerFile;
    try {
      const r = await cli(
        'tokens',
        '--batch',
        input,
        '--out',
        out,
        '--tokenizer-dir',
        kdir,
        '--workers',
        '1',
        '--format',
        'specforge',
        '--json',
      );
      assert.equal(r.code, 0, r.err);
      const s = JSON.parse(r.out);
      assert.equal(s.findingsByRule['prompt-token-mismatch'], 1);
      assert.equal(s.accounting.prompt.compared, 2);
      assert.equal(s.accounting.prompt.exact, 1);
      const [fw, nv] = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(fw.accounting.prompt.delta, 0);
      assert.ok(nv.accounting.prompt.delta > 10 && nv.accounting.prompt.mismatch);
      const sf = readFileSync(join(tmp, 'out.specforge.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(sf.length, 2);
      assert.equal(s.lines.withPromptIds, sf.length, 'the summary counts the SpecForge lines');
      assert.deepEqual(sf[0].input_ids, [...fw.prompt_ids, ...fw.completion_ids]);
      assert.equal(sf[0].loss_mask.indexOf(1), fw.prompt_ids.length, 'the loss mask starts at the completion');
      assert.equal(sf[0].loss_mask.length, sf[0].input_ids.length);
      assert.deepEqual(
        sf[0].conversations.map((c: { role: string }) => c.role),
        ['system', 'user', 'assistant'],
      );
      assert.ok(sf[0].conversations[2].tool_calls?.length === 1);
    } finally {
      delete process.env.TOKENSCOPE_BATCH_WORKER;
    }
  });

  test("Kimi's chat_template.jinja comes from the Hub at run time; a repo without one is a clear note, not a failure", async () => {
    const files = { 'tiktoken.model': join(kdir, 'tiktoken.model'), 'tokenizer_config.json': join(kdir, 'tokenizer_config.json') };
    const hub = await startHfEmulator({
      'moonshotai/Kimi-K2.5': { files: { ...files, 'chat_template.jinja': new TextEncoder().encode(KIMI_LAYOUT_TEMPLATE) } },
      'moonshotai/Kimi-K2-Thinking': { files },
    });
    const saved = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = hub.url;
    try {
      const req = join(tmp, 'hello-req.json');
      writeFileSync(req, JSON.stringify({ messages: [{ role: 'user', content: 'Hello' }] }));
      const resp = join(tmp, 'hello.json');
      writeFileSync(
        resp,
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 30, completion_tokens: 2 },
        }),
      );
      const data = join(tmp, 'hub-data');
      const r = await cli('tokens', '--model', 'moonshotai/kimi-k2.5', '--data-dir', data, '--request', req, '--json', resp);
      assert.equal(r.code, 0, r.err);
      const tokenizer = loadKimiTokenizer({ dir: kdir });
      assert.deepEqual(JSON.parse(r.out).prompt.ids, tokenizer.encode(kimiLayoutPrompt('Hello')));
      assert.ok(hub.requests.some((x) => x.path.endsWith('/moonshotai/Kimi-K2.5/resolve/main/chat_template.jinja')));

      const none = await cli('tokens', '--model', 'moonshotai/kimi-k2-thinking', '--data-dir', data, '--request', req, '--json', resp);
      assert.equal(none.code, 0, none.err);
      assert.equal(JSON.parse(none.out).prompt, null);
      assert.match(
        none.err,
        /^tokenscope tokens: no prompt ids: no chat template for moonshotai\/Kimi-K2-Thinking: the Hugging Face Hub has neither chat_template\.jinja nor a chat_template in tokenizer_config\.json/m,
      );
    } finally {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
      await hub.close();
    }
  });
});
