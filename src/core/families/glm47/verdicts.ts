// GLM-4.7 / GLM-5.x: recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated
// inputs (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/glm47/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'glm47',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'glm47',
      code: 'vllm-project/vllm vllm/tool_parsers/glm47_moe_tool_parser.py',
      evidence: fixture('vllm', 'glm47'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'glm47',
      code: 'sgl-project/sglang python/sglang/srt/function_call/glm47_moe_detector.py',
      evidence: fixture('sglang', 'glm47'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'glm47',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/xml/glm47_parser.rs',
      evidence: fixture('dynamo', 'glm47'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</tool_call> missing after a complete <arg_value>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the <tool_call>… markup stays in content' },
        sglang: { outcome: 'content', text: 'no call; the <tool_call>… markup stays in content' },
        dynamo: { outcome: 'dropped', text: 'no call; nothing leaks' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call body and </tool_call> without <tool_call>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the <arg_key>/<arg_value>/</tool_call> markup stays in content' },
        sglang: { outcome: 'content', text: 'no call; the <arg_key>/<arg_value>/</tool_call> markup stays in content' },
        dynamo: { outcome: 'recovered', text: 'the bare call is recovered, the orphan close stripped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside <arg_value>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the cut <tool_call>… stays in content' },
        sglang: { outcome: 'content', text: 'no call; the cut <tool_call>… stays in content' },
        dynamo: { outcome: 'dropped', text: 'no call; nothing leaks' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only </tool_call>',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        sglang: { outcome: 'mixed', text: 'the first call is delivered; the unterminated last block stays in content' },
        dynamo: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        sglang: { outcome: 'mixed', text: 'the complete call is delivered; the cut block stays in content' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
