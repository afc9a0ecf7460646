/**
 * poolside Laguna ('poolside-v1', the poolside_v1 parsers): GLM's `<arg_key>`/`<arg_value>` calls, one block per call:
 *
 *   <think>REASONING</think>CONTENT<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call></assistant>
 *
 * The chat template (laguna v8) writes no line breaks; SGLang's detector documents `NAME\n` and a line break after each
 * element, and both read. String values are written raw, other values as JSON; the arguments come back as canonical
 * compact JSON (typed by the request's schema where known). The prompt ends with `<think>` when thinking is on (so a
 * completion may start inside reasoning) and with `</think>` when it is off. `</assistant>` ends the turn. Sources:
 * SGLang `python/sglang/srt/function_call/poolside_v1_detector.py` (class docstring, `detect_and_parse`) and
 * `test_poolside_v1_detector.py`; vLLM `poolside_v1_tool_parser.py`; Ollama `model/parsers/laguna.go` and
 * `model/renderers/testdata/laguna_v8_chat_template.jinja2`.
 */
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  keyValueParams,
  modelKey,
  nameLineCall,
  parseTurn,
  renderNameLineCalls,
  scoreText,
  type TurnGrammar,
} from './shared';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const KEY_OPEN = '<arg_key>';
const KEY_CLOSE = '</arg_key>';
const VALUE_OPEN = '<arg_value>';
const VALUE_CLOSE = '</arg_value>';
const END = '</assistant>';
const EOS = '〈|EOS|〉';
const ENDS = [END, EOS];

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [CALL_CLOSE, VALUE_CLOSE, KEY_CLOSE, THINK_CLOSE, END, EOS, CALL_OPEN, KEY_OPEN, VALUE_OPEN, THINK_OPEN, '<assistant>'];
const BODY_STOPS = [CALL_CLOSE, CALL_OPEN, ...ENDS];

const PARAMS = keyValueParams(KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE);

/** One `<tool_call>` block: the name up to a line break or markup, then the key/value pairs. */
const call = nameLineCall({ bodyStops: BODY_STOPS, close: CALL_CLOSE, params: PARAMS, markers: MARKERS, flagNameless: false });

const GRAMMAR: TurnGrammar = {
  family: 'poolside-v1',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  ends: ENDS,
  starters: [{ marker: CALL_OPEN, parse: call }],
};

const format: ModelFormat = {
  id: 'poolside-v1',
  displayName: 'poolside Laguna (poolside_v1)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // poolside/Laguna-XS.2, poolside/Laguna-M.1 and anything else under poolside/ (OpenRouter poolside/laguna-…).
  matchesModel: (modelId) => /(?:^|\/)poolside\//.test(modelId.trim().toLowerCase()) || /^laguna(?![a-z])/.test(modelKey(modelId)),
  // The GLM elements are GLM's too; poolside's own mark is a call block that ends the assistant turn.
  detectText: (text) =>
    scoreText(text, [
      [/<\/tool_call>\s*(?:<\/assistant>|〈\|EOS\|〉)/, 30],
      [EOS, 4],
    ]),
  // No line breaks, as the chat template writes it.
  render: (m, opts) =>
    renderNameLineCalls(
      {
        open: CALL_OPEN,
        close: CALL_CLOSE,
        end: END,
        param: (k, v) => `${KEY_OPEN}${k}${KEY_CLOSE}${VALUE_OPEN}${v}${VALUE_CLOSE}`,
        separator: '',
        think: { newlines: false },
      },
      m,
      opts,
    ),
  parse: (text) => parseTurn(GRAMMAR, text),
};

const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/poolside_v1_detector.py';
const VLLM = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/poolside_v1_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const dynamo = noParser('Dynamo lists no poolside parser family');

const verdicts: FamilyVerdicts = {
  family: 'poolside-v1',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'poolside_v1',
      code: VLLM,
      evidence: `${VLLM} extract_tool_calls @ 055e47c2`,
      note: 'read from the code: only whole <tool_call>…</tool_call> blocks are read; with none the whole output is content',
    },
    sglang: {
      release: 'main @ 0c85b9a3',
      parser: 'poolside_v1',
      code: SGLANG,
      evidence: `${SGLANG} detect_and_parse @ 0c85b9a3; test/registered/unit/function_call/test_poolside_v1_detector.py @ 199614ee (test_truncated_post_value_emits_no_calls, test_truncated_after_complete_call_keeps_complete)`,
      note: 'read from the code and its tests: content is the text before the first <tool_call>; calls to tools the request does not offer are dropped. Streamed, a call cut off at the end of the output comes back as text at finish() (test/registered/unit/function_call/test_poolside_v1_detector_finish.py test_partial_tool_call_at_end_is_flushed @ c94b6b38), where the whole output drops it',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no poolside)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CALL_CLOSE} missing after a complete ${VALUE_CLOSE}`,
      verdicts: {
        vllm: v('content', 'no call; the <tool_call>… markup stays in content'),
        sglang: v('dropped', 'no call; the markup is dropped, the text before it is content'),
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a call body and ${CALL_CLOSE} without ${CALL_OPEN}`,
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
      what: `output stopped inside ${VALUE_OPEN}`,
      verdicts: {
        vllm: v('content', 'no call; the cut <tool_call>… stays in content'),
        sglang: v('dropped', 'no call; the cut markup is dropped'),
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several calls lacks only ${CALL_CLOSE}`,
      verdicts: {
        vllm: v('partial', 'the closed calls are delivered, the unterminated last one dropped'),
        sglang: v('partial', 'the closed calls are delivered, the unterminated last one dropped'),
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: v('partial', 'the closed calls are delivered, the cut one dropped'),
        sglang: v('partial', 'the closed calls are delivered, the cut one dropped'),
        dynamo,
      },
    },
  ],
};

export const poolsideV1: Family<'poolside-v1'> = {
  id: 'poolside-v1',
  format,
  verdicts,
  tokenizer: { repo: 'poolside/Laguna-XS.2' },
  repair: {
    openers: [CALL_OPEN, KEY_OPEN, VALUE_OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
