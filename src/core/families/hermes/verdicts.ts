// Hermes `<tool_call>` JSON (NousResearch Hermes, and any model served with the hermes parser): recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the
// same truncated inputs (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/hermes/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'hermes',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'hermes',
      code: 'vllm-project/vllm vllm/tool_parsers/hermes_tool_parser.py',
      evidence: fixture('vllm', 'hermes'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'hermes',
      code: 'sgl-project/sglang python/sglang/srt/function_call/hermes_detector.py',
      evidence: fixture('sglang', 'hermes'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'hermes',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/base_json_parser.rs',
      evidence: fixture('dynamo', 'hermes'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</tool_call> missing, the JSON body complete',
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
      what: 'a JSON call body and </tool_call> without <tool_call>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the body and the orphan </tool_call> stay in content' },
        sglang: { outcome: 'content', text: 'no call; the body and the orphan </tool_call> stay in content' },
        dynamo: { outcome: 'content', text: 'no call; the body stays in content, the stray </tool_call> is stripped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the JSON arguments',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the raw <tool_call>{… text goes to content' },
        sglang: { outcome: 'content', text: 'no call; the raw <tool_call>{… text goes to content' },
        dynamo: { outcome: 'dropped', text: 'no call; the cut call is suppressed, nothing leaks' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only </tool_call> (body complete)',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'both calls are delivered' },
        sglang: { outcome: 'recovered', text: 'both calls are delivered' },
        dynamo: { outcome: 'partial', text: 'the first call is delivered, the unterminated last one dropped' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all; the whole text, complete calls included, goes to content' },
        sglang: { outcome: 'content', text: 'no call at all; the whole text, complete calls included, goes to content' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
