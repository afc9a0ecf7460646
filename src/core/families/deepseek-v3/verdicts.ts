// DeepSeek V3 / R1: recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs
// (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/deepseek_v3/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'deepseek-v3',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'deepseek_v3',
      code: 'vllm-project/vllm vllm/tool_parsers/deepseekv3_tool_parser.py',
      evidence: fixture('vllm', 'deepseek_v3'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'deepseekv3',
      code: 'sgl-project/sglang python/sglang/srt/function_call/deepseekv3_detector.py',
      evidence: fixture('sglang', 'deepseek_v3'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'deepseek_v3',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/deepseek_v3_parser.rs',
      evidence: fixture('dynamo', 'deepseek_v3'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<｜tool▁call▁end｜> and <｜tool▁calls▁end｜> missing after a complete fenced body',
      verdicts: {
        vllm: { outcome: 'dropped', text: 'no call, empty content' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a complete call and <｜tool▁calls▁end｜> without <｜tool▁calls▁begin｜>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the <｜tool▁call…｜> envelope stays in content' },
        sglang: { outcome: 'content', text: 'no call; the <｜tool▁call…｜> envelope stays in content' },
        dynamo: { outcome: 'recovered', text: 'the call is recovered, the markers stripped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the fenced JSON arguments',
      verdicts: {
        vllm: { outcome: 'dropped', text: 'no call, empty content' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only its end markers (body complete)',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        sglang: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        dynamo: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the complete calls are delivered, the cut one dropped' },
        sglang: { outcome: 'partial', text: 'the complete calls are delivered, the cut one dropped' },
        dynamo: { outcome: 'partial', text: 'the complete calls are delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
