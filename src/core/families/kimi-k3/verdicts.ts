// Kimi K3 (the `<|open|>…<|sep|>` channel grammar): no batch conformance inputs; verdicts from the parsers and their
// tests as formats-2026.md "Kimi K3" reads them. vLLM `kimi_k3_tool_parser.py`: an unclosed tools section is scanned to
// the end, a call is emitted only with its `<|close|>call<|sep|>`, partial calls are dropped (vLLM 0.25.1 had no K3 parser:
// fixtures-unified-v2/families/kimi_k3/vllm_python-0.25.1.yaml). SGLang `kimik3_format.py` / test_kimik3_detector.py:
// complete calls survive a missing `<|close|>tools<|sep|>`, a stream cut after a call header yields no call and no
// leaked markers. Dynamo (frontend-crates kimi_k3/tests.rs): finish() rejects a partial call, keeps the complete ones.
import type { EngineVerdict, FamilyVerdicts } from '../shared/verdicts';

const same = (vllm: EngineVerdict, sglang: EngineVerdict, dynamo: EngineVerdict) => ({ vllm, sglang, dynamo });
const recovered: EngineVerdict = { outcome: 'recovered', text: 'the complete call is delivered' };
const dropped: EngineVerdict = { outcome: 'dropped', text: 'no call; no markers leak' };
const partial: EngineVerdict = { outcome: 'partial', text: 'the closed calls are delivered, the unclosed last one dropped' };

const verdicts: FamilyVerdicts = {
  family: 'kimi-k3',
  engines: {
    vllm: {
      release: 'main @ 761f1975 (none in 0.25.1)',
      parser: 'kimi_k3',
      code: 'vllm-project/vllm vllm/frontend/processing/tool_parsers/kimi_k3_tool_parser.py',
      evidence:
        'vllm-project/vllm vllm/frontend/processing/tool_parsers/kimi_k3_tool_parser.py extract_tool_calls, registry @ 761f1975; ai-dynamo/frontend-crates conformance/fixtures-unified-v2/families/kimi_k3/vllm_python-0.25.1.yaml @ 8d4b1bff82df',
      note: 'vLLM 0.25.1 and earlier have no Kimi K3 parser: there the whole output is content',
    },
    sglang: {
      release: 'main @ 042de61b',
      parser: 'kimi_k3',
      code: 'sgl-project/sglang python/sglang/srt/function_call/kimik3_format.py',
      evidence: 'sgl-project/sglang test/registered/unit/function_call/test_kimik3_detector.py, registry @ 042de61b',
      note: 'read from the code and its tests; no batch fixture',
    },
    dynamo: {
      release: 'frontend-crates @ 8d4b1bff82df',
      parser: 'kimi_k3',
      code: 'ai-dynamo/frontend-crates parsers/v2/src/unified/kimi_k3.rs',
      evidence: 'ai-dynamo/frontend-crates parsers/v2/src/unified/kimi_k3/tests.rs @ 8d4b1bff82df',
      note: 'the unified v2 parser; no batch fixture',
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<|close|>tools<|sep|> missing after a complete call',
      verdicts: same(recovered, recovered, recovered),
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the call',
      verdicts: same(dropped, dropped, dropped),
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks its <|close|>call<|sep|>',
      verdicts: same(partial, partial, partial),
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: same(partial, partial, partial),
    },
  ],
};

export default verdicts;
