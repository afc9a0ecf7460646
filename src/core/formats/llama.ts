/**
 * Llama 3.x / 4 JSON tool calls ('llama3-json'):
 *
 *   CONTENT<|python_tag|>{"name": "NAME", "parameters": {…}};{"name": …}<|eom_id|>
 *
 * vLLM `llama3_json` / `llama4_json` (`vllm/tool_parsers/llama_tool_parser.py`): `arguments` or `parameters`, calls
 * separated by `;`, `<|python_tag|>` optional (a turn that starts with `{"name"` is a call too). There is no closer: a
 * call object whose `}` never came is cut off.
 */
import { modelKey, parseJsonCalls, renderJsonCalls, scoreText, type JsonCallsGrammar } from './base';
import type { ModelFormat } from './types';

const OPEN = '<|python_tag|>';
const EOM = '<|eom_id|>';
const EOT = '<|eot_id|>';
const TOOL_MARKERS = [OPEN];
const MARKERS = [EOM, EOT, OPEN, '<|start_header_id|>', '<|end_header_id|>', '<|begin_of_text|>', '<think>', '</think>'];

const GRAMMAR: JsonCallsGrammar = {
  family: 'llama3-json',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: OPEN,
  list: 'semicolon',
  argKeys: ['parameters', 'arguments'],
  ends: [EOM, EOT],
  implicitThink: false,
  bare: true,
};

export const llama3Json: ModelFormat = {
  id: 'llama3-json',
  displayName: 'Llama 3 / 4 (JSON tool calls)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => {
    const key = modelKey(modelId);
    return /llama-?3|llama-?4/.test(key) && !/nemotron|hermes/.test(key) && !/pythonic/.test(key);
  },
  detectText: (text) =>
    scoreText(text, [
      [/<\|python_tag\|>\s*\{/, 10],
      [/^\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"(?:parameters|arguments)"/, 4],
      [EOM, 1],
    ]),
  render: (m, opts) => renderJsonCalls(GRAMMAR, m, opts),
  parse: (text) => parseJsonCalls(GRAMMAR, text),
};
