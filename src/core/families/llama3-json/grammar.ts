/**
 * Llama 3.x JSON tool calls ('llama3-json'; Llama 4 writes them too, read by llama4-pythonic/grammar.ts):
 *
 *   CONTENT<|python_tag|>{"name": "NAME", "parameters": {…}};{"name": …}<|eom_id|>
 *
 * vLLM `llama3_json` / `llama4_json` (`vllm/tool_parsers/llama_tool_parser.py`): `arguments` or `parameters`, calls
 * separated by `;`, `<|python_tag|>` optional (a turn that starts with `{"name"` is a call too). There is no closer: a
 * call object whose `}` never came is cut off.
 */
import { modelKey, parseJsonCalls, renderJsonCalls, scoreText, type JsonCallsGrammar } from '../shared';
import type { ModelFormat } from '../shared/format';

export const PYTHON_TAG = '<|python_tag|>';
const OPEN = PYTHON_TAG;
const EOM = '<|eom_id|>';
const EOT = '<|eot_id|>';
const TOOL_MARKERS = [OPEN];
const MARKERS = [EOM, EOT, OPEN, '<|start_header_id|>', '<|end_header_id|>', '<|begin_of_text|>', '<think>', '</think>'];

export const LLAMA_JSON: JsonCallsGrammar = {
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
  markerless: true,
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => {
    const key = modelKey(modelId);
    // Llama 4 ids go to llama4-pythonic, which reads this JSON form too.
    return /llama-?3/.test(key) && !/nemotron|hermes/.test(key);
  },
  detectText: (text) =>
    scoreText(text, [
      [/<\|python_tag\|>\s*\{/, 10],
      [/^\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"(?:parameters|arguments)"/, 4],
      [EOM, 1],
    ]),
  render: (m, opts) => renderJsonCalls(LLAMA_JSON, m, opts),
  parse: (text) => parseJsonCalls(LLAMA_JSON, text),
};
