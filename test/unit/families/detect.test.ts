import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectFamily, formats, getFormat } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';

const ALL: FamilyId[] = [
  'kimi-k2',
  'kimi-k3',
  'deepseek-v3',
  'deepseek-v31',
  'qwen3',
  'qwen3-coder',
  'glm45',
  'gpt-oss',
  'minimax-m2',
  'minimax-m3',
  'hermes',
  'mistral',
  'llama3-json',
  'jamba',
  'nemotron',
  'phi4',
  'glm47',
  'ling3',
  'glm53-flash',
  'hunyuan',
  'hunyuan-v3',
  'deepseek-v32',
  'deepseek-v4',
  'gemma4',
  'llama4-pythonic',
  'seed-oss',
  'step3',
  'deepseek-v41',
  'cohere-command',
  'gigachat3',
  'gigachat35',
  'internlm',
  'granite3',
  'granite4',
  'granite42',
  'inkling',
  'k2-horizon',
  'lfm2',
  'longcat',
  'minicpm5',
  'functionary-v31',
  'olmo3',
  'apertus',
  'dots',
  'reka',
  'poolside-v1',
  'trinity',
  'ernie45',
  'functiongemma',
  'granite-20b-fc',
  'muse-glimmer',
  'solar-open2',
  'xlam',
  'iquest-q1',
  'functionary-v32',
];

test('one format per family id, found by getFormat', () => {
  assert.deepEqual([...formats.map((f) => f.id)].sort(), [...ALL].sort());
  for (const id of ALL) assert.equal(getFormat(id).id, id);
  assert.throws(
    () => getFormat('nope' as FamilyId),
    (e: Error) => e.name === 'UserError' && /unknown model family 'nope' \(known: kimi-k2, /.test(e.message),
  );
});

test('model ids as OpenRouter, Hugging Face and SGLang spell them', () => {
  const cases: [string, FamilyId][] = [
    ['moonshotai/kimi-k2-0905', 'kimi-k2'],
    ['moonshotai/kimi-k2.5', 'kimi-k2'],
    ['moonshotai/kimi-k2.5-0127', 'kimi-k2'],
    ['kimi-k2-thinking', 'kimi-k2'],
    ['moonshotai/Kimi-K2-Instruct-0905', 'kimi-k2'],
    ['moonshotai/kimi-k2:free', 'kimi-k2'],
    ['moonshotai/kimi-k2-0905:exacto', 'kimi-k2'],
    ['deepseek/deepseek-chat-v3.1', 'deepseek-v31'],
    ['deepseek/deepseek-chat-v3.1:free', 'deepseek-v31'],
    ['deepseek-ai/DeepSeek-V3.1-Terminus', 'deepseek-v31'],
    ['deepseek-ai/DeepSeek-V3-0324', 'deepseek-v3'],
    ['deepseek/deepseek-chat', 'deepseek-v3'],
    ['deepseek/deepseek-r1-0528', 'deepseek-v3'],
    ['qwen/qwen3-235b-a22b-2507', 'qwen3'],
    ['Qwen/Qwen3-32B', 'qwen3'],
    ['qwen/qwen3-coder', 'qwen3-coder'],
    ['qwen/qwen3-coder:free', 'qwen3-coder'],
    ['Qwen/Qwen3-Coder-480B-A35B-Instruct', 'qwen3-coder'],
    ['z-ai/glm-4.6', 'glm45'],
    ['meta-llama/llama-4-maverick', 'llama4-pythonic'],
    ['google/gemma-4-31b-it', 'gemma4'],
    ['ByteDance-Seed/Seed-OSS-36B-Instruct', 'seed-oss'],
    ['zai-org/GLM-4.5', 'glm45'],
    ['zai-org/GLM-4.5-Air', 'glm45'],
    ['z-ai/glm-4.7', 'glm47'],
    ['z-ai/glm-5-turbo', 'glm47'],
    ['z-ai/glm-5-turbo-20260315', 'glm47'],
    ['deepseek/deepseek-v3.2', 'deepseek-v32'],
    ['deepseek-ai/DeepSeek-V3.2-Exp', 'deepseek-v32'],
    ['deepseek-ai/DeepSeek-V4', 'deepseek-v4'],
    ['mistralai/mistral-small-3.2-24b-instruct', 'mistral'],
    ['meta-llama/llama-3.3-70b-instruct', 'llama3-json'],
    ['NousResearch/Hermes-3-Llama-3.1-70B', 'hermes'],
    ['qwen/qwen3.5-397b-a17b', 'qwen3-coder'],
    ['Qwen/Qwen3.6-35B-A3B', 'qwen3-coder'],
    ['XiaomiMiMo/MiMo-V2-Flash', 'qwen3-coder'],
    ['stepfun-ai/Step-3.5-Flash', 'qwen3-coder'],
    ['nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B', 'qwen3-coder'],
    ['nvidia/Llama-3_3-Nemotron-Super-49B-v1_5', 'nemotron'],
    ['ai21labs/AI21-Jamba-Mini-1.7', 'jamba'],
    ['microsoft/Phi-4-mini-instruct', 'phi4'],
    ['z-ai/glm-4.6', 'glm45'],
    ['meta-llama/llama-4-maverick', 'llama4-pythonic'],
    ['google/gemma-4-31b-it', 'gemma4'],
    ['ByteDance-Seed/Seed-OSS-36B-Instruct', 'seed-oss'],
    ['openai/gpt-oss-120b', 'gpt-oss'],
    ['openai/gpt-oss-20b:free', 'gpt-oss'],
    ['minimax/minimax-m2', 'minimax-m2'],
    ['MiniMaxAI/MiniMax-M2.5', 'minimax-m2'],
    ['minimax/minimax-m3', 'minimax-m3'],
  ];
  for (const [model, id] of cases) {
    const found = detectFamily(model);
    assert.equal(found?.format.id, id, model);
    assert.equal(found?.source, 'model-id');
  }
});

test('unknown or out-of-family model ids match nothing', () => {
  for (const model of ['openai/gpt-4o', 'anthropic/claude-sonnet-4', 'z-ai/glm-4-32b', '']) {
    assert.equal(detectFamily(model), undefined, model);
  }
});

test('without a known model id the markers decide, strongest score wins', () => {
  const texts: [string, FamilyId][] = [
    ['ok<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{}<|tool_call_end|>', 'kimi-k2'],
    ['<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{}<｜tool▁call▁end｜>', 'deepseek-v31'],
    ['<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n```json\n{}\n```<｜tool▁call▁end｜>', 'deepseek-v3'],
    ['<tool_call>\n{"name": "read", "arguments": {}}\n</tool_call>', 'qwen3'],
    ['<tool_call>\n<function=ls>\n<parameter=dirPath>\nsrc\n</parameter>\n</function>\n</tool_call>', 'qwen3-coder'],
    ['<tool_call>ls\n<arg_key>dirPath</arg_key>\n<arg_value>src</arg_value>\n</tool_call>', 'glm45'],
    ['<|channel|>commentary to=read_file <|constrain|>json<|message|>{"path":"a"}', 'gpt-oss'],
    ['<minimax:tool_call>\n<invoke name="ls">\n</invoke>\n</minimax:tool_call>', 'minimax-m2'],
    [']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="ls">\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>', 'minimax-m3'],
  ];
  for (const [text, id] of texts) {
    const found = detectFamily(undefined, text);
    assert.equal(found?.format.id, id, text);
    assert.equal(found?.source, 'markers');
  }
  // An unknown model id falls through to the markers.
  assert.equal(detectFamily('some/finetune', texts[0][0])?.format.id, 'kimi-k2');
  assert.equal(detectFamily(undefined, 'plain prose, no markup'), undefined);
  assert.equal(detectFamily(), undefined);
});

test('the model id wins over markers of another family', () => {
  const found = detectFamily('moonshotai/kimi-k2-0905', '<tool_call>\n{"name": "read", "arguments": {}}\n</tool_call>');
  assert.equal(found?.format.id, 'kimi-k2');
  assert.equal(found?.source, 'model-id');
});
