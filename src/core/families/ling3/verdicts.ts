// Ling 3: the GLM `<tool_call>NAME<arg_key>…</arg_key><arg_value>…</arg_value></tool_call>` XML with an optional newline
// after the name (formats-2026.md "GLM-4.7 / GLM-5.x, GLM-4.5 / 4.6, Ling 3"). vLLM's Ling3ToolParser uses the glm_4_7
// structural tag model and SGLang's ling3 detector reads the same complete `<tool_call>…</tool_call>` spans, but the
// conformance suite has no Ling 3 inputs: the vLLM and SGLang verdicts are their GLM-4.7 ones (glm47.ts, from the
// fixtures), said so in the note. Dynamo names no Ling 3 parser.
import glm47 from '../glm47/verdicts';
import { noParser, noParserInfo, type FamilyVerdicts } from '../shared/verdicts';

const carried = 'verdicts carried over from its GLM-4.7 fixtures (same grammar family); the suite has no Ling 3 case';

const verdicts: FamilyVerdicts = {
  family: 'ling3',
  engines: {
    vllm: {
      release: 'main @ 761f1975',
      parser: 'ling3',
      code: 'vllm-project/vllm vllm/frontend/processing/tool_parsers/ling3_tool_parser.py',
      evidence: glm47.engines.vllm.evidence,
      note: carried,
    },
    sglang: {
      release: 'main @ 042de61b',
      parser: 'ling3',
      code: 'sgl-project/sglang python/sglang/srt/function_call/ling3_detector.py',
      evidence: glm47.engines.sglang.evidence,
      note: carried,
    },
    dynamo: noParserInfo('3.0.0', 'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 8d4b1bff82df (no ling3)'),
  },
  cases: glm47.cases.map((c) => ({
    ...c,
    verdicts: { vllm: c.verdicts.vllm, sglang: c.verdicts.sglang, dynamo: noParser('Dynamo lists no Ling 3 parser family') },
  })),
};

export default verdicts;
