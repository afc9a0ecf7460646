// Seed-OSS (`<seed:tool_call>\n<function=NAME>…</function>\n</seed:tool_call>`): no conformance inputs; verdicts read from
// the parser code (formats-2026.md "Seed-OSS"): vLLM's regexes also match an unclosed `<seed:tool_call>(.*?)$` and
// `<function=(.*)$`, so a cut call is delivered with the parameters that arrived. SGLang registers no Seed-OSS parser
// (parser_names.py @ 042de61b) and Dynamo lists none.
import { noParser, noParserInfo, type FamilyVerdicts } from '../shared/verdicts';

const sglang = noParser('none registered in SGLang parser_names.py @ 042de61b');
const dynamo = noParser('Dynamo lists no Seed-OSS parser family');
const code =
  'vllm-project/vllm vllm/tool_parsers/seed_oss_tool_parser.py (tool_call_regex, tool_call_function_regex, _get_function_calls) @ 0064cc9c';

const verdicts: FamilyVerdicts = {
  family: 'seed-oss',
  engines: {
    vllm: {
      release: 'main @ 0064cc9c',
      parser: 'seed_oss',
      code: 'vllm-project/vllm vllm/tool_parsers/seed_oss_tool_parser.py',
      evidence: code,
      note: 'read from the code; no conformance fixture',
    },
    sglang: noParserInfo('main @ 042de61b', 'sgl-project/sglang python/sglang/srt/function_call/parser_names.py @ 042de61b'),
    dynamo: noParserInfo('3.0.0', 'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 8d4b1bff82df'),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</seed:tool_call> missing after a complete call',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the call is delivered (the regex also matches an unclosed block)' },
        sglang,
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter value',
      verdicts: {
        vllm: { outcome: 'cut-call-delivered', text: 'the call is delivered with the parameters that arrived, the last one cut' },
        sglang,
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only its closing tags',
      verdicts: { vllm: { outcome: 'recovered', text: 'every call is delivered' }, sglang, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: { outcome: 'cut-call-delivered', text: 'every call is delivered, the last with its cut value' }, sglang, dynamo },
    },
  ],
};

export default verdicts;
