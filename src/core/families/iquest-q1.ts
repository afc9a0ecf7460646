/**
 * IQuest Q1 ('iquest-q1', SGLang `iquest_q1`): GLM-4.7's `<arg_key>`/`<arg_value>` pairs inside a call block of its
 * own, one block per call:
 *
 *   CONTENT<iquest_tool_call>NAME\n<arg_key>K</arg_key><arg_value>V</arg_value>\n</iquest_tool_call><|iquest_end|>
 *
 * The name runs to the line break (or the first `<arg_key>`); string values are written raw, other values as JSON,
 * and the arguments come back as canonical compact JSON (typed by the request's schema where known, as the detector
 * types them). Text around the blocks is content, before and between them. `<|iquest_end|>` or `<|endoftext|>` ends
 * the turn. Reasoning, if any, is read in `<think>` as for GLM-4.7, whose detector this one extends.
 * Sources: SGLang `python/sglang/srt/function_call/iquest_q1_detector.py` (`_parse_body`, `detect_and_parse`) and
 * `test/registered/unit/function_call/test_iquest_q1_detector.py`.
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

const CALL_OPEN = '<iquest_tool_call>';
const CALL_CLOSE = '</iquest_tool_call>';
const KEY_OPEN = '<arg_key>';
const KEY_CLOSE = '</arg_key>';
const VALUE_OPEN = '<arg_value>';
const VALUE_CLOSE = '</arg_value>';
const END = '<|iquest_end|>';
const EOT = '<|endoftext|>';
const ENDS = [END, EOT];

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [CALL_CLOSE, VALUE_CLOSE, KEY_CLOSE, THINK_CLOSE, END, EOT, CALL_OPEN, KEY_OPEN, VALUE_OPEN, THINK_OPEN];
const BODY_STOPS = [CALL_CLOSE, CALL_OPEN, ...ENDS];

const PARAMS = keyValueParams(KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE);

/** One `<iquest_tool_call>` block: the name up to a line break or markup, then the key/value pairs. */
const call = nameLineCall({ bodyStops: BODY_STOPS, close: CALL_CLOSE, params: PARAMS, markers: MARKERS, flagNameless: true });

const GRAMMAR: TurnGrammar = {
  family: 'iquest-q1',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: false,
  ends: ENDS,
  starters: [{ marker: CALL_OPEN, parse: call }],
};

const format: ModelFormat = {
  id: 'iquest-q1',
  displayName: 'IQuest Q1 (<iquest_tool_call>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // IQuestLab/IQuest-Q1 and its quantizations (iquest-q1-…-gguf).
  matchesModel: (modelId) => /(?:^|[^a-z])iquest[-_ ]?q1(?![\d])/.test(modelKey(modelId)),
  // The call block and the end of turn are IQuest's own; `<arg_key>` alone is GLM's.
  detectText: (text) =>
    scoreText(text, [
      [CALL_OPEN, 12],
      [CALL_CLOSE, 6],
      [END, 4],
    ]),
  // The name and each parameter on a line of its own.
  render: (m, opts) =>
    renderNameLineCalls(
      {
        open: CALL_OPEN,
        close: CALL_CLOSE,
        end: END,
        param: (k, v) => `${KEY_OPEN}${k}${KEY_CLOSE}${VALUE_OPEN}${v}${VALUE_CLOSE}`,
        separator: '\n',
        think: { newlines: true },
      },
      m,
      opts,
    ),
  parse: (text) => parseTurn(GRAMMAR, text),
};

const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/iquest_q1_detector.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const vllm = noParser('vLLM registers no IQuest Q1 parser');
const dynamo = noParser('Dynamo lists no IQuest Q1 parser family');
const leftOpen = `the block never met ${CALL_CLOSE}, so it stays in content as written (detect_and_parse stops at the first unclosed block)`;

const verdicts: FamilyVerdicts = {
  family: 'iquest-q1',
  engines: {
    vllm: noParserInfo(
      'main @ 0064cc9c',
      'vllm-project/vllm vllm/tool_parsers/__init__.py _TOOL_PARSERS_TO_REGISTER @ 0064cc9c (no iquest_q1; iquest_coder_v2 reads <iquestcoder_tool_call>, another marker)',
    ),
    sglang: {
      release: 'main @ 3d84681f',
      parser: 'iquest_q1',
      code: SGLANG,
      evidence: `${SGLANG} detect_and_parse @ 3d84681f; test/registered/unit/function_call/test_iquest_q1_detector.py @ 0adff0bc (test_incomplete_call_is_preserved_at_stream_end, test_non_stream_preserves_unparsed_text_around_valid_calls)`,
      note: 'read from the code and its tests: a block whose body is not NAME + whole <arg_key>/<arg_value> pairs stays in content; calls to tools the request does not offer are dropped',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no IQuest)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CALL_CLOSE} missing after a complete ${VALUE_CLOSE}`,
      verdicts: { vllm, sglang: v('content', `no call; ${leftOpen}`), dynamo },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a call body and ${CALL_CLOSE} without ${CALL_OPEN}`,
      verdicts: { vllm, sglang: v('content', 'no call; the text stays in content'), dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: `output stopped inside ${VALUE_OPEN}`,
      verdicts: { vllm, sglang: v('content', `no call; ${leftOpen}`), dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several calls lacks only ${CALL_CLOSE}`,
      verdicts: {
        vllm,
        sglang: v('mixed', `the closed calls are delivered; the last ${CALL_OPEN} block stays in content as written`),
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm,
        sglang: v('mixed', `the closed calls are delivered; the cut ${CALL_OPEN} block stays in content as written`),
        dynamo,
      },
    },
  ],
};

export const iquestQ1: Family<'iquest-q1'> = {
  id: 'iquest-q1',
  format,
  verdicts,
  tokenizer: { repo: 'IQuestLab/IQuest-Q1' },
  repair: {
    openers: [CALL_OPEN, KEY_OPEN, VALUE_OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
