// Gemma 4 (`<|tool_call>call:NAME{…}<tool_call|>`, `<|"|>` strings): recorded behaviour of vLLM 0.23.0, SGLang
// 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs (ai-dynamo/frontend-crates
// conformance/toolcalling/fixtures-batch-v1/*/gemma4/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'gemma4',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'gemma4',
      code: 'vllm-project/vllm vllm/tool_parsers/gemma4_tool_parser.py',
      evidence: fixture('vllm', 'gemma4'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'gemma4',
      code: 'sgl-project/sglang python/sglang/srt/function_call/gemma4_detector.py',
      evidence: fixture('sglang', 'gemma4'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'gemma4',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/gemma4/parser.rs',
      evidence: fixture('dynamo', 'gemma4'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<tool_call|> missing after a complete call body',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the <|tool_call>… markup stays in content' },
        sglang: { outcome: 'content', text: 'no call; the <|tool_call>… markup stays in content' },
        dynamo: { outcome: 'recovered', text: 'the complete call is recovered' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call body and <tool_call|> without <|tool_call>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the markup stays in content' },
        sglang: { outcome: 'content', text: 'no call; the markup stays in content' },
        dynamo: { outcome: 'recovered', text: 'the call is recovered without its opener' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside an argument value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the cut markup stays in content' },
        sglang: { outcome: 'content', text: 'no call; the cut markup stays in content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only <tool_call|> (body complete)',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        sglang: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        dynamo: { outcome: 'recovered', text: 'both calls are delivered' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        sglang: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
