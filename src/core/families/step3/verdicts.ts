// Step-3 (steptml): no conformance inputs; verdicts read from the parsers' non-streaming code. vLLM
// `Step3ToolParser.extract_tool_calls` returns no call and the whole output as content unless both
// <｜tool_calls_begin｜> and <｜tool_calls_end｜> are there, and keeps a call only with its <｜tool_call_end｜>. SGLang
// `Step3Detector.detect_and_parse` reads a block without its end as cut short: the calls that closed are parsed, the
// unfinished markup is dropped and only the text before the block is content. Dynamo lists no Step-3 parser.
import { noParser, noParserInfo, type FamilyVerdicts } from '../shared/verdicts';

const dynamo = noParser('Dynamo lists no Step-3 parser family');

const verdicts: FamilyVerdicts = {
  family: 'step3',
  engines: {
    vllm: {
      release: 'main @ 0064cc9c',
      parser: 'step3',
      code: 'vllm-project/vllm vllm/tool_parsers/step3_tool_parser.py',
      evidence: 'vllm-project/vllm vllm/tool_parsers/step3_tool_parser.py extract_tool_calls, registry @ 0064cc9c',
      note: 'read from the code; no conformance fixture',
    },
    sglang: {
      release: 'main @ 042de61b',
      parser: 'step3',
      code: 'sgl-project/sglang python/sglang/srt/function_call/step3_detector.py',
      evidence: 'sgl-project/sglang python/sglang/srt/function_call/step3_detector.py detect_and_parse, registry @ 042de61b',
      note: 'read from the code; no conformance fixture',
    },
    dynamo: noParserInfo('3.0.0', 'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 8d4b1bff82df'),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<｜tool_calls_end｜> missing after a complete call',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'recovered', text: 'the closed call is delivered; nothing leaks' },
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call and <｜tool_calls_end｜> without <｜tool_calls_begin｜>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the markup stays in content' },
        sglang: { outcome: 'content', text: 'no call; the markup stays in content' },
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the call',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the cut markup is content' },
        sglang: { outcome: 'dropped', text: 'no call; the cut markup is dropped' },
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks its <｜tool_call_end｜>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output is content' },
        sglang: { outcome: 'partial', text: 'the closed calls are delivered, the last one dropped' },
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output is content' },
        sglang: { outcome: 'partial', text: 'the closed calls are delivered, the cut one dropped' },
        dynamo,
      },
    },
  ],
};

export default verdicts;
