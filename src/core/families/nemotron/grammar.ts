/**
 * NVIDIA Nemotron (Llama-based DeciLM v1/v2, 'nemotron'):
 *
 *   CONTENT<TOOLCALL>[{"name": "NAME", "arguments": {…}}, …]</TOOLCALL><|eot_id|>
 *
 * Dynamo conformance fixtures `inputs/nemotron_deci` (model label "Nemotron (DeciLM) v1/v2"). Nemotron Nano v3 writes
 * the Qwen3-Coder XML instead (qwen3-coder/grammar.ts). With thinking on, the Nemotron Nano v2 prompt ends with
 * `<think>\n`, so the completion starts inside the reasoning and closes it with a bare `</think>` (ggml-org/llama.cpp
 * tests/test-chat.cpp "NVIDIA-Nemotron-Nano-v2" @ 0042e2079d3428ba7af410df553202aa7fdf8d7a).
 */
import { modelKey, taggedListFormat } from '../shared';

export const nemotron = taggedListFormat({
  id: 'nemotron',
  displayName: 'Nemotron (<TOOLCALL>)',
  open: '<TOOLCALL>',
  close: '</TOOLCALL>',
  end: '<|eot_id|>',
  others: ['<think>', '</think>', '<|start_header_id|>', '<|end_header_id|>'],
  implicitThink: true,
  matchesModel: (modelId) => /nemotron/.test(modelKey(modelId)) && !/nemotron-3-nano|nemotron-nano-3/.test(modelKey(modelId)),
});
