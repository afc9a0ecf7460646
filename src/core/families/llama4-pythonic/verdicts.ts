// Llama 4 pythonic (`[get_weather(location="NYC")]`): recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo
// 3.0.0 on the same truncated inputs (ai-dynamo/frontend-crates
// conformance/toolcalling/fixtures-batch-v1/*/pythonic/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df): all three need the whole
// list (vLLM matches the whole output against the list regex and parses it with `ast`), so any cut leaves it as text.
import { fixture, type EngineVerdict, type FamilyVerdicts } from '../shared/verdicts';

const asText = (what: string): Record<'vllm' | 'sglang' | 'dynamo', EngineVerdict> => ({
  vllm: { outcome: 'content', text: `no call; ${what} stays in content` },
  sglang: { outcome: 'content', text: `no call; ${what} stays in content` },
  dynamo: { outcome: 'content', text: `no call; ${what} stays in content` },
});

const verdicts: FamilyVerdicts = {
  family: 'llama4-pythonic',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'llama4_pythonic',
      code: 'vllm-project/vllm vllm/tool_parsers/llama4_pythonic_tool_parser.py',
      evidence: fixture('vllm', 'pythonic'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'pythonic',
      code: 'sgl-project/sglang python/sglang/srt/function_call/pythonic_detector.py',
      evidence: fixture('sglang', 'pythonic'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'pythonic',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/pythonic/pythonic_parser.rs',
      evidence: fixture('dynamo', 'pythonic'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: 'the closing ] of the call list missing',
      verdicts: asText('the [get_weather(…) text'),
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call and ] without the opening [',
      verdicts: asText('the get_weather(…)] text'),
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside an argument',
      verdicts: asText('the cut [get_weather(… text'),
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the closing ] missing after several complete calls',
      verdicts: asText('the prose and the whole list'),
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: asText('the prose and the cut list'),
    },
  ],
};

export default verdicts;
