/**
 * MeetKai Functionary v3.1 ('functionary-v31'), the Llama 3.1 custom-tool form, one element per call:
 *
 *   CONTENT<function=NAME>{"arg": 1}</function><function=NAME2>{…}</function><|eot_id|>
 *   CONTENT<|python_tag|>CODE<|eom_id|>                      (the built-in python tool: name `python`, {"code": CODE})
 *
 * The arguments are the JSON object written after `<function=NAME>`, kept as written. Qwen3-Coder's XML also opens with
 * `<function=NAME>`, but what follows there is `<parameter=…>`, never a JSON object: that is what tells the two apart.
 * Sources: llama.cpp `tests/test-chat.cpp` (template `meetkai-functionary-medium-v3.1.jinja`) and its Functionary v3.1
 * handler (`common_chat_params_init_functionary_v3_1_llama_3_1`: `<function=` + name + `>` + JSON + `</function>`, or
 * `<|python_tag|>` + the rest as the python tool's code). vLLM, SGLang and Dynamo register no parser for it.
 */
import { noParser, noParserInfo, type FamilyVerdicts } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  callUnclosed,
  endsInMarker,
  jsonBody,
  jsonValueEnd,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  type MarkerHit,
  type ParseOut,
  type PatternStarter,
  type TurnGrammar,
} from './shared';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const FUNCTION_OPEN = '<function=';
const FUNCTION_CLOSE = '</function>';
const PYTHON_TAG = '<|python_tag|>';
const EOM = '<|eom_id|>';
const EOT = '<|eot_id|>';
const ENDS = [EOM, EOT];

const TOOL_MARKERS = [FUNCTION_OPEN, FUNCTION_CLOSE, PYTHON_TAG];
/**
 * Closers first: a cut-short fragment reads as the first marker it starts. `<function=` is left out: mid-text,
 * `<function` followed by anything but `=` is prose or code (`the <function#`), so only a cut at the end of the text
 * is read as that marker cut short (`CUT_OPEN`).
 */
const MARKERS = [
  FUNCTION_CLOSE,
  EOM,
  EOT,
  THINK_CLOSE,
  PYTHON_TAG,
  '<|start_header_id|>',
  '<|end_header_id|>',
  '<|begin_of_text|>',
  THINK_OPEN,
];
const BODY_STOPS = [FUNCTION_CLOSE, FUNCTION_OPEN, PYTHON_TAG, ...ENDS];
/** Inside a call, a cut-short `<function=` is the next call cut off. */
const BODY_MARKERS = [...MARKERS, FUNCTION_OPEN];

/** `<function=NAME>{…}</function>` from `start`. */
function fn(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const index = out.calls.length;
  const nameStop = out.find(['>', '\n', '<'], hit.end);
  const nameRange = trimRange(text, hit.end, nameStop ? nameStop.start : text.length);
  const name = text.slice(...nameRange);
  if (nameStop?.marker !== '>') {
    // Cut off inside the name, or the name never closed before other text.
    const end = Math.max(nameRange[1], hit.end);
    out.addCall(name, '');
    out.seg('call', start, end, index);
    out.seg('call-name', nameRange[0], nameRange[1], index);
    if (!nameStop) callUnclosed(out, index, start, end, '>', end);
    else out.problem('malformed-call', `call ${index}: ${FUNCTION_OPEN}${name} not closed by >`, start, end, { callIndex: index });
    return end;
  }
  const bodyStart = nameStop.end;
  const body = jsonBody(out, bodyStart, BODY_STOPS, BODY_MARKERS);
  let argRange = body.range;
  // Cut off while `</function>` was being written (too short to name it): the arguments are the object that arrived.
  const objStart = skipWs(text, bodyStart);
  const objEnd = text[objStart] === '{' ? jsonValueEnd(text, objStart, argRange[1]) : -1;
  if (!body.stop && !body.cut && objEnd >= 0 && endsInMarker(text, skipWs(text, objEnd), BODY_MARKERS)) argRange = [objStart, objEnd];
  let end = body.stop || body.cut ? argRange[1] : Math.max(argRange[1], body.range[1]);
  let closed = false;
  let expectedAt = argRange[1];
  if (body.stop?.marker === FUNCTION_CLOSE) {
    end = body.stop.end;
    closed = true;
  } else if (body.cut?.marker === FUNCTION_CLOSE) {
    out.problem('marker-truncated', `${FUNCTION_CLOSE} is cut short`, body.cut.start, body.cut.end, {
      marker: FUNCTION_CLOSE,
      callIndex: index,
    });
    end = body.cut.end;
    expectedAt = body.cut.start;
  }
  end = Math.max(end, bodyStart);
  out.addCall(name, text.slice(...argRange));
  out.seg('call', start, end, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed) {
    callUnclosed(out, index, start, end, FUNCTION_CLOSE, Math.max(expectedAt, bodyStart));
    return end;
  }
  // A finished call: its body is one JSON object and nothing else.
  const what =
    argRange[1] === argRange[0]
      ? undefined
      : objEnd < 0
        ? 'the arguments are not a JSON object'
        : objEnd < argRange[1]
          ? 'text after the JSON arguments'
          : undefined;
  if (what) out.problem('malformed-call', `call ${index}: ${what}`, start, end, { callIndex: index });
  return end;
}

/** `<|python_tag|>CODE`: the built-in python tool, its code running to the end of the turn. */
function python(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const stop = out.find(ENDS, hit.end);
  const code = trimRange(text, hit.end, stop ? stop.start : text.length);
  const index = out.addCall('python', JSON.stringify({ code: text.slice(...code) }));
  const end = Math.max(code[1], hit.end);
  out.seg('call', start, end, index);
  out.seg('arguments', code[0], code[1], index);
  return end;
}

/** The text ends inside `<function=` (at least 4 characters of it arrived): the marker cut short. */
const CUT_OPEN: PatternStarter = {
  find: (text, from) => {
    for (let n = FUNCTION_OPEN.length - 1; n >= 4; n--) {
      const at = text.length - n;
      if (at >= from && text.endsWith(FUNCTION_OPEN.slice(0, n))) return at;
    }
    return -1;
  },
  parse: (out, start) => {
    out.seg('marker', start, out.text.length);
    out.problem('marker-truncated', `${FUNCTION_OPEN} is cut short`, start, out.text.length, { marker: FUNCTION_OPEN });
    return out.text.length;
  },
};

const GRAMMAR: TurnGrammar = {
  family: 'functionary-v31',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: false,
  ends: ENDS,
  starters: [
    { marker: FUNCTION_OPEN, parse: fn },
    { marker: PYTHON_TAG, parse: python },
  ],
  patterns: [CUT_OPEN],
};

const format: ModelFormat = {
  id: 'functionary-v31',
  displayName: 'Functionary v3.1 (<function=NAME>{JSON})',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // meetkai/functionary-small-v3.1, functionary-medium-v3.1 (and their -GGUF / -fp8 repos). v3.2 writes >>>NAME instead.
  matchesModel: (modelId) => /functionary[\w.-]*v3\.1(?![\d])/.test(modelKey(modelId)),
  // Only a JSON object right after `<function=NAME>` is Functionary's; Qwen3-Coder's `<parameter=` follows there.
  detectText: (text) => scoreText(text, [[/<function=[^>\n<]+>\s*\{/, 12]]),
  render: (m, opts) => {
    const { out, close } = renderStart(m, opts, { newlines: false });
    m.toolCalls.forEach((c, i) => {
      out.wrap(
        'call',
        () => {
          out.put(FUNCTION_OPEN).put(c.name, 'call-name', i).put('>').put(c.arguments, 'arguments', i);
          if (close.call(i)) out.put(FUNCTION_CLOSE);
        },
        i,
      );
    });
    if (close.turn) out.put(EOT, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(GRAMMAR, text),
};

// No engine of the three serves it: vLLM's and SGLang's parser tables and Dynamo's parser map hold no Functionary
// entry (MeetKai serves it with its own vLLM-based server; llama.cpp reads it, see the header).
const vllm = noParser('vLLM registers no Functionary parser');
const sglang = noParser('SGLang registers no Functionary parser');
const dynamo = noParser('Dynamo lists no Functionary parser family');
const all = { vllm, sglang, dynamo };

const verdicts: FamilyVerdicts = {
  family: 'functionary-v31',
  engines: {
    vllm: noParserInfo(
      'main @ 0064cc9c',
      'vllm-project/vllm vllm/tool_parsers/__init__.py _TOOL_PARSERS_TO_REGISTER @ 0064cc9c (no functionary)',
    ),
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no functionary)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no functionary)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${FUNCTION_CLOSE} missing after a complete JSON object`,
      verdicts: all,
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a JSON object and ${FUNCTION_CLOSE} without ${FUNCTION_OPEN}NAME>`,
      verdicts: all,
    },
    { id: '5.c', class: 'unclosed-truncated', calls: 'single', what: 'output stopped inside the JSON arguments', verdicts: all },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several calls lacks only ${FUNCTION_CLOSE}`,
      verdicts: all,
    },
    { id: '5.e', class: 'unclosed-truncated', calls: 'multi', what: 'the last of several calls cut off mid-value', verdicts: all },
  ],
};

export const functionaryV31: Family<'functionary-v31'> = {
  id: 'functionary-v31',
  format,
  verdicts,
  tokenizer: { repo: 'meetkai/functionary-small-v3.1' },
  repair: {
    openers: [FUNCTION_OPEN, PYTHON_TAG],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
