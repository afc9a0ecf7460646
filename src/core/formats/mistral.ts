/**
 * Mistral ('mistral'):
 *
 *   [THINK]REASONING[/THINK]CONTENT[TOOL_CALLS][{"name": "NAME", "arguments": {…}}, …]</s>     (pre-v11 tokenizer)
 *   CONTENT[TOOL_CALLS]NAME[ARGS]{…}</s>                                                     (v11+ tokenizer)
 *
 * vLLM `vllm/tool_parsers/mistral_tool_parser.py` (`bot_token`, `_is_pre_v11_tokeniser`, `[THINK]` handling). The wire
 * form has no closer; the Dynamo conformance fixtures write `[/TOOL_CALLS]`, which is read when present. Call ids
 * (9 alphanumerics) are the server's, not in the text.
 */
import { modelKey, parseJsonCalls, renderJsonCalls, scoreText, type JsonCallsGrammar } from './base';
import type { ModelFormat } from './types';

const OPEN = '[TOOL_CALLS]';
const CLOSE = '[/TOOL_CALLS]';
const ARGS = '[ARGS]';
const THINK = { open: '[THINK]', close: '[/THINK]' };
const EOS = '</s>';

const TOOL_MARKERS = [OPEN, CLOSE, ARGS, '[CALL_ID]'];
const MARKERS = [CLOSE, THINK.close, ...TOOL_MARKERS.filter((m) => m !== CLOSE), THINK.open, EOS, '[INST]', '[/INST]', '[AVAILABLE_TOOLS]', '[TOOL_RESULTS]'];

const GRAMMAR: JsonCallsGrammar = {
  family: 'mistral',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: OPEN,
  close: CLOSE,
  closeOptional: true,
  list: 'array',
  argKeys: ['arguments', 'parameters'],
  ends: [EOS],
  implicitThink: false,
  think: THINK,
  named: ARGS,
};

export const mistral: ModelFormat = {
  id: 'mistral',
  displayName: 'Mistral ([TOOL_CALLS])',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /mistral|mixtral|magistral|devstral|codestral|ministral|pixtral/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [OPEN, 10],
      [ARGS, 4],
      [CLOSE, 7],
      [THINK.close, 1],
    ]),
  render: (m, opts) => renderJsonCalls({ ...GRAMMAR, close: undefined }, m, opts),
  parse: (text) => parseJsonCalls(GRAMMAR, text),
};
