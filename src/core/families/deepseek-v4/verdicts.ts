// DeepSeek V4 / V4.1 (DSML `<｜DSML｜tool_calls>`): recorded behaviour of vLLM 0.23.0 and Dynamo 3.0.0 on the same
// truncated inputs (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/deepseek_v4/TOOLCALLING.batch.5.yaml
// @ 8d4b1bff82df; vLLM as summarised from that fixture in the team's formats-2026.md, DeepSeek V4). SGLang had no V4
// detector in the release the fixtures record ("SGLang has no peer detector", inputs/deepseek_v4 13.c); `deepseekv4`
// is registered in later SGLang (parser_names.py @ 042de61b), unmeasured here.
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const NO_SGLANG = { outcome: 'unsupported', text: 'no DeepSeek V4 parser in this release' } as const;

const verdicts: FamilyVerdicts = {
  family: 'deepseek-v4',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'deepseek_v4',
      code: 'vllm-project/vllm vllm/tool_parsers/deepseekv4_tool_parser.py',
      evidence: fixture('vllm', 'deepseek_v4'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: '(none)',
      code: 'sgl-project/sglang python/sglang/srt/function_call/deepseekv4_detector.py (later releases)',
      evidence: `${fixture('sglang', 'deepseek_v4').replace('TOOLCALLING.batch.5.yaml', 'TOOLCALLING.batch.yaml').replace('sglang-0.5.12.post1', 'inputs')} (case 13.c)`,
      note: 'later SGLang registers deepseekv4 / deepseekv41; not measured here',
    },
    dynamo: {
      release: '3.0.0',
      parser: 'deepseek_v4',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/dsml/parser.rs',
      evidence: fixture('dynamo', 'deepseek_v4'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</｜DSML｜tool_calls> missing, the invoke complete',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the DSML envelope leaks into content' },
        sglang: NO_SGLANG,
        dynamo: { outcome: 'recovered', text: 'the complete invoke is recovered' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'an invoke and the closer without the opening wrapper',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the DSML envelope leaks into content' },
        sglang: NO_SGLANG,
        dynamo: { outcome: 'recovered', text: 'the bare invoke is recovered' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the DSML envelope leaks into content' },
        sglang: NO_SGLANG,
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'several complete invokes, the outer close missing',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the DSML envelope leaks into content' },
        sglang: NO_SGLANG,
        dynamo: { outcome: 'recovered', text: 'every closed invoke is recovered' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several invokes cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the DSML envelope leaks into content' },
        sglang: NO_SGLANG,
        dynamo: { outcome: 'partial', text: 'the closed invoke is recovered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
