/**
 * IBM Granite: three dialects across the releases.
 *
 * Granite 3.x ('granite3') writes one JSON list of calls after a marker, with no closer (the list's `]` ends it);
 * 3.2 / 3.3 reason in `<think>` and may wrap the reply in `<response>…</response>`:
 *
 *   <|tool_call|>[{"name": "NAME", "arguments": {…}}, …]<|end_of_text|>     (3.0: `<|tool_call|>` is a special token)
 *   <tool_call>[{"name": "NAME", "arguments": {…}}, …]<|end_of_text|>       (3.1: the same as plain text)
 *
 * vLLM `granite_tool_parser.py` / `vllm/parser/granite.py`; llama.cpp `common_chat_params_init_granite` (the
 * `<think>` / `<response>` tags and `<|end_of_text|>`).
 *
 * Granite 4.0 / 4.1 ('granite4') write Hermes' `<tool_call>` JSON, one block per call, and end the turn with
 * `<|end_of_text|>`:
 *
 *   CONTENT\n<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call><|end_of_text|>
 *
 * The arguments may also come as a JSON string holding the object (vLLM `granite4_tool_parser.py` keeps such a string
 * as the arguments text: `dump_args`; its test "test granite behavior"). The grammar is Qwen3's (qwen3/grammar.ts) with
 * Granite's markers and end of turn.
 *
 * Granite 4.2 ('granite42') writes the Qwen3-Coder XML (`<tool_call>\n<function=NAME>\n<parameter=K>…`) with
 * `<think>` reasoning, as Nemotron 3 Nano does (vLLM `vllm/parser/granite_thinking.py` @ 9fdf0d9d: "Granite 4.2 uses
 * the same tool call and reasoning format as Nemotron V3"); it is served with the `qwen3_coder` tool parser. Its
 * grammar and engine verdicts are Qwen3-Coder's; only the model ids are its own.
 */
import qwen3CoderVerdicts from './qwen3-coder/verdicts';
import { noParser, noParserInfo, type EngineVerdict, type FamilyVerdicts } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  jsonCallStarters,
  modelKey,
  parseTurn,
  renderJsonCalls,
  scoreText,
  type JsonCallsGrammar,
  type ParseOut,
  type Starter,
  type TurnGrammar,
} from './shared';
import { qwen3Coder } from './qwen3-coder/grammar';
import { renderQwenTurn } from './qwen3/grammar';
import { jsonObjectCall, renderObjectCall } from './shared/json-object-call';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const EOT = '<|end_of_text|>';
const ROLE = ['<|start_of_role|>', '<|end_of_role|>'];
/** A token only Granite's chat format has. */
const GRANITE_TOKEN = /<\|end_of_text\|>|<\|(?:start|end)_of_role\|>/;

/** `granite-3.3-8b-instruct`, `granite3.1-dense`, `granite-4.0-h-small`, `granite4:tiny-h` → its major and minor. */
function version(modelId: string): { major: number; minor: number } | undefined {
  const m = /(?:^|[^a-z0-9])granite-?(\d)(?:\.(\d))?(?![\d])/.exec(modelKey(modelId));
  return m ? { major: Number(m[1]), minor: m[2] ? Number(m[2]) : 0 } : undefined;
}

const DYNAMO_NONE =
  'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe (Granite listed as a reasoning family only); ai-dynamo/dynamo lib/parsers/src/tool_calling/parsers.rs get_tool_parser_map @ 0436586e (no Granite tool parser)';
const dynamo = noParser('Dynamo has a Granite reasoning parser, no Granite tool parser');
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const SGLANG_NONE =
  'sgl-project/sglang python/sglang/srt/function_call/function_call_parser.py ToolCallParserEnum @ 00828e56 (no Granite detector)';
const sglang = noParser('SGLang registers no Granite tool-call detector');

// ---------------------------------------------------------------------------------------------------------------
// Granite 3.x

const TOKEN_OPEN = '<|tool_call|>';
const STRING_OPEN = '<tool_call>';
const RESPONSE = { open: '<response>', close: '</response>' };
const G3_TOOL_MARKERS = [TOKEN_OPEN, STRING_OPEN];
const G3_MARKERS = [
  RESPONSE.close,
  THINK_CLOSE,
  EOT,
  ROLE[1],
  TOKEN_OPEN,
  STRING_OPEN,
  RESPONSE.open,
  THINK_OPEN,
  ROLE[0],
  '<|tool_response|>',
];
const list3 = (open: string): JsonCallsGrammar => ({
  family: 'granite3',
  markers: G3_MARKERS,
  toolMarkers: G3_TOOL_MARKERS,
  open,
  list: 'array',
  argKeys: ['arguments', 'parameters'],
  ends: [EOT],
  implicitThink: true,
});
const TOKEN_LIST = list3(TOKEN_OPEN);
const STRING_LIST = list3(STRING_OPEN);

/** A reply wrapper: a marker segment; the text between the two is the content. */
const wrapper = (marker: string): Starter => ({
  marker,
  parse: (out: ParseOut, _start, hit) => (out.seg('marker', hit.start, hit.end), hit.end),
});

const G3_GRAMMAR: TurnGrammar = {
  family: 'granite3',
  markers: G3_MARKERS,
  toolMarkers: G3_TOOL_MARKERS,
  // A thinking prompt may end with <think>.
  implicitThink: true,
  ends: [EOT],
  starters: [
    ...jsonCallStarters(TOKEN_LIST).starters,
    ...jsonCallStarters(STRING_LIST).starters,
    wrapper(RESPONSE.open),
    wrapper(RESPONSE.close),
  ],
};

const granite3Format: ModelFormat = {
  id: 'granite3',
  displayName: 'Granite 3 (<|tool_call|>[…])',
  markers: G3_MARKERS,
  toolMarkers: G3_TOOL_MARKERS,
  matchesModel: (modelId) => version(modelId)?.major === 3,
  detectText: (text) =>
    scoreText(text, [
      [/<\|tool_call\|>\s*\[/, 12],
      [/<tool_call>\s*\[\s*\{/, 10],
    ]),
  render: (m, opts) => renderJsonCalls(TOKEN_LIST, m, opts),
  parse: (text) => parseTurn(G3_GRAMMAR, text),
};

const G3_VLLM = 'vllm-project/vllm vllm/tool_parsers/granite_tool_parser.py';
const notAList = 'no call; the text after the marker must be one whole JSON list, so the whole output, markup included, is content';
const granite3Verdicts: FamilyVerdicts = {
  family: 'granite3',
  engines: {
    vllm: {
      release: 'main @ 037ed062',
      parser: 'granite',
      code: G3_VLLM,
      evidence: `${G3_VLLM} extract_tool_calls @ 037ed062; tests/tool_parsers/test_granite_tool_parser.py @ 2ab4733e`,
      note: 'read from the code; vLLM reads a list only at the very start of the output: after prose it returns no call (test_surrounding_text xfail)',
    },
    sglang: noParserInfo('main @ 00828e56', SGLANG_NONE),
    dynamo: noParserInfo('3.0.0', DYNAMO_NONE),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: "the list's closing ] missing after a complete call",
      verdicts: { vllm: v('content', notAList), sglang, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: { vllm: v('content', notAList), sglang, dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: "the list's closing ] missing after several complete calls",
      verdicts: {
        vllm: v('content', 'no call at all; the unterminated list does not parse, so the whole output is content'),
        sglang,
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: v('content', 'no call at all; the whole output, complete calls included, is content'), sglang, dynamo },
    },
  ],
};

export const granite3: Family<'granite3'> = {
  id: 'granite3',
  format: granite3Format,
  verdicts: granite3Verdicts,
  tokenizer: { repo: 'ibm-granite/granite-3.3-8b-instruct' },
  repair: {
    openers: [TOKEN_OPEN, STRING_OPEN],
    stripped: [RESPONSE.open, RESPONSE.close],
    arguments: 'json',
    callIds: 'digest',
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Granite 4.0 / 4.1

const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const G4_TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, '<tool_response>', '</tool_response>'];
const G4_MARKERS = [CALL_CLOSE, EOT, THINK_CLOSE, ROLE[1], CALL_OPEN, THINK_OPEN, ROLE[0], '<tool_response>', '</tool_response>'];

const G4_GRAMMAR: TurnGrammar = {
  family: 'granite4',
  markers: G4_MARKERS,
  toolMarkers: G4_TOOL_MARKERS,
  implicitThink: true,
  ends: [EOT],
  starters: [
    {
      marker: CALL_OPEN,
      parse: (out, start, hit) =>
        jsonObjectCall(out, {
          start,
          bodyFrom: hit.end,
          close: CALL_CLOSE,
          stops: [CALL_OPEN, EOT],
          markers: G4_MARKERS,
          argKeys: ['arguments', 'parameters'],
          stringArgs: true,
        }),
    },
  ],
};

const granite4Format: ModelFormat = {
  id: 'granite4',
  displayName: 'Granite 4 (<tool_call> JSON)',
  markers: G4_MARKERS,
  toolMarkers: G4_TOOL_MARKERS,
  matchesModel: (modelId) => {
    const ver = version(modelId);
    return ver?.major === 4 && ver.minor < 2;
  },
  // `<tool_call>{…}</tool_call>` is Hermes' and Qwen3's too: only Granite's own tokens tell this family.
  detectText: (text) =>
    GRANITE_TOKEN.test(text)
      ? scoreText(text, [
          [/<tool_call>\s*\{/, 10],
          [/"name"\s*:\s*"[^"]*"\s*,\s*"arguments"/, 5],
          [CALL_CLOSE, 3],
          [GRANITE_TOKEN, 4],
        ])
      : 0,
  render: (m, opts) => renderQwenTurn(m, opts, (out, c, i, closed) => renderObjectCall(out, c, i, 'arguments', closed), EOT),
  parse: (text) => parseTurn(G4_GRAMMAR, text),
};

const G4_VLLM = 'vllm-project/vllm vllm/tool_parsers/granite4_tool_parser.py';
const unclosed = `no call; every ${CALL_OPEN} must meet its ${CALL_CLOSE} or the parser gives up, so the whole output, markup included, is content`;
const granite4Verdicts: FamilyVerdicts = {
  family: 'granite4',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'granite4',
      code: G4_VLLM,
      evidence: `vllm-project/vllm vllm/frontend/processing/tool_parsers/granite4_tool_parser.py extract_tool_calls @ 055e47c2; tests/tool_parsers/test_granite4_tool_parser.py @ 34f830e9`,
      note: `read from the code: extract_tool_calls asserts that each ${CALL_OPEN} is closed and on any failure returns the output as content; served with the hermes parser instead, Qwen3's verdicts apply`,
    },
    sglang: noParserInfo('main @ 00828e56', SGLANG_NONE),
    dynamo: noParserInfo('3.0.0', DYNAMO_NONE),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CALL_CLOSE} missing, the JSON body complete`,
      verdicts: { vllm: v('content', unclosed), sglang, dynamo },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a JSON call body and ${CALL_CLOSE} without ${CALL_OPEN}`,
      verdicts: {
        vllm: v('content', `no call; a ${CALL_CLOSE} without its opener makes the parser give up: the whole output is content`),
        sglang,
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the JSON arguments',
      verdicts: { vllm: v('content', unclosed), sglang, dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several calls lacks only ${CALL_CLOSE}`,
      verdicts: { vllm: v('content', 'no call at all; the whole output, complete calls included, is content'), sglang, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: v('content', 'no call at all; the whole output, complete calls included, is content'), sglang, dynamo },
    },
  ],
};

export const granite4: Family<'granite4'> = {
  id: 'granite4',
  format: granite4Format,
  verdicts: granite4Verdicts,
  tokenizer: { repo: 'ibm-granite/granite-4.0-h-small' },
  repair: {
    openers: [CALL_OPEN],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Granite 4.2 (Qwen3-Coder XML)

const granite42Format: ModelFormat = {
  ...qwen3Coder,
  id: 'granite42',
  displayName: 'Granite 4.2 (Qwen3-Coder XML)',
  // Qwen's special ids are not Granite's.
  markerIds: undefined,
  matchesModel: (modelId) => {
    const ver = version(modelId);
    return ver?.major === 4 && ver.minor >= 2;
  },
  // The markup is Qwen3-Coder's, marker for marker: the text alone tells that family, not this one.
  detectText: () => 0,
  parse: (text) => ({ ...qwen3Coder.parse(text), family: 'granite42' }),
};

export const granite42: Family<'granite42'> = {
  id: 'granite42',
  format: granite42Format,
  verdicts: {
    ...qwen3CoderVerdicts,
    family: 'granite42',
    engines: {
      vllm: {
        ...qwen3CoderVerdicts.engines.vllm,
        note: 'Granite 4.2 is served with the qwen3_coder tool parser (vllm/parser/granite_thinking.py @ 9fdf0d9d: the Nemotron V3 format); verdicts are those of the Qwen3-Coder inputs',
      },
      sglang: { ...qwen3CoderVerdicts.engines.sglang, note: 'the qwen3_coder detector; verdicts are those of the Qwen3-Coder inputs' },
      dynamo: { ...qwen3CoderVerdicts.engines.dynamo, note: 'the qwen3_coder parser; verdicts are those of the Qwen3-Coder inputs' },
    },
  },
  tokenizer: { repo: 'ibm-granite/granite-4.2-8b' },
  repair: {
    openers: ['<tool_call>', '<function='],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
