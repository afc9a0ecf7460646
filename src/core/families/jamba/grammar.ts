/**
 * AI21 Jamba ('jamba'):
 *
 *   CONTENT<tool_calls>[{"name": "NAME", "arguments": {…}}, …]</tool_calls><|eom|>
 *
 * vLLM `jamba` tool parser; Dynamo conformance fixtures `inputs/jamba` (model label "AI21 Jamba").
 */
import { modelKey, taggedListFormat } from '../shared';

export const jamba = taggedListFormat({
  id: 'jamba',
  displayName: 'AI21 Jamba (<tool_calls>)',
  open: '<tool_calls>',
  close: '</tool_calls>',
  end: '<|eom|>',
  others: ['<|bom|>', '<think>', '</think>'],
  matchesModel: (modelId) => /jamba/.test(modelKey(modelId)),
});
