// DeepSeek V4.1 (the spaced DSML `<｜DSML｜ calls>`): no conformance inputs of its own. Dynamo's deepseek_v4 selector
// accepts both spellings (ai-dynamo/frontend-crates parsers/v2/README.md, paragraph on deepseek_v4), so its verdicts are
// its V4 ones (deepseek-v4.ts, from the fixtures). vLLM's deepseek_v4 parser starts a block only at
// `<｜DSML｜tool_calls>` (`tool_call_start_token`), so the V4.1 spelling is never a call there. SGLang registers
// `deepseekv41` (parser_names.py @ 042de61b), and its DeepSeekV41Detector (deepseekv41_detector.py @ 03783c13) is
// DeepSeekV32Detector with the spaced tag names and the structural tag only: the parsing is V3.2's. Its verdicts are
// therefore V3.2's as recorded for SGLang 0.5.12.post1 (deepseek-v32.ts), said as inferred, not measured on V4.1.
import deepseekV32 from '../deepseek-v32/verdicts';
import deepseekV4 from '../deepseek-v4/verdicts';
import type { EngineVerdict, FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'deepseek-v41',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'deepseek_v4',
      code: 'vllm-project/vllm vllm/tool_parsers/deepseekv4_tool_parser.py (tool_call_start_token)',
      evidence: 'vllm-project/vllm vllm/tool_parsers/deepseekv4_tool_parser.py tool_call_start_token, registry @ 0064cc9c',
      note: 'read from the code; no conformance fixture for V4.1',
    },
    sglang: {
      release: 'main @ 042de61b',
      parser: 'deepseekv41',
      code: 'sgl-project/sglang python/sglang/srt/function_call/parser_names.py',
      evidence:
        'sgl-project/sglang python/sglang/srt/function_call/parser_names.py @ 042de61b; deepseekv41_detector.py @ 03783c13 (DeepSeekV41Detector extends DeepSeekV32Detector)',
      note: 'inferred: the V3.2 parser with spaced tag names, so the V3.2 verdicts recorded for 0.5.12.post1',
    },
    dynamo: {
      ...deepseekV4.engines.dynamo,
      note: 'the deepseek_v4 selector accepts the V4.1 spelling (parsers/v2/README.md); verdicts measured on V4 inputs',
    },
  },
  cases: deepseekV4.cases.map((c) => ({
    ...c,
    verdicts: {
      vllm: { outcome: 'content', text: 'no call: the spaced <｜DSML｜ calls> block is not its start token, so it stays in content' },
      sglang: v32Sglang(c.id),
      dynamo: c.verdicts.dynamo,
    },
  })),
};

/** SGLang's V3.2 verdict on the same case, said as inferred (its V4.1 detector is the V3.2 parser, spaced). */
function v32Sglang(id: string): EngineVerdict {
  const v32 = deepseekV32.cases.find((c) => c.id === id)?.verdicts.sglang;
  if (!v32) return { outcome: 'unknown', text: 'no V3.2 verdict for this case to carry over' };
  return { outcome: v32.outcome, text: `${v32.text} (inferred from its V3.2 parser, which the V4.1 detector extends)` };
}

export default verdicts;
