// Mistral (`[TOOL_CALLS]`, pre-v11 JSON-array form): recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and
// Dynamo 3.0.0 on the same inputs (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/mistral/TOOLCALLING.batch.5.yaml
// @ 8d4b1bff82df). The suite's 5.a and 5.d lack a `[/TOOL_CALLS]` that mistral_common never writes: to Tokenscope they
// are healthy, and kept here as `canonical` because SGLang returns no call on them.
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'mistral',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'mistral',
      code: 'vllm-project/vllm vllm/tool_parsers/mistral_tool_parser.py',
      evidence: fixture('vllm', 'mistral'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'mistral',
      code: 'sgl-project/sglang python/sglang/srt/function_call/mistral_detector.py',
      evidence: fixture('sglang', 'mistral'),
      note: "its detector expects '[TOOL_CALLS] [' with a space, which the canonical form does not have",
    },
    dynamo: {
      release: '3.0.0',
      parser: 'mistral',
      code: 'ai-dynamo/dynamo lib/parsers (family mistral)',
      evidence: fixture('dynamo', 'mistral'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'canonical',
      calls: 'single',
      what: 'one call in the canonical [TOOL_CALLS][…] form',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the call is delivered' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'recovered', text: 'the call is delivered' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a JSON call list and [/TOOL_CALLS] without [TOOL_CALLS]',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole text stays in content' },
        sglang: { outcome: 'content', text: 'no call; the whole text stays in content' },
        dynamo: { outcome: 'recovered', text: 'the call is recovered, the orphan close stripped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the JSON arguments',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the cut JSON after [TOOL_CALLS] stays in content' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'canonical',
      calls: 'multi',
      what: 'two calls in the canonical [TOOL_CALLS][…] form',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'both calls are delivered' },
        sglang: { outcome: 'dropped', text: 'no call; only the narration is kept' },
        dynamo: { outcome: 'recovered', text: 'both calls are delivered' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all; the raw cut JSON stays in content' },
        sglang: { outcome: 'dropped', text: 'no call; only the narration is kept' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
