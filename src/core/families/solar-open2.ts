/**
 * Upstage Solar Open2 ('solar-open2', vLLM `solar_open2`): one block per call, the name on the start marker's line,
 * then one key/value element per argument:
 *
 *   REASONING<|think:end|>CONTENT<|tool_call:start|>NAME\n<|tool_arg:start|>K<|tool_arg:value|>V<|tool_arg:end|>\n<|tool_call:end|><|im:end|>
 *
 * Every marker is a special token of the tokenizer. Values are written raw; the arguments come back as canonical
 * compact JSON (typed by the request's schema where known, as vLLM types them; without a schema vLLM keeps every value
 * a string). The generation prompt opens `<|think:start|>`, so a completion may start inside the reasoning.
 * `<|im:end|>` ends the turn. Sources: vLLM `vllm/tool_parsers/solar_open2_tool_parser.py` (`tool_call_pattern`,
 * `tool_arg_pattern`, `extract_tool_calls`) and `tests/tool_parsers/test_solar_open2_tool_parser.py`; the token names
 * (`<|im:start|>`, `<|im:content|>`, `<|im:end|>`, `<|tool_response:start|>`…) as Solar Open2 serving code lists them.
 */
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  modelKey,
  nameLineCall,
  parseTurn,
  renderNameLineCalls,
  scoreText,
  type ParamGrammar,
  type ThinkTags,
  type TurnGrammar,
} from './shared';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const CALL_OPEN = '<|tool_call:start|>';
const CALL_CLOSE = '<|tool_call:end|>';
const ARG_OPEN = '<|tool_arg:start|>';
const ARG_VALUE = '<|tool_arg:value|>';
const ARG_CLOSE = '<|tool_arg:end|>';
const THINK: ThinkTags = { open: '<|think:start|>', close: '<|think:end|>' };
const IM_START = '<|im:start|>';
const IM_CONTENT = '<|im:content|>';
const END = '<|im:end|>';
const RESPONSE = ['<|tool_response:start|>', '<|tool_response:end|>'];
const TOOLS = ['<|tool:start|>', '<|tool:end|>'];

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, ARG_OPEN, ARG_VALUE, ARG_CLOSE, ...RESPONSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [
  CALL_CLOSE,
  ARG_CLOSE,
  THINK.close,
  END,
  RESPONSE[1],
  TOOLS[1],
  CALL_OPEN,
  ARG_OPEN,
  ARG_VALUE,
  THINK.open,
  IM_START,
  IM_CONTENT,
  RESPONSE[0],
  TOOLS[0],
];
const BODY_STOPS = [CALL_CLOSE, CALL_OPEN, END];

const PARAMS: ParamGrammar = {
  headStart: ARG_OPEN,
  close: ARG_CLOSE,
  newlines: false,
  head: (out, pos, to) => {
    const { text } = out;
    if (!text.startsWith(ARG_OPEN, pos)) return undefined;
    const keyStart = pos + ARG_OPEN.length;
    const keyEnd = out.find([ARG_VALUE], keyStart, to)?.start;
    // A key cut off (or never given its value marker) leaves no value: it ends the body.
    if (keyEnd === undefined) return { key: text.slice(keyStart, to).trim(), valueStart: to };
    return { key: text.slice(keyStart, keyEnd).trim(), valueStart: keyEnd + ARG_VALUE.length };
  },
};

/** One `<|tool_call:start|>` block: the name to the end of its line, then the argument elements. */
const call = nameLineCall({ bodyStops: BODY_STOPS, close: CALL_CLOSE, params: PARAMS, markers: MARKERS, flagNameless: true });

const GRAMMAR: TurnGrammar = {
  family: 'solar-open2',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  think: THINK,
  ends: [END],
  starters: [{ marker: CALL_OPEN, parse: call }],
};

const format: ModelFormat = {
  id: 'solar-open2',
  displayName: 'Solar Open2 (<|tool_call:start|>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // upstage/Solar-Open2-250B and its quantizations; Upstage's API id is `solar-open2`.
  matchesModel: (modelId) => /(?:^|[^a-z])solar[-_ ]?open[-_ ]?2(?![\d])/.test(modelKey(modelId)),
  // Every marker with the `:start|>` / `:end|>` spelling is Solar Open2's own.
  detectText: (text) =>
    scoreText(text, [
      [CALL_OPEN, 12],
      [ARG_OPEN, 6],
      [CALL_CLOSE, 4],
      [THINK.close, 3],
      [END, 2],
    ]),
  // The name and each argument element on a line of its own.
  render: (m, opts) =>
    renderNameLineCalls(
      {
        open: CALL_OPEN,
        close: CALL_CLOSE,
        end: END,
        param: (k, val) => `${ARG_OPEN}${k}${ARG_VALUE}${val}${ARG_CLOSE}`,
        separator: '\n',
        think: { newlines: false, tags: THINK },
      },
      m,
      opts,
    ),
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/tool_parsers/solar_open2_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const sglang = noParser('SGLang registers no Solar Open2 parser');
const dynamo = noParser('Dynamo lists no Solar Open2 parser family');
const raw = `no call; a block left without ${CALL_CLOSE} at the end of the output matches nothing, so the whole output, markup included, is content`;

const verdicts: FamilyVerdicts = {
  family: 'solar-open2',
  engines: {
    vllm: {
      release: 'main @ 25e2befb',
      parser: 'solar_open2',
      code: VLLM,
      evidence: `${VLLM} extract_tool_calls @ 25e2befb; tests/tool_parsers/test_solar_open2_tool_parser.py @ 0064cc9c (test_unterminated_block_returns_raw_output, test_dropped_call_end_recovers_both_calls)`,
      note: `read from the code and its tests: a call also ends at the next ${CALL_OPEN}, so a missing ${CALL_CLOSE} between two calls loses nothing; content is the text before the first ${CALL_OPEN}, reasoning included unless a reasoning parser took it`,
    },
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no solar)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no solar)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CALL_CLOSE} missing after a complete ${ARG_CLOSE}`,
      verdicts: { vllm: v('content', raw), sglang, dynamo },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a call body and ${CALL_CLOSE} without ${CALL_OPEN}`,
      verdicts: { vllm: v('content', 'no call; the text stays in content'), sglang, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: `output stopped inside a value (${ARG_VALUE}…)`,
      verdicts: { vllm: v('content', raw), sglang, dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several calls lacks only ${CALL_CLOSE}`,
      verdicts: { vllm: v('partial', 'the closed calls are delivered, the unterminated last one dropped'), sglang, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: v('partial', 'the closed calls are delivered, the cut one dropped'), sglang, dynamo },
    },
  ],
};

export const solarOpen2: Family<'solar-open2'> = {
  id: 'solar-open2',
  format,
  verdicts,
  tokenizer: { repo: 'upstage/Solar-Open2-250B' },
  repair: {
    openers: [CALL_OPEN, ARG_OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
