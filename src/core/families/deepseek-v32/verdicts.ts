// DeepSeek V3.2 (DSML): recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same
// truncated inputs (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/deepseek_v3_2/TOOLCALLING.batch.5.yaml
// @ 8d4b1bff82df; the vLLM verdicts as summarised from that fixture in the team's formats-2026.md, DeepSeek V3.2).
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'deepseek-v32',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'deepseek_v32',
      code: 'vllm-project/vllm vllm/tool_parsers/deepseekv32_tool_parser.py',
      evidence: fixture('vllm', 'deepseek_v3_2'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'deepseekv32',
      code: 'sgl-project/sglang python/sglang/srt/function_call/deepseekv32_detector.py',
      evidence: fixture('sglang', 'deepseek_v3_2'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'deepseek_v3_2',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/dsml/parser.rs',
      evidence: fixture('dynamo', 'deepseek_v3_2'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</｜DSML｜function_calls> missing, the invoke complete',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole DSML text goes to content' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'recovered', text: 'the complete invoke is recovered' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'an invoke and </｜DSML｜function_calls> without the opening wrapper',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the DSML markers stay in content' },
        sglang: { outcome: 'content', text: 'no call; the DSML markers stay in content' },
        dynamo: { outcome: 'recovered', text: 'the bare invoke is recovered, the orphan tail stripped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole DSML text goes to content' },
        sglang: { outcome: 'dropped', text: 'no call, empty content' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'several complete invokes, the outer close missing',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole DSML text goes to content' },
        sglang: { outcome: 'dropped', text: 'no call; only the narration is kept' },
        dynamo: { outcome: 'recovered', text: 'every closed invoke is recovered' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several invokes cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole DSML text goes to content' },
        sglang: { outcome: 'dropped', text: 'no call; only the narration is kept' },
        dynamo: { outcome: 'partial', text: 'the closed invoke is recovered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
