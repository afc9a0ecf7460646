// DeepSeek V4.1 (the spaced DSML `<｜DSML｜ calls>`): no conformance inputs of its own. Dynamo's deepseek_v4 selector
// accepts both spellings (ai-dynamo/frontend-crates parsers/v2/README.md, paragraph on deepseek_v4), so its verdicts are
// its V4 ones (deepseek-v4.ts, from the fixtures). vLLM's deepseek_v4 parser starts a block only at
// `<｜DSML｜tool_calls>` (`tool_call_start_token`), so the V4.1 spelling is never a call there. SGLang registers
// `deepseekv41` (parser_names.py @ 042de61b); how it treats a cut block is not in the sources read.
import deepseekV4 from './deepseek-v4';
import type { FamilyVerdicts } from './types';

const verdicts: FamilyVerdicts = {
  family: 'deepseek-v41',
  engines: {
    vllm: {
      release: '0.23.0', parser: 'deepseek_v4', code: 'vllm-project/vllm vllm/tool_parsers/deepseekv4_tool_parser.py (tool_call_start_token)',
      evidence: 'vllm-project/vllm vllm/tool_parsers/deepseekv4_tool_parser.py tool_call_start_token, registry @ 0064cc9c', note: 'read from the code; no conformance fixture for V4.1',
    },
    sglang: {
      release: 'main @ 042de61b', parser: 'deepseekv41', code: 'sgl-project/sglang python/sglang/srt/function_call/parser_names.py',
      evidence: 'sgl-project/sglang python/sglang/srt/function_call/parser_names.py @ 042de61b', note: 'registered; its truncation behaviour is not in the sources read',
    },
    dynamo: { ...deepseekV4.engines.dynamo, note: 'the deepseek_v4 selector accepts the V4.1 spelling (parsers/v2/README.md); verdicts measured on V4 inputs' },
  },
  cases: deepseekV4.cases.map((c) => ({
    ...c,
    verdicts: {
      vllm: { outcome: 'content', text: 'no call: the spaced <｜DSML｜ calls> block is not its start token, so it stays in content' },
      sglang: { outcome: 'unknown', text: 'deepseekv41 is registered; what it does with this cut is not established' },
      dynamo: c.verdicts.dynamo,
    },
  })),
};

export default verdicts;
