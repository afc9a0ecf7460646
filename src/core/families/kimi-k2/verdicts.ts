// Kimi K2: recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs
// (fixtures and inputs: ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/kimi_k2/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'kimi-k2',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'kimi_k2',
      code: 'vllm-project/vllm vllm/tool_parsers/kimi_k2_tool_parser.py',
      evidence: fixture('vllm', 'kimi_k2'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'kimi_k2',
      code: 'sgl-project/sglang python/sglang/srt/function_call/kimik2_detector.py',
      evidence: fixture('sglang', 'kimi_k2'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'kimi_k2',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/xml/kimi_k2_parser.rs',
      evidence: fixture('dynamo', 'kimi_k2'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<|tool_calls_section_end|> missing, the call complete (max_tokens)',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the complete call is delivered' },
        sglang: { outcome: 'recovered', text: 'the complete call is delivered' },
        dynamo: { outcome: 'recovered', text: 'the complete call is delivered' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a complete call and <|tool_calls_section_end|> without <|tool_calls_section_begin|>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the markers stay in content' },
        sglang: { outcome: 'content', text: 'no call; the markers stay in content' },
        dynamo: { outcome: 'recovered', text: 'the bare call is recovered, the orphan section end stripped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
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
      what: 'the last of several calls lacks only <|tool_call_end|> (its body complete)',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the first call is delivered, the last one dropped; the prose stays' },
        sglang: { outcome: 'partial', text: 'the first call is delivered, the last one dropped; the prose stays' },
        dynamo: { outcome: 'partial', text: 'the first call is delivered, the last one dropped; the prose stays' },
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
