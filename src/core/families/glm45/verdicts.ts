// GLM-4.5 / 4.6. vLLM and Dynamo: their recorded behaviour on the GLM-4.7 inputs (ai-dynamo/frontend-crates
// conformance/toolcalling/fixtures-batch-v1/*/glm47/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df); vLLM's registry maps both
// glm45 and glm47 to Glm47MoeModelToolParser, and Dynamo shares one implementation across GLM-4.5…5.x. SGLang keeps a
// separate GLM-4.5/4.6 detector, so its verdicts are read from that code (glm4_moe_detector.py @ 02911a07fb72:
// `detect_and_parse` keeps only complete `<tool_call>.*?</tool_call>` spans, and content is the text before the
// first `<tool_call>`, stripped). Its name regex `<tool_call>(.*?)(?:\\n|\n)(.*)</tool_call>` also drops, without a trace, a
// call with no line break after its name (`<tool_call>get_weather</tool_call>`: test_glm4_moe_detector.py
// test_missing_name_separator_yields_no_calls @ 33d0813d223177af28e4a7c668e8e9721e97b760); families/glm45/grammar.ts flags it.
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const GLM47_NOTE = 'read from the GLM-4.7 conformance inputs (no newline after the name); the same parser serves glm45';

const verdicts: FamilyVerdicts = {
  family: 'glm45',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'glm45',
      code: 'vllm-project/vllm vllm/tool_parsers/glm47_moe_tool_parser.py',
      evidence: fixture('vllm', 'glm47'),
      note: GLM47_NOTE,
    },
    sglang: {
      release: 'main @ 02911a07fb72',
      parser: 'glm45',
      code: 'sgl-project/sglang python/sglang/srt/function_call/glm4_moe_detector.py',
      evidence:
        'sgl-project/sglang python/sglang/srt/function_call/glm4_moe_detector.py @ 02911a07fb722f48336cdd3b3a40e8928acb664c (Glm4MoeDetector.detect_and_parse)',
      note: 'read from the code, not from a recorded run',
    },
    dynamo: {
      release: '3.0.0',
      parser: 'glm47',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/xml/glm47_parser.rs',
      evidence: fixture('dynamo', 'glm47'),
      note: GLM47_NOTE,
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
        sglang: { outcome: 'dropped', text: 'no call; content is only the text before <tool_call>' },
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
        sglang: { outcome: 'content', text: 'no call; without <tool_call> the whole text is content' },
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
        sglang: { outcome: 'dropped', text: 'no call; content is only the text before <tool_call>' },
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
        sglang: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
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
        sglang: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
