/**
 * rednote-hilab dots ('dots'): XML `invoke` elements inside a `<dots_function_call>` block:
 *
 *   <think>\nREASONING\n</think>\n\nCONTENT\n<dots_function_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n</invoke>\n</dots_function_call><|endofresponse|>
 *
 * A block holds one or more invokes; a turn may hold several blocks. A JSON object `{"name": …, "arguments": {…}}`
 * inside the block is accepted as well (the engines' fallback), its arguments kept as written. Parameter values are text,
 * canonical compact JSON in the message (typed by the request's schema where known). Reasoning is Qwen3's `<think>`,
 * which the prompt may already have opened. Sources: SGLang `python/sglang/srt/function_call/dots_detector.py` (class
 * docstring, regexes, `_parse_block`) and `test_dots_detector.py`; vLLM `dots_tool_parser.py` and its test.
 */
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  callUnclosed,
  invokeCall,
  jsonMembers,
  jsonStringMember,
  jsonValueEnd,
  modelKey,
  parseSection,
  parseTurn,
  quotedParams,
  renderInvokes,
  scoreText,
  trimRange,
  type InvokeRender,
  type ParseOut,
  type SectionGrammar,
  type TurnGrammar,
} from './shared';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const SECTION_BEGIN = '<dots_function_call>';
const SECTION_END = '</dots_function_call>';
const INVOKE_OPEN = '<invoke name="';
const INVOKE_CLOSE = '</invoke>';
const PARAM_OPEN = '<parameter name="';
const PARAM_CLOSE = '</parameter>';
const END = '<|endofresponse|>';
const ENDOFTEXT = '<|endoftext|>';
const ENDS = [END, ENDOFTEXT];

const TOOL_MARKERS = [SECTION_BEGIN, SECTION_END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [
  SECTION_END,
  INVOKE_CLOSE,
  PARAM_CLOSE,
  THINK_CLOSE,
  END,
  ENDOFTEXT,
  SECTION_BEGIN,
  INVOKE_OPEN,
  PARAM_OPEN,
  THINK_OPEN,
  '<|response|>',
  '<|userprompt|>',
  '<|endofuserprompt|>',
  '<|endofsystem|>',
];
const BODY_STOPS = [INVOKE_CLOSE, INVOKE_OPEN, SECTION_END, SECTION_BEGIN, ...ENDS];

const PARAMS = quotedParams(PARAM_OPEN, PARAM_CLOSE);

/** One `<invoke name="…">` from `start`; `sectioned` is false when no `<dots_function_call>` opened. */
function invoke(out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number {
  return invokeCall(out, start, sectioned, {
    invokeOpen: INVOKE_OPEN,
    invokeClose: INVOKE_CLOSE,
    sectionBegin: SECTION_BEGIN,
    bodyStops: BODY_STOPS,
    markers: MARKERS,
    params: PARAMS,
  });
}

/** The JSON fallback inside a block: `{"name": "NAME", "arguments": {…}}`, its arguments kept as written. */
function jsonCall(out: ParseOut, pos: number, sectioned: boolean): number | undefined {
  const { text } = out;
  if (!sectioned || text[pos] !== '{') return undefined;
  const stop = out.find([SECTION_END, SECTION_BEGIN, ...ENDS], pos);
  const to = stop ? stop.start : text.length;
  const objEnd = jsonValueEnd(text, pos, to);
  const complete = objEnd >= 0;
  const end = complete ? objEnd : trimRange(text, pos, to)[1];
  const members = jsonMembers(text, pos, end) ?? [];
  const nameMember = members.find((m) => m.key === 'name' && m.complete);
  const argsMember = members.find((m) => m.key === 'arguments' || m.key === 'parameters');
  const name = jsonStringMember(text, nameMember);
  const index = out.addCall(name, argsMember ? text.slice(...argsMember.valueRange) : complete ? '{}' : '');
  out.seg('call', pos, end, index);
  if (nameMember && name && text.slice(nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1) === name) {
    out.seg('call-name', nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1, index);
  }
  if (argsMember) out.seg('arguments', argsMember.valueRange[0], argsMember.valueRange[1], index);
  if (!complete) callUnclosed(out, index, pos, end, '}', end);
  else if (!name) out.problem('malformed-call', `call ${index}: no "name" string`, pos, end, { callIndex: index });
  return Math.max(end, pos + 1);
}

const SECTION: SectionGrammar = {
  ends: [SECTION_END],
  callBegin: INVOKE_OPEN,
  breaks: [...ENDS, SECTION_BEGIN],
  markers: MARKERS,
  call: invoke,
  loose: jsonCall,
};

const GRAMMAR: TurnGrammar = {
  family: 'dots',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  ends: ENDS,
  starters: [
    { marker: SECTION_BEGIN, parse: (out, start, hit) => parseSection(out, SECTION, start, hit) },
    { marker: INVOKE_OPEN, parse: (out, start) => parseSection(out, SECTION, start) },
  ],
};

const RENDER: InvokeRender = {
  sectionBegin: SECTION_BEGIN,
  sectionEnd: SECTION_END,
  invokeOpen: INVOKE_OPEN,
  invokeClose: INVOKE_CLOSE,
  end: END,
  thinkNewlines: true,
  beforeSection: '\n',
  param: (k, v) => `${PARAM_OPEN}${k}">${v}${PARAM_CLOSE}`,
};

const format: ModelFormat = {
  id: 'dots',
  displayName: 'dots (<dots_function_call>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: SECTION_END,
  // rednote-hilab/dots.llm1.inst and the other dots.* checkpoints.
  matchesModel: (modelId) => /^dots[._-]/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [SECTION_BEGIN, 12],
      [SECTION_END, 6],
    ]),
  render: (m, opts) => renderInvokes(RENDER, m, opts),
  parse: (text) => parseTurn(GRAMMAR, text),
};

const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/dots_detector.py';
const VLLM = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/dots_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const both = (what: string) => ({
  vllm: v(
    'content',
    `no call; only whole ${SECTION_BEGIN}…${SECTION_END} blocks are read, and with none the whole output, ${what}, is content`,
  ),
  sglang: v('content', `no call; only whole ${SECTION_BEGIN}…${SECTION_END} blocks are read, so ${what} stays in content`),
  dynamo: noParser('Dynamo lists no dots parser family'),
});

const verdicts: FamilyVerdicts = {
  family: 'dots',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'dots',
      code: VLLM,
      evidence: `${VLLM} extract_tool_calls @ 055e47c2; tests/tool_parsers/test_dots_tool_parser.py @ 42955d4c`,
      note: 'read from the code; a call whose name is not among the request tools is dropped',
    },
    sglang: {
      release: 'main @ 04b26f56',
      parser: 'dots',
      code: SGLANG,
      evidence: `${SGLANG} detect_and_parse @ 04b26f56; test/registered/unit/function_call/test_dots_detector.py @ 04b26f56`,
      note: 'read from the code; an invoke without its </invoke> inside a closed block is dropped silently',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no dots)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${SECTION_END} missing after a complete invoke`,
      verdicts: both('markup included'),
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `an invoke and ${SECTION_END} without ${SECTION_BEGIN}`,
      verdicts: {
        vllm: v('content', 'no call; the text stays in content'),
        sglang: v('content', `no call; the text stays in content (the streaming path strips the stray ${SECTION_END})`),
        dynamo: noParser('Dynamo lists no dots parser family'),
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter value',
      verdicts: both('the cut markup'),
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `${SECTION_END} missing after several complete invokes`,
      verdicts: both('the prose and every invoke'),
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several invokes cut off mid-value',
      verdicts: both('the prose and every invoke'),
    },
  ],
};

export const dots: Family<'dots'> = {
  id: 'dots',
  format,
  verdicts,
  tokenizer: { repo: 'rednote-hilab/dots.llm1.inst' },
  repair: {
    openers: [SECTION_BEGIN, INVOKE_OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
