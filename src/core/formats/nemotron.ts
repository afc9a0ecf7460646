/**
 * NVIDIA Nemotron (Llama-based DeciLM v1/v2, 'nemotron'):
 *
 *   CONTENT<TOOLCALL>[{"name": "NAME", "arguments": {…}}, …]</TOOLCALL><|eot_id|>
 *
 * Dynamo conformance fixtures `inputs/nemotron_deci` (model label "Nemotron (DeciLM) v1/v2"). Nemotron Nano v3 writes
 * the Qwen3-Coder XML instead (qwen3-coder.ts).
 */
import { modelKey, parseJsonCalls, renderJsonCalls, scoreText, type JsonCallsGrammar } from './base';
import type { ModelFormat } from './types';

const OPEN = '<TOOLCALL>';
const CLOSE = '</TOOLCALL>';
const EOT = '<|eot_id|>';
const TOOL_MARKERS = [OPEN, CLOSE];
const MARKERS = [CLOSE, EOT, OPEN, '<think>', '</think>', '<|start_header_id|>', '<|end_header_id|>'];

const GRAMMAR: JsonCallsGrammar = {
  family: 'nemotron',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: OPEN,
  close: CLOSE,
  list: 'array',
  argKeys: ['arguments', 'parameters'],
  ends: [EOT],
  implicitThink: false,
};

export const nemotron: ModelFormat = {
  id: 'nemotron',
  displayName: 'Nemotron (<TOOLCALL>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /nemotron/.test(modelKey(modelId)) && !/nemotron-3-nano|nemotron-nano-3/.test(modelKey(modelId)),
  detectText: (text) => scoreText(text, [[/<TOOLCALL>\s*\[/, 10], [CLOSE, 7]]),
  render: (m, opts) => renderJsonCalls(GRAMMAR, m, opts),
  parse: (text) => parseJsonCalls(GRAMMAR, text),
};
