/**
 * GLM-4.5 / 4.6 ('glm45'), GLM-4.7 / GLM-5.x ('glm47') and Ling 3 ('ling3'): one grammar, also the tag form of
 * GLM-5.3-Flash (families/glm53-flash.ts).
 *
 *   <think>REASONING</think>\nCONTENT\n<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call><|observation|>
 *
 * As the chat template writes it; GLM-4.7 and GLM-5 drop the newlines (SGLang `glm47_moe_detector.py`: "Detector for
 * GLM-4.7 and GLM-5 models"), Ling 3 makes the one after the name optional (SGLang `ling3_detector.py`), and a
 * literal `\n` escape is also seen after the name: all of them parse in every one of the three. The turn ends with the stop token `<|observation|>` after calls and `<|user|>`
 * otherwise. Arguments are canonical compact JSON (see `paramsToJson` in shared/xml-args.ts); the `arguments`
 * segment spans the `<arg_key>`/`<arg_value>` markup. Arguments that are not a JSON object are written
 * raw after the name and come back raw (flagged `malformed-call`). No call ids in the format.
 *
 * A value is data: a `<tool_call>` written inside `<arg_value>…</arg_value>` (a file that documents the format) does
 * not end the call, as it does not for the engines' `<tool_call>.*?</tool_call>` readers. GLM-5.3-Flash's JSON form
 * `<tool_call>NAME>{…}` is a call of that family; in the others it is read as NAME with its JSON and flagged
 * `malformed-call`, since their parsers never read it (SGLang and vLLM `glm47` take only complete
 * `<tool_call>…</tool_call>` spans, where the name would be `NAME>{…}`). In GLM-4.5, a call closed right after its
 * name (`<tool_call>NAME</tool_call>`, no line break) is flagged: SGLang's glm45 parser needs the line break
 * (`glm4_moe_detector.py`, test `test_missing_name_separator_yields_no_calls`) and drops the call without a trace.
 */
import type { AssistantMessage, FamilyId, NativeText } from '../../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  callUnclosed,
  renderStart,
  jsonToParams,
  jsonValueEnd,
  renderParams,
  modelKey,
  parseTurn,
  present,
  scoreText,
  skipLiteralNewlines,
  skipWs,
  trimRange,
  xmlCall,
  type MarkerHit,
  type ParamGrammar,
  type ParseOut,
  type TurnGrammar,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

export const CALL_OPEN = '<tool_call>';
export const CALL_CLOSE = '</tool_call>';
export const KEY_OPEN = '<arg_key>';
export const KEY_CLOSE = '</arg_key>';
export const VALUE_OPEN = '<arg_value>';
export const VALUE_CLOSE = '</arg_value>';
export const OBSERVATION = '<|observation|>';
const USER = '<|user|>';
const ENDOFTEXT = '<|endoftext|>';
const ENDS = [OBSERVATION, USER, ENDOFTEXT];
const ROLE_END = '<|role_end|>';

export const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE];
export const MARKERS = [
  CALL_CLOSE,
  VALUE_CLOSE,
  KEY_CLOSE,
  THINK_CLOSE,
  ...ENDS,
  CALL_OPEN,
  KEY_OPEN,
  VALUE_OPEN,
  THINK_OPEN,
  '<|assistant|>',
  '<|system|>',
];
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
    const key = text.slice(keyStart, keyEnd);
    if (text.startsWith(VALUE_OPEN, at)) return { key, valueStart: at + VALUE_OPEN.length };
    // A value written without its <arg_value> (Ollama model/parsers/glm46_test.go "unopened arg_value after arg_key"):
    // Ollama repairs it, but vLLM's and SGLang's GLM parsers pair a key only with an <arg_value>…</arg_value> after it
    // and drop the argument. Only the end of the text cutting `<arg_value>` short is not a defect.
    const cutShort = to === text.length && VALUE_OPEN.startsWith(text.slice(at, to));
    if (!cutShort)
      out.problem('malformed-call', `parameter '${key}' lacks ${VALUE_OPEN}`, pos, at, { marker: VALUE_OPEN, callIndex: out.calls.length });
    return { key, valueStart: at };
  },
};

/** How a GLM-style family departs from the shared grammar. */
export interface GlmDialect {
  /**
   * `<tool_call>NAME>{…}` (no close tag): GLM-5.3-Flash's JSON call form (`call`), or a form the family's parsers
   * do not read (`foreign`: the call is read and flagged `malformed-call`).
   */
  jsonForm: 'call' | 'foreign';
  /** A call closed right after its name, with no line break, is flagged (GLM-4.5: SGLang drops it). */
  nameNewline: boolean;
  /** End-of-turn markers of the family besides GLM's (Ling 3's `<|role_end|>`). */
  ends?: readonly string[];
}

const DIALECTS: Record<'glm45' | 'glm47' | 'ling3', GlmDialect> = {
  glm45: { jsonForm: 'foreign', nameNewline: true },
  glm47: { jsonForm: 'foreign', nameNewline: false },
  // Ling 3 ends its turn with `<|role_end|>`, which the model may also spell out as text (llama.cpp
  // common/parsers/ling3.cpp `ROLE_END`, consumed rather than left in the content; tests/test-chat.cpp "Ling 3.0").
  ling3: { jsonForm: 'foreign', nameNewline: false, ends: [ROLE_END] },
};

/** The turn grammar of a GLM-style family. */
export function glmGrammar(family: FamilyId, dialect: GlmDialect): TurnGrammar {
  return {
    family,
    toolMarkers: TOOL_MARKERS,
    markers: MARKERS,
    implicitThink: true,
    ends: [...ENDS, ...(dialect.ends ?? [])],
    // A call opened inside a thinking block left open ends it: vLLM's and SGLang's GLM reasoning parsers stop at
    // `<tool_call>`, so the engines still deliver the call.
    reasoningEnds: [CALL_OPEN],
    starters: [{ marker: CALL_OPEN, parse: (out, start, hit) => call(out, start, hit, dialect) }],
  };
}

/** One of the three, differing in the model ids and in whether render writes the newlines. */
function glmFamily(
  id: 'glm45' | 'glm47' | 'ling3',
  displayName: string,
  newlines: boolean,
  matches: (key: string) => boolean,
): ModelFormat {
  const grammar = glmGrammar(id, DIALECTS[id]);
  return {
    id,
    displayName,
    markers: [...MARKERS, ...(DIALECTS[id].ends ?? [])],
    toolMarkers: TOOL_MARKERS,
    matchesModel: (modelId) => matches(modelKey(modelId)),
    detectText: (text) =>
      scoreText(text, [
        [KEY_OPEN, 10],
        [VALUE_OPEN, 6],
        [/<tool_call>[^\s<{]/, 4],
        [OBSERVATION, 2],
        // GLM-4.7's marks: the first <arg_key> right after the name, a call without arguments closed right after it.
        [/<tool_call>[^\s<{>]+(?:<arg_key>|<\/tool_call>)/, newlines ? 0 : 1],
      ]),
    render: (m, opts) => renderGlm(m, opts, newlines),
    parse: (text) => parseTurn(grammar, text),
  };
}

export const glm45 = glmFamily('glm45', 'GLM-4.5 / 4.6', true, (key) => /glm-?4\.[56](?![\d])/.test(key));
// GLM-5.3-Flash has a dialect of its own (families/glm53-flash.ts).
export const glm47 = glmFamily(
  'glm47',
  'GLM-4.7 / GLM-5',
  false,
  (key) => /glm-?(?:4\.[7-9]|[5-9])(?![\d])/.test(key) && !/glm-?5\.3-?flash/.test(key),
);
export const ling3 = glmFamily('ling3', 'Ling 3', true, (key) => /(?:^|[^a-z])ling-?(?:3|v3)(?![\d])/.test(key));

/** Writes a turn the way the chat template does (`newlines`: GLM-4.5's line breaks around the parameters). */
export function renderGlm(m: AssistantMessage, opts: RenderOptions | undefined, newlines: boolean): NativeText {
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
        out
          .put(CALL_OPEN)
          .put(c.name, 'call-name', i)
          .put(jsonToParams(c.arguments) ? nl : '\n');
        renderParams(out, i, c.arguments, (k, v) => `${KEY_OPEN}${k}${KEY_CLOSE}${nl}${VALUE_OPEN}${v}${VALUE_CLOSE}`, nl);
        if (close.call(i)) out.put(CALL_CLOSE);
      },
      i,
    );
  });
  if (close.turn) out.put(m.toolCalls.length ? OBSERVATION : USER, 'end');
  return out.done();
}

function call(out: ParseOut, start: number, hit: MarkerHit, dialect: GlmDialect): number {
  const { text } = out;
  if (text.startsWith(CALL_OPEN, skipLiteralNewlines(text, hit.end, text.length))) {
    // A `<tool_call>` the next one follows at once, with no name (`prose <tool_call><tool_call>get_weather…`): no call
    // opened there. vLLM's glm47 parser drops it (tests/parser/engine/test_glm47_stray_tool_call.py).
    out.seg('marker', hit.start, hit.end);
    out.problem('stray-marker', `${CALL_OPEN} with no call, right before another ${CALL_OPEN}`, hit.start, hit.end, { marker: CALL_OPEN });
    return hit.end;
  }
  const stop = bodyStop(out, hit.end, dialect.ends ?? []);
  const to = stop ? stop.start : text.length;
  // The name runs to the first newline (real or a literal `\n`) or markup; a `>` ends it in the JSON form.
  const nameStop = out.find(['\n', '\\n', '<', '>'], hit.end, to);
  const nameRange = trimRange(text, hit.end, nameStop ? nameStop.start : to);
  if (nameStop?.marker === '>') return jsonCall(out, start, nameRange, nameStop.end, dialect);
  const defects: string[] = [];
  if (
    dialect.nameNewline &&
    stop?.marker === CALL_CLOSE &&
    !/\n|\\n/.test(text.slice(hit.end, stop.start)) &&
    nameRange[1] > nameRange[0] &&
    !text.slice(nameRange[1], stop.start).trim()
  ) {
    defects.push(
      `no line break after the name: SGLang's GLM-4.5 parser (glm45) reads a call only from <tool_call>NAME followed by a line break, and drops this one without a trace, where vLLM, whose glm45 is its GLM-4.7 parser, reads it (the template writes <tool_call>${text.slice(...nameRange)}\\n</tool_call>)`,
    );
  }
  const bodyStart = skipLiteralNewlines(text, nameRange[1], to);
  return xmlCall(
    out,
    { start, nameRange, bodyStart, stop, closers: [CALL_CLOSE], defects },
    PARAMS,
    dialect.ends ? [...MARKERS, ...dialect.ends] : MARKERS,
  );
}

/**
 * What ends a call's body: its `</tool_call>`, the next `<tool_call>` or the end of the turn. Inside a value that its
 * `</arg_value>` closes, a `<tool_call>` is text (the model writing about the format); a value whose close never comes
 * before other markup ends at the first of them, as before.
 */
function bodyStop(out: ParseOut, from: number, ends: readonly string[]): MarkerHit | undefined {
  const stops = [...BODY_STOPS, ...ends];
  let pos = from;
  for (;;) {
    const hit = out.find([...stops, VALUE_OPEN], pos);
    if (!hit || hit.marker !== VALUE_OPEN) return hit;
    const close = out.find([VALUE_CLOSE], hit.end);
    const markup = out.find([CALL_CLOSE, ...ENDS, ...ends, KEY_OPEN, KEY_CLOSE, VALUE_OPEN], hit.end);
    if (!close || (markup && markup.start < close.start)) return out.find(stops, hit.end);
    pos = close.end;
  }
}

const JSON_STOPS = [CALL_OPEN, CALL_CLOSE, ...ENDS];

/**
 * GLM-5.3-Flash's JSON form from the `>` after the name: `<tool_call>NAME>{…}`, no close tag; the call ends with its
 * JSON (SGLang `glm53_flash_detector.py` reads the arguments up to the next `<tool_call>`, `</tool_call>` or the end).
 */
function jsonCall(out: ParseOut, start: number, nameRange: [number, number], from: number, dialect: GlmDialect): number {
  const { text } = out;
  const index = out.calls.length;
  const name = text.slice(...nameRange);
  const defects: string[] = name ? [] : ['no function name before the >'];
  if (dialect.jsonForm === 'foreign') {
    defects.push(
      `${name}>{…} is GLM-5.3-Flash's JSON call form, which this family's parsers do not read (vLLM and SGLang take no call from it, or one named "${name}>{…}")`,
    );
  }
  let jsonStart = skipWs(text, from);
  const next = out.find([...JSON_STOPS, ...(dialect.ends ?? [])], jsonStart);
  const limit = next ? next.start : text.length;
  if (text[jsonStart] !== '{' && text[jsonStart] !== '[' && jsonStart < limit) {
    const brace = text.indexOf('{', jsonStart);
    if (brace >= 0 && brace < limit) {
      defects.push(`text between ${name}> and its JSON arguments`);
      jsonStart = brace;
    }
  }
  let end: number;
  let args: string;
  let argStart = jsonStart;
  let missing = false;
  const isJson = jsonStart < limit && (text[jsonStart] === '{' || text[jsonStart] === '[');
  const jsonEnd = isJson ? jsonValueEnd(text, jsonStart) : -1;
  if (jsonEnd >= 0) {
    end = jsonEnd;
    args = text.slice(jsonStart, jsonEnd);
    if (text[jsonStart] === '[') defects.push('the arguments are a JSON array, not an object');
    const after = skipWs(text, jsonEnd);
    if (text.startsWith(CALL_CLOSE, after)) {
      end = after + CALL_CLOSE.length;
      if (dialect.jsonForm === 'call') defects.push(`the JSON form takes no ${CALL_CLOSE}: SGLang leaves it in the content`);
    }
  } else {
    // No whole JSON: cut off by the end of the output, or broken off by the next call or the end of the turn.
    const [s, e] = trimRange(text, jsonStart, limit);
    argStart = s;
    end = Math.max(e, from);
    args = text.slice(s, e);
    if (isJson ? !next : !args && !next) missing = true;
    else defects.push(isJson ? 'its JSON arguments never close' : `no JSON arguments after ${name}>`);
  }
  out.addCall(name, args);
  out.seg('call', start, end, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  if (args) out.seg('arguments', argStart, argStart + args.length, index);
  if (missing) callUnclosed(out, index, start, end, '}', end);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, end, { callIndex: index });
  return end;
}
