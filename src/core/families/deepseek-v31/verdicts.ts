// DeepSeek V3.1: recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs
// (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/deepseek_v3_1/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import deepseekV3 from '../deepseek-v3/verdicts';
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

/** How the V3.1 inputs differ where V3 writes a fenced body. */
const WHAT: Record<string, string> = {
  '5.c': 'output stopped inside the JSON arguments',
  '5.d': 'the last of several calls lacks only <｜tool▁call▁end｜> (body complete)',
};

const verdicts: FamilyVerdicts = {
  family: 'deepseek-v31',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'deepseek_v31',
      code: 'vllm-project/vllm vllm/tool_parsers/deepseekv31_tool_parser.py',
      evidence: fixture('vllm', 'deepseek_v3_1'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'deepseekv31',
      code: 'sgl-project/sglang python/sglang/srt/function_call/deepseekv31_detector.py',
      evidence: fixture('sglang', 'deepseek_v3_1'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'deepseek_v3_1',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/deepseek_v3_1_parser.rs',
      evidence: fixture('dynamo', 'deepseek_v3_1'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<｜tool▁calls▁end｜> missing, the call closed',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the complete call is delivered' },
        sglang: { outcome: 'recovered', text: 'the complete call is delivered' },
        dynamo: { outcome: 'recovered', text: 'the complete call is delivered' },
      },
    },
    // 5.b–5.e: the fixtures record the same verdicts as for V3 (deepseek-v3.ts); only the inputs' spelling differs.
    ...deepseekV3.cases.filter((c) => c.id !== '5.a').map((c) => ({ ...c, what: WHAT[c.id] ?? c.what })),
  ],
};

export default verdicts;
