import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { UserError } from '../../../src/core/model';
import { loadHfTokenizer } from '../../../src/core/tokens/hf';
import { ChatTemplatePool, promptTokens } from '../../../src/core/tokens/prompt';
import { readChatTemplate } from '../../../src/core/tokens/template';
import { kimiLayoutPrompt } from '../../fixtures/kimi-template';
import { lenmlDir } from './helpers';

/** An agent turn as agents send it: a system prompt, a tool, one call and its result in the history (content null on the call). */
const BODY = {
  model: 'x',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Read a.ts' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path": "a.ts"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'export {}' },
    { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'read',
        description: 'Read a file',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    },
  ],
};

const TOOL_JSON =
  '{"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}';

/**
 * Qwen3's documented prompt layout for BODY, written out: the tools in the system turn inside <tools>, the history
 * call as <tool_call> JSON, the tool result as a user turn inside <tool_response>, and the generation prompt.
 */
const QWEN3_PROMPT =
  '<|im_start|>system\nYou are terse.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  `You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n${TOOL_JSON}\n</tools>\n\n` +
  'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\nRead a.ts<|im_end|>\n' +
  '<|im_start|>assistant\n<tool_call>\n{"name": "read", "arguments": {"path": "a.ts"}}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\n<tool_response>\nexport {}\n</tool_response><|im_end|>\n' +
  '<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n';

/** DeepSeek V3's layout: BOS, the system text, <｜User｜>/<｜Assistant｜> turns, the call in ```json fences, the outputs block. */
const DEEPSEEK_PROMPT =
  '<｜begin▁of▁sentence｜>You are terse.<｜User｜>Read a.ts<｜Assistant｜>' +
  '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n```json\n{"path": "a.ts"}\n```<｜tool▁call▁end｜>' +
  '<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>export {}<｜tool▁output▁end｜><｜User｜>Thanks<｜Assistant｜>';

describe('prompt ids from the model’s own chat template', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-prompt-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('Qwen3: the official template (tokenizer_config.json) gives the ids of the documented prompt', (t) => {
    const found = lenmlDir('qwen3');
    if ('skip' in found) return t.skip(found.skip);
    const tokenizer = loadHfTokenizer(found.dir, 'qwen3');
    const template = readChatTemplate(found.dir);
    assert.ok(template, 'the package ships a chat_template');
    const p = promptTokens(tokenizer, template, BODY);
    assert.equal(p.text, QWEN3_PROMPT);
    assert.deepEqual(p.ids, tokenizer.encode(QWEN3_PROMPT));
    const count = (id: number) => p.ids.filter((x) => x === id).length;
    assert.equal(count(151644), 6, '<|im_start|> per turn and the generation prompt');
    assert.equal(count(151645), 5, '<|im_end|>');
    assert.equal(count(151657), 3, '<tool_call>: twice in the instructions, once for the history call');
    assert.deepEqual(p.ids.slice(-3), [151644, tokenizer.encode('assistant')[0], tokenizer.encode('\n')[0]]);
  });

  test('Qwen3: chat_template_kwargs reach the template (enable_thinking false closes an empty think block)', (t) => {
    const found = lenmlDir('qwen3');
    if ('skip' in found) return t.skip(found.skip);
    const tokenizer = loadHfTokenizer(found.dir, 'qwen3');
    const p = promptTokens(tokenizer, readChatTemplate(found.dir)!, { ...BODY, chat_template_kwargs: { enable_thinking: false } });
    assert.ok(p.text.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'), JSON.stringify(p.text.slice(-60)));
  });

  test('DeepSeek V3: the official template with the config’s bos_token (an AddedToken object) gives the documented prompt', (t) => {
    const found = lenmlDir('deepseek_v3');
    if ('skip' in found) return t.skip(found.skip);
    const tokenizer = loadHfTokenizer(found.dir, 'deepseek_v3');
    const p = promptTokens(tokenizer, readChatTemplate(found.dir)!, BODY);
    assert.equal(p.text, DEEPSEEK_PROMPT);
    assert.deepEqual(p.ids, tokenizer.encode(DEEPSEEK_PROMPT));
    assert.equal(p.ids[0], 0, '<｜begin▁of▁sentence｜> is id 0');
    assert.equal(p.ids.at(-1), tokenizer.specials.get('<｜Assistant｜>'));
  });

  test('a folder without a template is a clear UserError; a Kimi-layout chat_template.jinja is found', async (t) => {
    const pool = new ChatTemplatePool();
    await assert.rejects(
      pool.get({ tokenizerDir: tmp }),
      (e: Error) => e instanceof UserError && /no chat template in .*chat_template\.jinja/.test(e.message),
    );
    const { kimiDirWithTemplate } = await import('../../fixtures/kimi-template');
    const { kimiTokenizerDir } = await import('./helpers');
    const k = kimiTokenizerDir();
    if ('skip' in k) return t.skip(`the Kimi part: ${k.skip}`);
    const dir = kimiDirWithTemplate(k.dir, join(tmp, 'kimi'));
    const { loadKimiTokenizer } = await import('../../../src/core/tokens/kimi');
    const tokenizer = loadKimiTokenizer({ dir });
    const p = promptTokens(tokenizer, await new ChatTemplatePool().get({ tokenizerDir: dir }), {
      messages: [{ role: 'user', content: 'Hello' }],
    });
    assert.equal(p.text, kimiLayoutPrompt('Hello'));
    assert.deepEqual(p.ids.slice(0, 3), [163594, 14062, 163601], '<|im_system|> system <|im_middle|>');
  });
});
