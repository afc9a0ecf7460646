// MiniMax M3 (the `]<]minimax[>[` namespaced tags): no batch conformance inputs; verdicts from the parsers as
// formats-2026.md "MiniMax M3" reads them. SGLang `minimax_m3.py` (`_extract`, `_parse_block`): without the closing
// `]<]minimax[>[</tool_call>` the rest of the text is normal text and no call is made. vLLM's MinimaxM3ToolParser (over the
// Rust tool parser): in streaming a committed first call stays a call while an unterminated second invoke comes back as
// content (test_minimax_m3_tool_parser.py); its non-streaming result on a cut block is not in the sources read. Dynamo's
// minimax_m3_parser.rs (`try_tool_call_parse_minimax_m3`, `parse_invokes`) @ 9c7bf0ce: without the closing tag and with
// `allow_eof_recovery` off (the config's default, and required in streaming jails) it returns no call and only the prose
// before the block; with recovery on, every closed invoke becomes a call and an invoke without `</invoke>` is dropped.
// Which of the two a finalised response gets is not in the sources read (the recovery switch-over in parsers.rs read
// there does not list MiniMax M3), so the verdict stays `unknown` with both outcomes said.
import type { EngineVerdict, FamilyVerdicts } from '../shared/verdicts';

const content: EngineVerdict = { outcome: 'content', text: 'no call; the unterminated block is returned as content' };
const vllmSingle: EngineVerdict = { outcome: 'unknown', text: 'not established by the sources read (only streaming tests)' };
const vllmMulti: EngineVerdict = {
  outcome: 'mixed',
  text: 'streamed: the committed first call stays a call, the unterminated last invoke comes back as content',
};
const dynamo: EngineVerdict = {
  outcome: 'unknown',
  text: 'without EOF recovery (the default): no call, only the prose before the block is kept; with it, closed invokes become calls and a cut one is dropped. Which applies is not established',
};

const verdicts: FamilyVerdicts = {
  family: 'minimax-m3',
  engines: {
    vllm: {
      release: 'main @ 761f1975',
      parser: 'minimax_m3',
      code: 'vllm-project/vllm tests/tool_parsers/test_minimax_m3_tool_parser.py',
      evidence:
        'vllm-project/vllm tests/tool_parsers/test_minimax_m3_tool_parser.py test_streaming_error_recovery_keeps_committed_tool_call_structured, registry @ 761f1975',
      note: 'streaming tests only',
    },
    sglang: {
      release: 'main @ 042de61b',
      parser: 'minimax-m3',
      code: 'sgl-project/sglang python/sglang/srt/function_call/minimax_m3.py',
      evidence: 'sgl-project/sglang python/sglang/srt/function_call/minimax_m3.py _extract, _parse_block, registry @ 042de61b',
      note: 'read from the code',
    },
    dynamo: {
      release: 'main @ 9c7bf0cecad2',
      parser: 'minimax_m3',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/xml/minimax_m3_parser.rs',
      evidence: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/xml/minimax_m3_parser.rs @ 9c7bf0cecad2',
      note: 'no conformance fixture',
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: ']<]minimax[>[</tool_call> missing after a complete invoke',
      verdicts: { vllm: vllmSingle, sglang: content, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter',
      verdicts: { vllm: vllmSingle, sglang: content, dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several invokes lacks its close, the block unterminated',
      verdicts: { vllm: vllmMulti, sglang: content, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several invokes cut off mid-value',
      verdicts: { vllm: vllmMulti, sglang: content, dynamo },
    },
  ],
};

export default verdicts;
