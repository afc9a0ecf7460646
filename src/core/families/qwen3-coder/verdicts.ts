// Qwen3-Coder XML: recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs
// (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/qwen3_coder/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'qwen3-coder',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'qwen3_coder',
      code: 'vllm-project/vllm vllm/tool_parsers/qwen3coder_tool_parser.py',
      evidence: fixture('vllm', 'qwen3_coder'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'qwen3_coder',
      code: 'sgl-project/sglang python/sglang/srt/function_call/qwen3_coder_detector.py',
      evidence: fixture('sglang', 'qwen3_coder'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'qwen3_coder',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/xml/parser.rs',
      evidence: fixture('dynamo', 'qwen3_coder'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</tool_call> missing after a complete <function=…>…</function>',
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
      what: 'a complete <function=…> body and </tool_call> without <tool_call>',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the call is recovered without its opener' },
        sglang: { outcome: 'content', text: 'no call; the detector needs <tool_call>, so the whole text goes to content' },
        dynamo: { outcome: 'recovered', text: 'the call is recovered without its opener' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter value',
      verdicts: {
        vllm: { outcome: 'cut-call-delivered', text: 'the call is delivered with the cut value ("NY" for "NYC")' },
        sglang: { outcome: 'cut-call-delivered', text: 'the call is delivered with the cut value ("NY" for "NYC")' },
        dynamo: { outcome: 'dropped', text: 'no call; the truncation guard drops it' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only </tool_call> (body complete)',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'both calls are delivered' },
        sglang: { outcome: 'partial', text: 'the first call is delivered; the unterminated last one is silently dropped' },
        dynamo: { outcome: 'recovered', text: 'both calls are delivered' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'cut-call-delivered', text: 'both calls are delivered, the last with its cut value' },
        sglang: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
