/**
 * ByteDance Seed-OSS ('seed-oss'):
 *
 *   <seed:think>REASONING</seed:think>CONTENT\n<seed:tool_call>\n<function=NAME>\n<parameter=K>V</parameter>\n</function>\n</seed:tool_call><seed:eos>
 *
 * vLLM `vllm/tool_parsers/seed_oss_tool_parser.py` ("Adapted from qwen3coder xml parser": constants, `convert_param_value`);
 * `<seed:tool_call>` / `</seed:tool_call>` are single vocabulary entries. Reasoning may hold `<seed:cot_budget_reflect>`
 * budget notes (no stray markers there); a call quoted inside the reasoning is reasoning, not a call (vLLM test
 * `tool_call_unlimited_thinking_budget`: the parser looks for calls only after `</seed:think>`), and when the turn then
 * makes that call the markup-in-reasoning rule tells it as information. Arguments are canonical compact JSON, as for
 * Qwen3-Coder. A reasoning block left open runs to the end of the turn (vLLM's seed_oss reasoning parser has no implicit
 * end), so calls inside it are not calls.
 */
import { renderParams, renderStart, modelKey, parseTurn, scoreText } from '../shared';
import { FUNCTION_CLOSE, FUNCTION_OPEN, PARAM_CLOSE, PARAM_OPEN, functionXmlGrammar } from '../qwen3-coder/grammar';
import type { ModelFormat } from '../shared/format';

const CALL_OPEN = '<seed:tool_call>';
const CALL_CLOSE = '</seed:tool_call>';
const BUDGET = ['<seed:cot_budget_reflect>', '</seed:cot_budget_reflect>'];
// The budget notes belong inside the reasoning (vLLM tests `tool_call_512_thinkg_budget`, `tool_call_0_thinking_budget`).
const THINK = { open: '<seed:think>', close: '</seed:think>', inner: BUDGET };
const EOS = '<seed:eos>';
const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE];
const MARKERS = [
  PARAM_CLOSE,
  FUNCTION_CLOSE,
  CALL_CLOSE,
  THINK.close,
  EOS,
  CALL_OPEN,
  THINK.open,
  FUNCTION_OPEN,
  PARAM_OPEN,
  '<seed:bos>',
  ...BUDGET,
];

const GRAMMAR = functionXmlGrammar({
  family: 'seed-oss',
  callOpen: CALL_OPEN,
  callClose: CALL_CLOSE,
  ends: [EOS],
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  think: THINK,
  rawValues: true,
});

export const seedOss: ModelFormat = {
  id: 'seed-oss',
  displayName: 'Seed-OSS (<seed:tool_call>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  reasoningMarkers: BUDGET,
  matchesModel: (modelId) => /seed-?oss/.test(modelKey(modelId)),
  // Seed's own markers outweigh the `<function=`/`<parameter=` XML it shares with Qwen3-Coder (whose score for that
  // XML alone tops at 23), so a Seed-OSS turn is read as Seed-OSS without a model id.
  detectText: (text) =>
    scoreText(text, [
      [CALL_OPEN, 24],
      [CALL_CLOSE, 16],
      [THINK.open, 24],
      [THINK.close, 12],
      [BUDGET[0], 6],
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
