/**
 * InternLM ('internlm'): InternLM2 / 2.5, InternLM3 and Intern-S1, one block per call:
 *
 *   CONTENT<|action_start|><|plugin|>\n{"name": "NAME", "parameters": {…}}<|action_end|><|im_end|>
 *
 * `parameters` (or `arguments`) carries the arguments. Decoded with spaces between special tokens the opener reads
 * `<|action_start|> <|plugin|>` (SGLang's spelling); any whitespace there is read. Intern-S1 reasons in `<think>`.
 * `<|action_start|><|interpreter|>` opens code for InternLM's code interpreter, not a function call: it is left to the
 * checks as markup in content. Sources: vLLM `internlm2_tool_parser.py` / `intern_s1_tool_parser.py`, SGLang
 * `internlm_detector.py` (class docstring, `structure_info`), and their tests.
 */
import { noParser, noParserInfo, type EngineVerdict, type FamilyVerdicts } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from './shared';
import { header, jsonObjectCall, renderObjectCall } from './shared/json-object-call';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const ACTION_START = '<|action_start|>';
const PLUGIN = '<|plugin|>';
const ACTION_END = '<|action_end|>';
const IM_END = '<|im_end|>';
const EOS = '</s>';

const TOOL_MARKERS = [ACTION_START, PLUGIN, ACTION_END, '<|interpreter|>'];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [ACTION_END, IM_END, THINK_CLOSE, EOS, ACTION_START, PLUGIN, '<|interpreter|>', '<|im_start|>', THINK_OPEN];
const ENDS = [IM_END, EOS];
const STOPS = [ACTION_START, ...ENDS];

/** One block from `<|action_start|>`: the `<|plugin|>` header, then the call object up to `<|action_end|>`. */
function action(out: ParseOut, start: number, hit: MarkerHit): number {
  const h = header(out, hit.end, [PLUGIN]);
  if (h.cut) {
    // Cut off before or inside <|plugin|>: a call that had not begun; what arrived is kept.
    const index = out.addCall('', '');
    out.seg('call', start, out.text.length, index);
    out.problem('call-unclosed', `call ${index} never closed by ${ACTION_END}`, start, out.text.length, {
      expectedAt: h.cut.start,
      marker: ACTION_END,
      callIndex: index,
    });
    return out.text.length;
  }
  return jsonObjectCall(out, {
    start,
    bodyFrom: h.end,
    close: ACTION_END,
    stops: STOPS,
    markers: MARKERS,
    argKeys: ['parameters', 'arguments'],
    defects: h.missing ? [`${ACTION_START} not followed by ${PLUGIN}`] : [],
  });
}

const GRAMMAR: TurnGrammar = {
  family: 'internlm',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  ends: ENDS,
  starters: [{ marker: ACTION_START, parse: action }],
};

const format: ModelFormat = {
  id: 'internlm',
  displayName: 'InternLM (<|action_start|><|plugin|>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // internlm/internlm2-chat-7b, internlm2_5-7b-chat, internlm3-8b-instruct, intern-s1, intern-s1-mini.
  matchesModel: (modelId) => /(?:^|[^a-z0-9])(?:internlm[23]|intern-s1)/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [/<\|action_start\|>\s*<\|plugin\|>/, 12],
      [ACTION_END, 5],
    ]),
  render: (m, opts) => {
    const { out, close, hasContent } = renderStart(m, opts, { newlines: false });
    m.toolCalls.forEach((c, i) => {
      if (hasContent || i > 0) out.put('\n');
      out.wrap(
        'call',
        () => {
          out.put(`${ACTION_START}${PLUGIN}\n`);
          renderObjectCall(out, c, i, 'parameters', close.call(i));
          if (close.call(i)) out.put(ACTION_END);
        },
        i,
      );
    });
    if (close.turn) out.put(IM_END, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/tool_parsers/internlm2_tool_parser.py';
const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/internlm_detector.py';
const dynamo = noParser('Dynamo lists no InternLM parser family');
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const raises = (what: string): EngineVerdict =>
  v(
    'unknown',
    `extract_tool_calls raises (${what}) and does not catch it; what the server then returns was not established from the code read`,
  );

const verdicts: FamilyVerdicts = {
  family: 'internlm',
  engines: {
    vllm: {
      release: 'main @ 000fc94b',
      parser: 'internlm',
      code: VLLM,
      evidence: `${VLLM} extract_tool_calls @ 000fc94b; tests/tool_parsers/test_internlm2_tool_parser.py @ 06617993 (test_malformed_input xfail: "raises JSONDecodeError")`,
      note: `read from the code; vLLM matches ${ACTION_START}${PLUGIN} only (no space between) and one block per turn: two blocks make extract_tool_calls raise even when both are whole`,
    },
    sglang: {
      release: 'main @ 0c50dc90',
      parser: 'interns1',
      code: SGLANG,
      evidence: `${SGLANG} detect_and_parse @ 0c50dc90; python/sglang/srt/function_call/function_call_parser.py ToolCallParserEnum ("interns1": InternlmDetector) @ 00828e56`,
      note: `read from the code; SGLang matches ${ACTION_START} ${PLUGIN} only (one space between): the other spelling is left as content`,
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe; ai-dynamo/dynamo lib/parsers/src/tool_calling/parsers.rs get_tool_parser_map @ 0436586e (no InternLM parser)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${ACTION_END} missing after a complete call object`,
      verdicts: {
        vllm: v('recovered', `the call is delivered: the object runs to the end of the text and parses`),
        sglang: v('content', `no call; a block counts only with its ${ACTION_END}, so the whole output, markup included, is content`),
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a call object and ${ACTION_END} without ${ACTION_START}`,
      verdicts: {
        vllm: v('content', 'no call; the text stays in content'),
        sglang: v('content', 'no call; the text stays in content'),
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the call object',
      verdicts: {
        vllm: raises('JSONDecodeError on the cut object'),
        sglang: v('content', `no call; a block counts only with its ${ACTION_END}, so the whole output is content`),
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several blocks lacks its ${ACTION_END}`,
      verdicts: {
        vllm: raises('ValueError: more than one block to unpack'),
        sglang: v('partial', 'the closed blocks are delivered, the last one dropped; content is the text before the first block'),
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several blocks cut off mid-value',
      verdicts: {
        vllm: raises('ValueError: more than one block to unpack'),
        sglang: v('partial', 'the closed blocks are delivered, the cut one dropped'),
        dynamo,
      },
    },
  ],
};

export const internlm: Family<'internlm'> = {
  id: 'internlm',
  format,
  verdicts,
  tokenizer: { repo: 'internlm/internlm2_5-7b-chat' },
  repair: {
    openers: [ACTION_START],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
