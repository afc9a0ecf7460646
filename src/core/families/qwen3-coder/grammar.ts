/**
 * Qwen3-Coder XML calls, one block per call:
 *
 *   CONTENT\n<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call><|im_end|>
 *
 * Arguments are canonical compact JSON (see `paramsToJson` in shared/xml-args.ts): string values stay strings, a value
 * that reads as another JSON value is that value. The `arguments` segment spans the parameter markup.
 * Arguments that are not a JSON object are written raw inside `<function=…>` and come back raw (flagged
 * `malformed-call`). Like SGLang's detector, a `<function=` without `<tool_call>` is still read (flagged),
 * and a call cut off mid-parameter keeps the parameters that arrived (Continue #11453:
 * `<tool_call><function=ls><parameter=dirPath>src`).
 */
import {
  callUnclosed,
  endsInMarker,
  renderParams,
  modelKey,
  parseTurn,
  scoreText,
  skipWs,
  trimRange,
  xmlCall,
  type ParamGrammar,
  type ParseOut,
  type TurnGrammar,
} from '../shared';
import { CALL_CLOSE, CALL_OPEN, IM_END, QWEN_ENDS, QWEN_MARKERS, renderQwenTurn } from '../qwen3/grammar';
import type { ModelFormat } from '../shared/format';

export const FUNCTION_OPEN = '<function=';
export const FUNCTION_CLOSE = '</function>';
export const PARAM_OPEN = '<parameter=';
export const PARAM_CLOSE = '</parameter>';

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE];
const MARKERS = [PARAM_CLOSE, FUNCTION_CLOSE, ...QWEN_MARKERS, FUNCTION_OPEN, PARAM_OPEN];

const PARAMS: ParamGrammar = {
  headStart: PARAM_OPEN,
  close: PARAM_CLOSE,
  newlines: true,
  head: (out, pos, to) => {
    const { text } = out;
    if (!text.startsWith(PARAM_OPEN, pos)) return undefined;
    const keyStart = pos + PARAM_OPEN.length;
    const gt = out.find(['>'], keyStart, to)?.start;
    if (gt === undefined) return { key: text.slice(keyStart, to).trim(), valueStart: to };
    return { key: text.slice(keyStart, gt).trim(), valueStart: gt + 1 };
  },
};

/** The `<function=…>` XML inside a family's call wrapper (`<tool_call>`, Seed-OSS `<seed:tool_call>`). */
export interface FunctionXml {
  family: TurnGrammar['family'];
  callOpen: string;
  callClose: string;
  ends: readonly string[];
  markers: readonly string[];
  toolMarkers: readonly string[];
  think?: TurnGrammar['think'];
  /** Values are written without the line break on each side (Seed-OSS); Qwen3-Coder's have one, stripped. */
  rawValues?: boolean;
  /** Starters that end a reasoning block left open, as the engines read it (`TurnGrammar.reasoningEnds`). */
  reasoningEnds?: readonly string[];
  /** The prompt may open the reasoning, so a completion can start inside it (`TurnGrammar.implicitThink`). */
  implicitThink?: boolean;
}

/** The turn grammar of a `<function=…>` XML family. */
export function functionXmlGrammar(x: FunctionXml): TurnGrammar {
  return {
    family: x.family,
    toolMarkers: x.toolMarkers,
    markers: x.markers,
    implicitThink: x.implicitThink ?? false,
    think: x.think,
    ends: x.ends,
    reasoningEnds: x.reasoningEnds,
    starters: [
      { marker: x.callOpen, parse: (out, start, hit) => block(x, out, start, hit.end) },
      { marker: FUNCTION_OPEN, parse: (out, start) => fn(x, out, start, start, false) },
    ],
  };
}

// Qwen3.5 may open `<tool_call>` without closing `</think>`: vLLM's qwen3 reasoning parser (when `<function=` follows)
// and SGLang's Qwen3Detector (`tool_start_token`) both end the reasoning there, so the call still runs.
// The thinking prompts of Qwen3.5 / 3.6, Nemotron 3 Nano and Step-3.5 end with `<think>\n`, so their completions start
// inside the reasoning and close it with a bare `</think>` (llama.cpp tests/test-chat.cpp "Qwen3.5", "NVIDIA Nemotron-3
// Nano", "StepFun3.5-Flash"; Ollama model/parsers/nemotron3nano_test.go, qwen35_test.go): text before it is reasoning.
const XML: FunctionXml = {
  family: 'qwen3-coder',
  callOpen: CALL_OPEN,
  callClose: CALL_CLOSE,
  ends: QWEN_ENDS,
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  reasoningEnds: [CALL_OPEN],
  implicitThink: true,
};
const GRAMMAR = functionXmlGrammar(XML);
const RAW_PARAMS: ParamGrammar = { ...PARAMS, newlines: false };

export const qwen3Coder: ModelFormat = {
  id: 'qwen3-coder',
  displayName: 'Qwen3-Coder XML (Qwen3-Coder, Qwen3.5 / 3.6, MiMo, Step-3.5)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // Qwen3.5 / 3.6, MiMo, Step-3.5 and Nemotron 3 Nano use the same XML (vLLM `qwen3_coder`/`qwen3_xml`/`mimo`/
  // `step3p5` parsers; SGLang maps `step3p5` to `Qwen3CoderDetector`; Dynamo fixtures `nemotron_nano`).
  // MiMo-VL (a Qwen2.5-VL model) writes Qwen2.5's `<tool_call>` JSON instead (qwen3/grammar.ts).
  matchesModel: (modelId) =>
    /qwen3-coder|qwen3\.[5-9]|(?:^|[^a-z])mimo(?!-?vl)|step-?3\.5|step3p5|nemotron-3-nano|nemotron-nano-3/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      // Not `<function=NAME>{…`: a JSON object there is Functionary v3.1's call (families/functionary.ts).
      [/<function=(?![^>\n<]*>\s*\{)/, 10],
      [PARAM_OPEN, 6],
      [FUNCTION_CLOSE, 4],
      [CALL_OPEN, 2],
      [IM_END, 1],
    ]),
  render: (m, opts) =>
    renderQwenTurn(m, opts, (out, c, i, closed) => {
      out.put(FUNCTION_OPEN).put(c.name, 'call-name', i).put('>\n');
      renderParams(out, i, c.arguments, (k, v) => `${PARAM_OPEN}${k}>\n${v}\n${PARAM_CLOSE}`);
      if (closed) out.put(FUNCTION_CLOSE);
    }),
  parse: (text) => parseTurn(GRAMMAR, text),
};

/** A `<tool_call>` block; its function starts after `bodyStart`. */
function block(x: FunctionXml, out: ParseOut, start: number, bodyStart: number): number {
  const { text } = out;
  const at = skipWs(text, bodyStart);
  if (text.startsWith(FUNCTION_OPEN, at)) return fn(x, out, start, at, true);
  // Not this family's grammar inside the block (e.g. Hermes JSON): report it and move past.
  const stop = out.find([x.callClose, x.callOpen, ...x.ends], bodyStart);
  const end = stop?.marker === x.callClose ? stop.end : stop ? stop.start : text.length;
  // Cut off while `<function=` was being written: no arguments yet.
  const cutFunction = !stop && endsInMarker(text, at, [FUNCTION_OPEN]);
  const index = out.addCall('', cutFunction ? '' : text.slice(...trimRange(text, bodyStart, stop ? stop.start : end)));
  out.seg('call', start, end, index);
  if (stop?.marker === x.callClose)
    out.problem('malformed-call', `call ${index}: no ${FUNCTION_OPEN}NAME> inside ${x.callOpen}`, start, end, { callIndex: index });
  else callUnclosed(out, index, start, end, x.callClose, trimRange(text, bodyStart, end)[1]);
  return end;
}

/** `<function=NAME>` at `fnStart` and its parameters; `wrapped` when inside `<tool_call>`. */
function fn(x: FunctionXml, out: ParseOut, start: number, fnStart: number, wrapped: boolean): number {
  const { text } = out;
  const nameStart = fnStart + FUNCTION_OPEN.length;
  const nameStop = out.find(['>', '\n', '<'], nameStart);
  const nameRange = trimRange(text, nameStart, nameStop ? nameStop.start : text.length);
  const closed = nameStop?.marker === '>';
  const bodyStart = closed ? nameStop.end : nameRange[1];
  return xmlCall(
    out,
    {
      start,
      nameRange,
      nameUnclosed: closed ? undefined : '>',
      bodyStart,
      stop: out.find([FUNCTION_CLOSE, x.callClose, x.callOpen, FUNCTION_OPEN, ...x.ends], bodyStart),
      closers: wrapped ? [FUNCTION_CLOSE, x.callClose] : [FUNCTION_CLOSE],
      defects: wrapped ? [] : [`${FUNCTION_OPEN} without ${x.callOpen}`],
    },
    x.rawValues ? RAW_PARAMS : PARAMS,
    x.markers,
  );
}
