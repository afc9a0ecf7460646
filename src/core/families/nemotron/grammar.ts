/**
 * NVIDIA Nemotron (Llama-based DeciLM v1/v2, 'nemotron'):
 *
 *   CONTENT<TOOLCALL>[{"name": "NAME", "arguments": {…}}, …]</TOOLCALL><|eot_id|>
 *
 * Dynamo conformance fixtures `inputs/nemotron_deci` (model label "Nemotron (DeciLM) v1/v2"). Nemotron Nano v3 writes
 * the Qwen3-Coder XML instead (qwen3-coder/grammar.ts).
 */
import { modelKey, taggedListFormat } from '../shared';

export const nemotron = taggedListFormat({
  id: 'nemotron',
  displayName: 'Nemotron (<TOOLCALL>)',
  open: '<TOOLCALL>',
  close: '</TOOLCALL>',
  end: '<|eot_id|>',
  others: ['<think>', '</think>', '<|start_header_id|>', '<|end_header_id|>'],
  matchesModel: (modelId) => /nemotron/.test(modelKey(modelId)) && !/nemotron-3-nano|nemotron-nano-3/.test(modelKey(modelId)),
});
