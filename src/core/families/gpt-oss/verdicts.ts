// gpt-oss (Harmony): recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated
// inputs (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/harmony/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
// Case 5.b there (a complete call without the <|start|>assistant prefix) is healthy output to Tokenscope and has no rule.
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'gpt-oss',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'openai',
      code: 'vllm-project/vllm vllm/tool_parsers/openai_tool_parser.py',
      evidence: fixture('vllm', 'harmony'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'gpt-oss',
      code: 'sgl-project/sglang python/sglang/srt/function_call/gpt_oss_detector.py',
      evidence: fixture('sglang', 'harmony'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'harmony',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/harmony/harmony_parser.rs',
      evidence: fixture('dynamo', 'harmony'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<|call|> missing after a complete JSON message',
      verdicts: {
        vllm: { outcome: 'dropped', text: 'no call, empty content' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the JSON message',
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
      what: 'the last of several calls lacks only <|call|> (body complete)',
      verdicts: {
        vllm: {
          outcome: 'mixed',
          text: 'the first call is delivered; the second is left in content with its markers stripped ("commentary to=functions.… json{…}")',
        },
        sglang: { outcome: 'partial', text: 'the first call is delivered, the incomplete envelope stripped' },
        dynamo: { outcome: 'partial', text: 'the first call is delivered, the incomplete envelope stripped' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'mixed', text: 'the first call is delivered; the cut one is left in content with its markers stripped' },
        sglang: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
