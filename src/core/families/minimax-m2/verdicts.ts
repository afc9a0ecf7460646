// MiniMax-M2: recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs
// (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/minimax_m2/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'minimax-m2',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'minimax_m2',
      code: 'vllm-project/vllm vllm/tool_parsers/minimax_m2_tool_parser.py',
      evidence: fixture('vllm', 'minimax_m2'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'minimax-m2',
      code: 'sgl-project/sglang python/sglang/srt/function_call/minimax_m2.py',
      evidence: fixture('sglang', 'minimax_m2'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'minimax_m2',
      code: 'ai-dynamo/dynamo lib/parsers (family minimax_m2)',
      evidence: fixture('dynamo', 'minimax_m2'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</minimax:tool_call> missing, the <invoke> complete',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole block stays in content' },
        sglang: { outcome: 'content', text: 'no call; the whole block stays in content' },
        dynamo: { outcome: 'recovered', text: 'the complete <invoke> is recovered' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'an <invoke> and </minimax:tool_call> without <minimax:tool_call>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the invoke/parameter markup stays in content' },
        sglang: { outcome: 'content', text: 'no call; the invoke/parameter markup stays in content' },
        dynamo: { outcome: 'recovered', text: 'the <invoke> is recovered, the orphan close dropped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the cut block stays in content' },
        sglang: { outcome: 'content', text: 'no call; the cut block stays in content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'several complete <invoke>s, </minimax:tool_call> missing',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all; the whole block stays in content' },
        sglang: { outcome: 'content', text: 'no call at all; the whole block stays in content' },
        dynamo: { outcome: 'recovered', text: 'every complete <invoke> is recovered' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several <invoke>s cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all; the whole block stays in content' },
        sglang: { outcome: 'content', text: 'no call at all; the whole block stays in content' },
        dynamo: { outcome: 'partial', text: 'the complete <invoke> is recovered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
