/**
 * GLM-4.5 / 4.6 ('glm45'), GLM-4.7 / GLM-5.x ('glm47') and Ling 3 ('ling3'): one grammar.
 *
 *   <think>REASONING</think>\nCONTENT\n<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call><|observation|>
 *
 * As the chat template writes it; GLM-4.7 and GLM-5 drop the newlines (SGLang `glm47_moe_detector.py`: "Detector for
 * GLM-4.7 and GLM-5 models"), Ling 3 makes the one after the name optional (SGLang `ling3_detector.py`), and a
 * literal `\n` escape is also seen after the name: all of them parse in every one of the three. The turn ends with the stop token `<|observation|>` after calls and `<|user|>`
 * otherwise. Arguments are canonical compact JSON (see `paramsToJson` in base.ts); the `arguments`
 * segment spans the `<arg_key>`/`<arg_value>` markup. Arguments that are not a JSON object are written
 * raw after the name and come back raw (flagged `malformed-call`). No call ids in the format.
 */
import type { AssistantMessage, NativeText } from '../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  renderStart,
  jsonToParams,
  renderParams,
  modelKey,
  parseTurn,
  present,
  scoreText,
  skipWs,
  trimRange,
  xmlCall,
  type MarkerHit,
  type ParamGrammar,
  type ParseOut,
  type TurnGrammar,
} from './base';
import type { ModelFormat, RenderOptions } from './types';

export const CALL_OPEN = '<tool_call>';
export const CALL_CLOSE = '</tool_call>';
export const KEY_OPEN = '<arg_key>';
export const KEY_CLOSE = '</arg_key>';
export const VALUE_OPEN = '<arg_value>';
export const VALUE_CLOSE = '</arg_value>';
const OBSERVATION = '<|observation|>';
const USER = '<|user|>';
const ENDOFTEXT = '<|endoftext|>';
const ENDS = [OBSERVATION, USER, ENDOFTEXT];

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE];
const MARKERS = [CALL_CLOSE, VALUE_CLOSE, KEY_CLOSE, THINK_CLOSE, ...ENDS, CALL_OPEN, KEY_OPEN, VALUE_OPEN, THINK_OPEN, '<|assistant|>', '<|system|>'];
const BODY_STOPS = [CALL_CLOSE, CALL_OPEN, ...ENDS];

const PARAMS: ParamGrammar = {
  headStart: KEY_OPEN,
  close: VALUE_CLOSE,
  newlines: false,
  head: (out, pos, to) => {
    const { text } = out;
    if (!text.startsWith(KEY_OPEN, pos)) return undefined;
    const keyStart = pos + KEY_OPEN.length;
    const keyEnd = out.find([KEY_CLOSE], keyStart, to)?.start;
    // A key cut off (or never closed) leaves no value: it ends the body.
    if (keyEnd === undefined) return { key: text.slice(keyStart, to).trim(), valueStart: to };
    const at = skipLiteralNewlines(text, keyEnd + KEY_CLOSE.length, to);
    const valueStart = text.startsWith(VALUE_OPEN, at) ? at + VALUE_OPEN.length : at;
    return { key: text.slice(keyStart, keyEnd), valueStart };
  },
};

/** Whitespace, including the literal `\n` escapes some GLM outputs carry between markers. */
function skipLiteralNewlines(text: string, pos: number, to: number): number {
  for (;;) {
    const at = skipWs(text, pos, to);
    if (!text.startsWith('\\n', at)) return at;
    pos = at + 2;
  }
}

/** One of the three, differing in the model ids and in whether render writes the newlines. */
function glmFamily(id: 'glm45' | 'glm47' | 'ling3', displayName: string, newlines: boolean, matches: (key: string) => boolean): ModelFormat {
  const grammar: TurnGrammar = {
    family: id,
    toolMarkers: TOOL_MARKERS,
    markers: MARKERS,
    implicitThink: true,
    ends: ENDS,
    starters: [{ marker: CALL_OPEN, parse: call }],
  };
  return {
    id,
    displayName,
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    matchesModel: (modelId) => matches(modelKey(modelId)),
    detectText: (text) =>
      scoreText(text, [
        [KEY_OPEN, 10],
        [VALUE_OPEN, 6],
        [/<tool_call>[^\s<{]/, 4],
        [OBSERVATION, 2],
        // GLM-4.7's mark: the first <arg_key> right after the name.
        [/<tool_call>[^\s<{>]+<arg_key>/, newlines ? 0 : 1],
      ]),
    render: (m, opts) => render(m, opts, newlines),
    parse: (text) => parseTurn(grammar, text),
  };
}

export const glm45 = glmFamily('glm45', 'GLM-4.5 / 4.6', true, (key) => /glm-?4\.[56](?![\d])/.test(key));
export const glm47 = glmFamily('glm47', 'GLM-4.7 / GLM-5', false, (key) => /glm-?(?:4\.[7-9]|[5-9])(?![\d])/.test(key));
export const ling3 = glmFamily('ling3', 'Ling 3', true, (key) => /(?:^|[^a-z])ling-?(?:3|v3)(?![\d])/.test(key));

function render(m: AssistantMessage, opts: RenderOptions | undefined, newlines: boolean): NativeText {
  const nl = newlines ? '\n' : '';
  // GLM puts a line break after `</think>` whatever follows it, content or a call.
  const { out, close, hasContent } = renderStart(m, opts, { newlines: false, afterThink: '\n' });
  m.toolCalls.forEach((c, i) => {
    if (newlines && (hasContent || i > 0 || present(m.reasoning))) out.put('\n');
    else if (!newlines && i === 0 && (hasContent || present(m.reasoning))) out.put('\n');
    out.wrap(
      'call',
      () => {
        // Arguments that are not parameters go on their own line, so the name still ends.
        out.put(CALL_OPEN).put(c.name, 'call-name', i).put(jsonToParams(c.arguments) ? nl : '\n');
        renderParams(out, i, c.arguments, (k, v) => `${KEY_OPEN}${k}${KEY_CLOSE}${nl}${VALUE_OPEN}${v}${VALUE_CLOSE}`, nl);
        if (close.call(i)) out.put(CALL_CLOSE);
      },
      i,
    );
  });
  if (close.turn) out.put(m.toolCalls.length ? OBSERVATION : USER, 'end');
  return out.done();
}

function call(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const stop = out.find(BODY_STOPS, hit.end);
  const to = stop ? stop.start : text.length;
  // The name runs to the first newline (real or a literal `\n`) or markup.
  const nameStop = out.find(['\n', '\\n', '<'], hit.end, to);
  const nameRange = trimRange(text, hit.end, nameStop ? nameStop.start : to);
  const bodyStart = skipLiteralNewlines(text, nameRange[1], to);
  return xmlCall(out, { start, nameRange, bodyStart, stop, closers: [CALL_CLOSE], defects: [] }, PARAMS, MARKERS);
}
