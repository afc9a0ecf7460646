/**
 * ByteDance Seed-OSS ('seed-oss'):
 *
 *   <seed:think>REASONING</seed:think>CONTENT\n<seed:tool_call>\n<function=NAME>\n<parameter=K>V</parameter>\n</function>\n</seed:tool_call><seed:eos>
 *
 * vLLM `vllm/tool_parsers/seed_oss_tool_parser.py` ("Adapted from qwen3coder xml parser": constants, `convert_param_value`);
 * `<seed:tool_call>` / `</seed:tool_call>` are single vocabulary entries. Reasoning may hold `<seed:cot_budget_reflect>`
 * budget notes; a call quoted inside the reasoning is reasoning, not a call (vLLM test
 * `tool_call_unlimited_thinking_budget`). Arguments are canonical compact JSON, as for Qwen3-Coder.
 */
import { renderParams, renderStart, modelKey, parseTurn, scoreText } from './base';
import { FUNCTION_CLOSE, FUNCTION_OPEN, PARAM_CLOSE, PARAM_OPEN, functionXmlGrammar } from './qwen3-coder';
import type { ModelFormat } from './types';

const CALL_OPEN = '<seed:tool_call>';
const CALL_CLOSE = '</seed:tool_call>';
const THINK = { open: '<seed:think>', close: '</seed:think>' };
const EOS = '<seed:eos>';
const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE];
const MARKERS = [PARAM_CLOSE, FUNCTION_CLOSE, CALL_CLOSE, THINK.close, EOS, CALL_OPEN, THINK.open, FUNCTION_OPEN, PARAM_OPEN, '<seed:bos>', '<seed:cot_budget_reflect>', '</seed:cot_budget_reflect>'];

const GRAMMAR = functionXmlGrammar({ family: 'seed-oss', callOpen: CALL_OPEN, callClose: CALL_CLOSE, ends: [EOS], markers: MARKERS, toolMarkers: TOOL_MARKERS, think: THINK, rawValues: true });

export const seedOss: ModelFormat = {
  id: 'seed-oss',
  displayName: 'Seed-OSS (<seed:tool_call>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /seed-?oss/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [CALL_OPEN, 12],
      [CALL_CLOSE, 8],
      [THINK.open, 6],
      [EOS, 2],
    ]),
  render: (m, opts) => {
    const { out, close, hasContent } = renderStart(m, opts, { newlines: false, tags: THINK });
    m.toolCalls.forEach((c, i) => {
      if (hasContent || i > 0) out.put('\n');
      out.wrap(
        'call',
        () => {
          out.put(`${CALL_OPEN}\n${FUNCTION_OPEN}`).put(c.name, 'call-name', i).put('>\n');
          renderParams(out, i, c.arguments, (k, v) => `${PARAM_OPEN}${k}>${v}${PARAM_CLOSE}`);
          if (close.call(i)) out.put(`${FUNCTION_CLOSE}\n${CALL_CLOSE}`);
        },
        i,
      );
    });
    if (close.turn) out.put(EOS, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(GRAMMAR, text),
};
