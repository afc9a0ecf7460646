/**
 * Phi-4 mini ('phi4'):
 *
 *   CONTENTfunctools[{"name": "NAME", "arguments": {…}}, …]<|end|>
 *
 * vLLM `phi4_mini_json` tool parser (`functools[` prefix); Dynamo conformance fixtures `inputs/phi4`. There is no
 * closer: the list's `]` ends the calls.
 */
import { modelKey, parseJsonCalls, renderJsonCalls, scoreText, type JsonCallsGrammar } from '../shared';
import type { ModelFormat } from '../shared/format';

const OPEN = 'functools';
const END = '<|end|>';
const TOOL_MARKERS = [OPEN];
const MARKERS = [END, '<|assistant|>', '<|user|>', '<|tool|>', '<|/tool|>', '<|tool_call|>', '<|/tool_call|>', '<think>', '</think>'];

const GRAMMAR: JsonCallsGrammar = {
  family: 'phi4',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: OPEN,
  list: 'array',
  argKeys: ['arguments', 'parameters'],
  ends: [END],
  implicitThink: false,
};

export const phi4: ModelFormat = {
  id: 'phi4',
  displayName: 'Phi-4 (functools)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /phi-?4/.test(modelKey(modelId)),
  detectText: (text) => scoreText(text, [[/functools\s*[[{]/, 10]]),
  render: (m, opts) => renderJsonCalls(GRAMMAR, m, opts),
  parse: (text) => parseJsonCalls(GRAMMAR, text),
};
