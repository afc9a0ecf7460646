/**
 * IBM granite-20b-functioncalling ('granite-20b-fc', vLLM `granite-20b-fc`): each call is `<function_call>` and one
 * JSON object, with no closer; the object's own `}` ends the call and the next `<function_call>` starts another:
 *
 *   CONTENT<function_call> {"name": "NAME", "arguments": {…}}<function_call> {"name": …}<|endoftext|>
 *
 * As vLLM's chat template for it writes an assistant turn (`'<function_call> ' + {name, arguments}|tojson` per call,
 * then `<|endoftext|>`); tool results come back after `<function_response>`. The arguments are the raw text of the
 * `arguments` member, never re-serialized. The model does not reason; `<think>` is read as elsewhere.
 * Sources: vLLM `vllm/tool_parsers/granite_20b_fc_tool_parser.py` (`extract_tool_calls`: `<function_call>\s*` then
 * `JSONDecoder.raw_decode` up to the next one), `tests/tool_parsers/test_granite_20b_fc_tool_parser.py`,
 * `examples/tool_chat_template_granite_20b_fc.jinja`.
 */
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from './shared';
import { jsonObjectCall, renderObjectCall } from './shared/json-object-call';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const OPEN = '<function_call>';
const RESPONSE = '<function_response>';
const LIBRARY = '<|function_call_library|>';
const END = '<|endoftext|>';

const TOOL_MARKERS = [OPEN, RESPONSE];
const MARKERS = [END, THINK_CLOSE, OPEN, RESPONSE, LIBRARY, THINK_OPEN];

const GRAMMAR: TurnGrammar = {
  family: 'granite-20b-fc',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: false,
  ends: [END],
  starters: [{ marker: OPEN, parse: call }],
};

/** One `<function_call>` and its JSON call object; anything but an object after the opener is malformed. */
function call(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const at = skipWs(text, hit.end);
  if (at >= text.length || text[at] === '{')
    return jsonObjectCall(out, { start, bodyFrom: hit.end, stops: [OPEN, RESPONSE, END], markers: MARKERS, argKeys: ['arguments'] });
  // A list or any other text where the call object belongs (vLLM gives up on the whole output).
  const stop = out.find([OPEN, RESPONSE, END], at);
  const body = trimRange(text, at, stop ? stop.start : text.length);
  const index = out.addCall('', text.slice(...body));
  out.seg('call', start, body[1], index);
  out.seg('arguments', body[0], body[1], index);
  out.problem('malformed-call', `call ${index}: ${OPEN} is not followed by a JSON call object`, start, body[1], { callIndex: index });
  return body[1];
}

const format: ModelFormat = {
  id: 'granite-20b-fc',
  displayName: 'granite-20b-functioncalling (<function_call> JSON)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // ibm-granite/granite-20b-functioncalling and its quantizations.
  matchesModel: (modelId) => /(?:^|[^a-z0-9])granite-?20b-?function-?call/.test(modelKey(modelId)),
  // A JSON call object right after `<function_call>`: no other family writes that tag.
  detectText: (text) =>
    scoreText(text, [
      [/<function_call>\s*\{/, 12],
      [RESPONSE, 3],
      [LIBRARY, 3],
    ]),
  render: (m, opts) => {
    const { out, close, hasContent } = renderStart(m, opts, { newlines: false });
    m.toolCalls.forEach((c, i) => {
      if (hasContent && i === 0) out.put(' ');
      out.wrap(
        'call',
        () => {
          out.put(`${OPEN} `);
          renderObjectCall(out, c, i, 'arguments', close.call(i));
        },
        i,
      );
    });
    if (close.turn) out.put(END, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/tool_parsers/granite_20b_fc_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const sglang = noParser('SGLang registers no granite-20b-functioncalling parser');
const dynamo = noParser('Dynamo lists no granite-20b-functioncalling parser family');
const allContent = `no call at all; one object that does not decode makes the parser give up, so the whole output, complete calls and markup included, is content`;

const verdicts: FamilyVerdicts = {
  family: 'granite-20b-fc',
  engines: {
    vllm: {
      release: 'main @ 443641cd',
      parser: 'granite-20b-fc',
      code: VLLM,
      evidence: `${VLLM} extract_tool_calls @ 443641cd; tests/tool_parsers/test_granite_20b_fc_tool_parser.py @ 41c5903d (malformed_input_outputs)`,
      note: `read from the code: every ${OPEN} must be followed by a whole JSON call object, else nothing is delivered; content is the text before the first ${OPEN}; streaming reads calls only when the output starts with ${OPEN}`,
    },
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no granite)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no granite)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: "the call object's closing } missing after complete arguments",
      verdicts: { vllm: v('content', allContent), sglang, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: { vllm: v('content', allContent), sglang, dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: "the last call object's closing } missing after complete arguments",
      verdicts: { vllm: v('content', allContent), sglang, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: v('content', allContent), sglang, dynamo },
    },
  ],
};

export const granite20bFc: Family<'granite-20b-fc'> = {
  id: 'granite-20b-fc',
  format,
  verdicts,
  tokenizer: { repo: 'ibm-granite/granite-20b-functioncalling' },
  repair: {
    openers: [OPEN],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
