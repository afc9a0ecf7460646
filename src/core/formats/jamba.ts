/**
 * AI21 Jamba ('jamba'):
 *
 *   CONTENT<tool_calls>[{"name": "NAME", "arguments": {…}}, …]</tool_calls><|eom|>
 *
 * vLLM `jamba` tool parser; Dynamo conformance fixtures `inputs/jamba` (model label "AI21 Jamba").
 */
import { modelKey, parseJsonCalls, renderJsonCalls, scoreText, type JsonCallsGrammar } from './base';
import type { ModelFormat } from './types';

const OPEN = '<tool_calls>';
const CLOSE = '</tool_calls>';
const EOM = '<|eom|>';
const TOOL_MARKERS = [OPEN, CLOSE];
const MARKERS = [CLOSE, EOM, OPEN, '<|bom|>', '<think>', '</think>'];

const GRAMMAR: JsonCallsGrammar = {
  family: 'jamba',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: OPEN,
  close: CLOSE,
  list: 'array',
  argKeys: ['arguments', 'parameters'],
  ends: [EOM],
  implicitThink: false,
};

export const jamba: ModelFormat = {
  id: 'jamba',
  displayName: 'AI21 Jamba (<tool_calls>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /jamba/.test(modelKey(modelId)),
  detectText: (text) => scoreText(text, [[/<tool_calls>\s*\[/, 10], [CLOSE, 7]]),
  render: (m, opts) => renderJsonCalls(GRAMMAR, m, opts),
  parse: (text) => parseJsonCalls(GRAMMAR, text),
};
