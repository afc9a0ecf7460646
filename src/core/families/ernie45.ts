/**
 * Baidu ERNIE 4.5 ('ernie45', vLLM `ernie45`): Hermes' `<tool_call>` JSON after the reasoning, the answer wrapped in
 * `<response>`:
 *
 *   REASONING\n</think>\n\n<response>\nCONTENT\n</response>\n
 *   REASONING\n</think>\n\n<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call>\n<tool_call>\n…\n</tool_call>\n
 *
 * The generation prompt opens the reasoning, so a completion starts inside it and only closes it. The answer comes in
 * `<response>…</response>` (vLLM's reasoning parser strips the pair) or bare; calls follow the reasoning without the
 * wrapper. The arguments are the raw text of the `arguments` member, never re-serialized.
 * Every marker of the family is also Qwen3's (`<tool_call>`, `<think>`) or Granite 3's (`<response>`): it is told by
 * its model id, never by its markers.
 * Sources: vLLM `vllm/tool_parsers/ernie45_tool_parser.py` (class docstring, `tool_call_regex`, `extract_tool_calls`),
 * `vllm/reasoning/ernie45_reasoning_parser.py` (docstring: the `<response>` wrapper), and
 * `tests/tool_parsers/test_ernie45_moe_tool_parser.py`.
 */
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  RenderOut,
  THINK_CLOSE,
  THINK_OPEN,
  closing,
  modelKey,
  parseTurn,
  present,
  renderThink,
  type ParseOut,
  type Starter,
  type TurnGrammar,
} from './shared';
import { jsonObjectCall, renderObjectCall } from './shared/json-object-call';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const RESPONSE = { open: '<response>', close: '</response>' };

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [CALL_CLOSE, RESPONSE.close, THINK_CLOSE, CALL_OPEN, RESPONSE.open, THINK_OPEN];

/** A reply wrapper: a marker segment; the text between the two is the content. */
const wrapper = (marker: string): Starter => ({
  marker,
  parse: (out: ParseOut, _start, hit) => (out.seg('marker', hit.start, hit.end), hit.end),
});

const GRAMMAR: TurnGrammar = {
  family: 'ernie45',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  ends: [],
  starters: [
    {
      marker: CALL_OPEN,
      parse: (out, start, hit) =>
        jsonObjectCall(out, {
          start,
          bodyFrom: hit.end,
          close: CALL_CLOSE,
          stops: [CALL_OPEN, RESPONSE.open],
          markers: MARKERS,
          argKeys: ['arguments', 'parameters'],
        }),
    },
    wrapper(RESPONSE.open),
    wrapper(RESPONSE.close),
  ],
};

const format: ModelFormat = {
  id: 'ernie45',
  displayName: 'ERNIE 4.5 (<tool_call> JSON, <response>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // baidu/ERNIE-4.5-21B-A3B-Thinking, ERNIE-4.5-300B-A47B-PT, the VL models; OpenRouter baidu/ernie-4.5-21b-a3b….
  matchesModel: (modelId) => /(?:^|[^a-z])ernie-?4\.5(?![\d])/.test(modelKey(modelId)),
  // No marker of its own: `<tool_call>` is Qwen3's and Hermes', `<response>` Granite 3's.
  detectText: () => 0,
  render: (m, opts) => {
    const close = closing(m, opts);
    const out = new RenderOut();
    renderThink(out, m.reasoning, true, close.reasoning);
    if (present(m.content)) {
      if (m.toolCalls.length) out.put(m.content!, 'content');
      else {
        // A reply that calls no tool comes in <response>.
        out.put(RESPONSE.open, 'marker').put('\n').put(m.content!, 'content');
        if (close.turn) out.put('\n').put(RESPONSE.close, 'marker');
      }
    }
    m.toolCalls.forEach((c, i) => {
      if (present(m.content) || i > 0) out.put('\n');
      out.wrap(
        'call',
        () => {
          out.put(`${CALL_OPEN}\n`);
          renderObjectCall(out, c, i, 'arguments', close.call(i));
          if (close.call(i)) out.put(`\n${CALL_CLOSE}`);
        },
        i,
      );
    });
    return out.done();
  },
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/tool_parsers/ernie45_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const sglang = noParser('SGLang registers no ERNIE parser');
const dynamo = noParser('Dynamo lists no ERNIE parser family');

const verdicts: FamilyVerdicts = {
  family: 'ernie45',
  engines: {
    vllm: {
      release: 'main @ 7d8312ef',
      parser: 'ernie45',
      code: VLLM,
      evidence: `${VLLM} tool_call_regex, extract_tool_calls @ 7d8312ef; tests/tool_parsers/test_ernie45_moe_tool_parser.py @ 0a26f84c`,
      note: `read from the code: only whole ${CALL_OPEN}{…}${CALL_CLOSE} blocks are read; once ${CALL_OPEN} appears, content is the text before it and everything after it that is not a whole block is gone`,
    },
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no ernie)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no ernie; its hermes parser reads the same blocks when configured)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CALL_CLOSE} missing, the JSON body complete`,
      verdicts: { vllm: v('dropped', `no call; the markup is dropped, the text before ${CALL_OPEN} is content`), sglang, dynamo },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a JSON body and ${CALL_CLOSE} without ${CALL_OPEN}`,
      verdicts: { vllm: v('content', 'no call; the whole text stays in content'), sglang, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the JSON arguments',
      verdicts: { vllm: v('dropped', `no call; the cut markup is dropped, the text before ${CALL_OPEN} is content`), sglang, dynamo },
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

export const ernie45: Family<'ernie45'> = {
  id: 'ernie45',
  format,
  verdicts,
  tokenizer: { repo: 'baidu/ERNIE-4.5-21B-A3B-Thinking' },
  repair: {
    openers: [CALL_OPEN],
    stripped: [RESPONSE.open, RESPONSE.close],
    arguments: 'json',
    callIds: 'digest',
  },
};
