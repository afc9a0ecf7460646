/**
 * Hermes-style `<tool_call>` JSON as the NousResearch Hermes models (and many fine-tunes) write it ('hermes'):
 *
 *   <think>REASONING</think>CONTENT\n<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call><|im_end|>
 *
 * The grammar is Qwen3's (qwen3/grammar.ts: vLLM `hermes_tool_parser.py`, SGLang `qwen25`/`hermes` detectors); Hermes 3 on
 * Llama 3.1 ends turns with `<|eot_id|>`, Hermes 2 Pro with ChatML's `<|im_end|>` (the one written here).
 */
import { modelKey, scoreText } from '../shared';
import { qwen3 } from '../qwen3/grammar';
import type { ModelFormat } from '../shared/format';

export const hermes: ModelFormat = {
  ...qwen3,
  id: 'hermes',
  displayName: 'Hermes (<tool_call> JSON)',
  matchesModel: (modelId) => /hermes|nous/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [/<tool_call>\s*\{/, 9],
      [/"name"\s*:\s*"[^"]*"\s*,\s*"arguments"/, 5],
      ['</tool_call>', 3],
    ]),
  parse: (text) => ({ ...qwen3.parse(text), family: 'hermes' }),
};
