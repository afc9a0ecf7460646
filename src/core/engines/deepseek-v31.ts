// DeepSeek V3.1: recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs
// (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/deepseek_v3_1/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from './types';

const verdicts: FamilyVerdicts = {
  family: 'deepseek-v31',
  engines: {
    vllm: { release: '0.23.0', parser: 'deepseek_v31', code: 'vllm-project/vllm vllm/tool_parsers/deepseekv31_tool_parser.py', evidence: fixture('vllm', 'deepseek_v3_1') },
    sglang: { release: '0.5.12.post1', parser: 'deepseekv31', code: 'sgl-project/sglang python/sglang/srt/function_call/deepseekv31_detector.py', evidence: fixture('sglang', 'deepseek_v3_1') },
    dynamo: { release: '3.0.0', parser: 'deepseek_v3_1', code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/deepseek_v3_1_parser.rs', evidence: fixture('dynamo', 'deepseek_v3_1') },
  },
  cases: [
    {
      id: '5.a', class: 'unclosed-complete', calls: 'single', what: '<｜tool▁calls▁end｜> missing, the call closed',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the complete call is delivered' },
        sglang: { outcome: 'recovered', text: 'the complete call is delivered' },
        dynamo: { outcome: 'recovered', text: 'the complete call is delivered' },
      },
    },
    {
      id: '5.b', class: 'orphan-close', calls: 'single', what: 'a complete call and <｜tool▁calls▁end｜> without <｜tool▁calls▁begin｜>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the <｜tool▁call…｜> envelope stays in content' },
        sglang: { outcome: 'content', text: 'no call; the <｜tool▁call…｜> envelope stays in content' },
        dynamo: { outcome: 'recovered', text: 'the call is recovered, the markers stripped' },
      },
    },
    {
      id: '5.c', class: 'unclosed-truncated', calls: 'single', what: 'output stopped inside the JSON arguments',
      verdicts: {
        vllm: { outcome: 'dropped', text: 'no call, empty content' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d', class: 'unclosed-complete', calls: 'multi', what: 'the last of several calls lacks only <｜tool▁call▁end｜> (body complete)',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        sglang: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        dynamo: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
      },
    },
    {
      id: '5.e', class: 'unclosed-truncated', calls: 'multi', what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the complete calls are delivered, the cut one dropped' },
        sglang: { outcome: 'partial', text: 'the complete calls are delivered, the cut one dropped' },
        dynamo: { outcome: 'partial', text: 'the complete calls are delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
