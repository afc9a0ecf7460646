import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BatchProcessor } from '../../../src/core/tokens/batch/process';
import { generationPromptOverlap } from '../../../src/core/tokens/stream';
import { recording } from '../../helpers/shared';
import { lenmlDir } from './helpers';

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-batch-lines-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A tokenizer folder: a package's tokenizer files (linked), plus a chat template when given. */
function tokenizerDir(name: string, from: string, template?: string): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) symlinkSync(join(from, f), join(dir, f));
  if (template) writeFileSync(join(dir, 'chat_template.jinja'), template);
  return dir;
}

/** gpt-oss's Harmony prompt layout, reduced to what the test needs: the generation prompt is `<|start|>assistant`. */
const HARMONY_LAYOUT =
  '{%- for m in messages -%}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{%- endfor -%}{%- if add_generation_prompt -%}<|start|>assistant{%- endif -%}';

interface Out {
  prompt_ids: number[];
  completion_ids: number[];
}

describe('tokens --batch lines: the SpecForge record and the tool-call counts', () => {
  test('gpt-oss: the prompt’s `<|start|>assistant` is not the model’s: left out of the completion ids, the count and input_ids; tools ride along', async (t) => {
    const found = lenmlDir('gptoss');
    const rec = recording('20-harmony-fantasy-llamacpp-tool-json');
    if ('skip' in found) return t.skip(found.skip);
    if (!rec) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    const dir = tokenizerDir('gptoss', found.dir, HARMONY_LAYOUT);
    const request = JSON.parse(rec.files['request.json']);
    const line = JSON.stringify({ request, response: JSON.parse(rec.files['response.json']) });
    const r = await new BatchProcessor({ tokenizerDir: dir, specforge: true }).process(1, line);
    assert.equal(r.error, undefined);
    const out = JSON.parse(r.out!) as Out & { accounting: { completion: { counted: number; billed: number } } };
    const sf = JSON.parse(r.specforge!) as { input_ids: number[]; loss_mask: number[]; tools: string; conversations: { role: string }[] };
    const [START, ASSISTANT, CHANNEL] = [200006, 173781, 200005];
    assert.deepEqual(out.prompt_ids.slice(-2), [START, ASSISTANT], 'the generation prompt');
    assert.equal(out.completion_ids[0], CHANNEL, 'the model’s turn starts at <|channel|>');
    // The recorded provider billed 58: the turn without the header the prompt already holds.
    assert.deepEqual([out.completion_ids.length, out.accounting.completion.counted, out.accounting.completion.billed], [58, 58, 58]);
    assert.deepEqual(sf.input_ids, [...out.prompt_ids, ...out.completion_ids]);
    assert.equal(sf.loss_mask.length, sf.input_ids.length);
    assert.equal(sf.loss_mask.indexOf(1), out.prompt_ids.length);
    assert.equal(sf.loss_mask.filter((x) => x === 1).length, out.completion_ids.length);
    assert.deepEqual(JSON.parse(sf.tools), request.tools, 'tools as a JSON string, the form SpecForge reads');
    assert.deepEqual(
      sf.conversations.map((c) => c.role),
      ['system', 'user', 'assistant'],
    );
  });

  test('a generation prompt that opens `<think>` is the prompt’s, not the model’s: left out of the completion ids and the count, once in input_ids', async (t) => {
    const found = lenmlDir('qwen3');
    if ('skip' in found) return t.skip(found.skip);
    // A thinking-only Qwen3 template opens the answer with `<think>\n` in the prompt; the reconstruction writes it too.
    const dir = tokenizerDir(
      'qwen3-think',
      found.dir,
      "{%- for m in messages -%}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor -%}{{- '<|im_start|>assistant\\n<think>\\n' }}",
    );
    const plain = tokenizerDir(
      'qwen3-plain',
      found.dir,
      "{%- for m in messages -%}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor -%}{{- '<|im_start|>assistant\\n' }}",
    );
    const response = {
      id: 'x',
      object: 'chat.completion',
      model: 'qwen/qwen3-32b',
      choices: [{ index: 0, message: { role: 'assistant', reasoning_content: 'Say hi.', content: 'Hi!' }, finish_reason: 'stop' }],
    };
    const line = JSON.stringify({ request: { messages: [{ role: 'user', content: 'Hello' }] }, response });
    const r = await new BatchProcessor({ tokenizerDir: dir, specforge: true }).process(1, line);
    const q = await new BatchProcessor({ tokenizerDir: plain, specforge: true }).process(1, line);
    assert.equal(r.error, undefined);
    assert.equal(q.error, undefined);
    const out = JSON.parse(r.out!) as Out & { accounting: { completion: { counted: number } } };
    const whole = JSON.parse(q.out!) as Out & { accounting: { completion: { counted: number } } };
    const sf = JSON.parse(r.specforge!) as { input_ids: number[]; loss_mask: number[] };
    const THINK = 151667;
    // Where the prompt does not hold it, `<think>` and its newline are the model's first two ids.
    assert.equal(whole.completion_ids[0], THINK);
    assert.deepEqual(out.prompt_ids.slice(-2), whole.completion_ids.slice(0, 2), 'the prompt ends with <think> and its newline');
    assert.deepEqual(out.completion_ids, whole.completion_ids.slice(2));
    assert.equal(out.accounting.completion.counted, whole.accounting.completion.counted - 2);
    assert.deepEqual(sf.input_ids, [...out.prompt_ids, ...out.completion_ids]);
    assert.equal(sf.input_ids.filter((id) => id === THINK).length, 1);
    assert.equal(sf.loss_mask.filter((x) => x === 1).length, out.completion_ids.length);
  });

  test('the overlap is only a run that starts with a special token', () => {
    const tk = { specialName: (id: number) => (id >= 100 ? `<s${id}>` : undefined) };
    assert.equal(generationPromptOverlap([1, 2, 100, 7], [100, 7, 9], tk), 2);
    assert.equal(generationPromptOverlap([1, 2, 5], [5, 6], tk), 0, 'an ordinary token that repeats the prompt’s last is the model’s');
    assert.equal(generationPromptOverlap([1, 101], [100, 7], tk), 0);
    assert.equal(generationPromptOverlap([], [100], tk), 0);
  });

  test('tool-call markup in the prompt means calls or markers in the messages, not a template’s tool instructions', async (t) => {
    const found = lenmlDir('qwen3');
    if ('skip' in found) return t.skip(found.skip);
    const p = new BatchProcessor({ tokenizerDir: found.dir });
    const tools = [
      { type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
    ];
    const response = {
      id: 'x',
      object: 'chat.completion',
      model: 'qwen/qwen3-32b',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
    };
    const user = { role: 'user', content: 'Read a.ts' };
    const call = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } }],
    };
    const result = { role: 'tool', tool_call_id: 'c1', content: 'export {}' };
    const stats = async (messages: unknown[]) => {
      const r = await p.process(1, JSON.stringify({ request: { model: 'qwen/qwen3-32b', messages, tools }, response }));
      assert.equal(r.error, undefined);
      assert.ok(JSON.parse(r.out!).prompt_ids.length > 0);
      return r.stats!;
    };
    const offered = await stats([user]);
    // Qwen3's template spells `<tool_call>` in the instructions it writes for every request with tools.
    assert.equal(offered.tools, true);
    assert.equal(offered.promptMarkup, false);
    assert.equal((await stats([user, call, result])).promptMarkup, true, 'a call in the history');
    assert.equal(
      (await stats([{ role: 'user', content: 'Why did you write <tool_call>{"name":"read"}</tool_call>?' }])).promptMarkup,
      true,
      'markup pasted in a message',
    );
  });
});
