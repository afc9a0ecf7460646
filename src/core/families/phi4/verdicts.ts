// Phi-4 (`functools[…]`): recorded behaviour of vLLM 0.23.0 and Dynamo 3.0.0 on the same truncated inputs; SGLang
// 0.5.12.post1 has no detector (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/phi4/TOOLCALLING.batch.5.yaml
// @ 8d4b1bff82df).
import { fixture, noParser, noParserInfo, type FamilyVerdicts } from '../shared/verdicts';

const sglang = noParser('"SGLang has no detector for family=\'phi4\'"');

const verdicts: FamilyVerdicts = {
  family: 'phi4',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'phi4_mini_json',
      code: 'vllm-project/vllm vllm/tool_parsers/phi4mini_tool_parser.py',
      evidence: fixture('vllm', 'phi4'),
    },
    sglang: noParserInfo('0.5.12.post1', fixture('sglang', 'phi4')),
    dynamo: {
      release: '3.0.0',
      parser: 'phi4',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/base_json_parser.rs',
      evidence: fixture('dynamo', 'phi4'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: 'the closing ] of the functools list missing, the call complete',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the functools[… text stays in content' },
        sglang,
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'functools and a call without the opening [, the closing ] present',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the text stays in content' },
        sglang,
        dynamo: { outcome: 'recovered', text: 'the call is recovered' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the cut functools[… text stays in content' },
        sglang,
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the closing ] missing after several complete calls',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the prose and the list stay in content' },
        sglang,
        dynamo: { outcome: 'dropped', text: 'no call, and the prose is gone too (empty content)' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the prose and the cut list stay in content' },
        sglang,
        dynamo: { outcome: 'dropped', text: 'no call, and the prose is gone too (empty content)' },
      },
    },
  ],
};

export default verdicts;
