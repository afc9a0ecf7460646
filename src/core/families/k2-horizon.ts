/**
 * K2-Horizon (IFM) ('k2-horizon'): the IFM chat format, `<ifm|…>` tags that are single tokens.
 *
 *   REASONING</ifm|think>CONTENT<ifm|tool_calls>
 *   <ifm|tool_call>NAME
 *   <ifm|arg_key>KEY</ifm|arg_key>
 *   [<ifm|arg_type>TYPE</ifm|arg_type>]
 *   <ifm|arg_value>VALUE</ifm|arg_value>
 *   </ifm|tool_call>
 *   </ifm|tool_calls><|ifm|im_end|>
 *
 * The generation prompt ends with the reasoning opener (`<ifm|think>`, `<ifm|think_fast>` or `<ifm|think_faster>` by
 * the requested effort), so the output usually starts inside reasoning and only closes it. The chat template's
 * `tool_call_format` picks how a call is written: `xml` (the default), `xml_typed` (each value's type in
 * `<ifm|arg_type>`) or `json` (`<ifm|tool_call>{"name": …, "arguments": {…}}</ifm|tool_call>`); the body tells them
 * apart (SGLang `k2_v3_detector.py` `_parse_block`). Untyped values read as JSON when they are JSON, else as the text
 * written (untrimmed); a typed `string` or `any` value is the text; any other type is its JSON reading (SGLang
 * `_coerce_value`, vLLM `k2_horizon_tool_parser.py` `_coerce_xml_value`). Arguments come back as canonical compact
 * JSON, typed by the request's schema elsewhere; JSON-form arguments as written. The turn ends with `<|ifm|im_end|>`
 * (or `<|ifm|endoftext|>`). A call outside `<ifm|tool_calls>` is read and flagged: vLLM reads calls only inside it.
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../model';
import { noParser, noParserInfo, type FamilyVerdicts } from './shared/verdicts';
import {
  callUnclosed,
  endsInMarker,
  expectClosers,
  jsonMembers,
  jsonValueEnd,
  modelKey,
  parseSection,
  parseTurn,
  renderParams,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  xmlCall,
  type JsonMember,
  type MarkerHit,
  type ParamGrammar,
  type ParamType,
  type ParseOut,
  type SectionGrammar,
  type ThinkTags,
  type TurnGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { Family } from './types';

const SECTION_BEGIN = '<ifm|tool_calls>';
const SECTION_END = '</ifm|tool_calls>';
const CALL_BEGIN = '<ifm|tool_call>';
const CALL_END = '</ifm|tool_call>';
const KEY_OPEN = '<ifm|arg_key>';
const KEY_CLOSE = '</ifm|arg_key>';
const TYPE_OPEN = '<ifm|arg_type>';
const TYPE_CLOSE = '</ifm|arg_type>';
const VALUE_OPEN = '<ifm|arg_value>';
const VALUE_CLOSE = '</ifm|arg_value>';
const IM_END = '<|ifm|im_end|>';
const ENDOFTEXT = '<|ifm|endoftext|>';
/** The reasoning tags, by effort: high, medium, low. */
const THINKS: readonly ThinkTags[] = ['think', 'think_fast', 'think_faster'].map((t) => ({ open: `<ifm|${t}>`, close: `</ifm|${t}>` }));

const TOOL_MARKERS = [
  SECTION_BEGIN,
  SECTION_END,
  CALL_BEGIN,
  CALL_END,
  KEY_OPEN,
  KEY_CLOSE,
  TYPE_OPEN,
  TYPE_CLOSE,
  VALUE_OPEN,
  VALUE_CLOSE,
];
/** Ordered so a cut-short fragment reads as the marker most often cut: the closers first. */
const MARKERS = [
  SECTION_END,
  CALL_END,
  VALUE_CLOSE,
  KEY_CLOSE,
  TYPE_CLOSE,
  IM_END,
  ...THINKS.map((t) => t.close),
  SECTION_BEGIN,
  CALL_BEGIN,
  KEY_OPEN,
  TYPE_OPEN,
  VALUE_OPEN,
  ...THINKS.map((t) => t.open),
  ENDOFTEXT,
  '<|ifm|im_start|>',
];
const ENDS = [IM_END, ENDOFTEXT];
const BODY_STOPS = [CALL_END, CALL_BEGIN, SECTION_END, SECTION_BEGIN, ...ENDS];

/** `<ifm|arg_type>` → how the value reads: a text (`string`, `any`) or its JSON reading (`integer`, `array[string]`…). */
function paramType(type: string): ParamType {
  const base = type.split('[', 1)[0].trim().toLowerCase();
  return base === 'string' || base === 'any' ? 'string' : 'json';
}

const PARAMS: ParamGrammar = {
  headStart: KEY_OPEN,
  close: VALUE_CLOSE,
  newlines: false,
  // vLLM refuses a call that writes a key twice (_parse_xml_call: "Duplicate IFM XML argument").
  duplicates: 'reject',
  head: (out, pos, to) => {
    const { text } = out;
    if (!text.startsWith(KEY_OPEN, pos)) return undefined;
    const keyStart = pos + KEY_OPEN.length;
    const keyEnd = out.find([KEY_CLOSE], keyStart, to)?.start;
    // A key cut off (or never closed) leaves no value: it ends the body.
    if (keyEnd === undefined) return { key: text.slice(keyStart, to).trim(), valueStart: to };
    const key = text.slice(keyStart, keyEnd).trim();
    let at = skipWs(text, keyEnd + KEY_CLOSE.length, to);
    let type: ParamType | undefined;
    if (text.startsWith(TYPE_OPEN, at)) {
      const typeEnd = out.find([TYPE_CLOSE], at + TYPE_OPEN.length, to)?.start;
      if (typeEnd === undefined) return { key, valueStart: to };
      type = paramType(text.slice(at + TYPE_OPEN.length, typeEnd));
      at = skipWs(text, typeEnd + TYPE_CLOSE.length, to);
    }
    const valueStart = text.startsWith(VALUE_OPEN, at) ? at + VALUE_OPEN.length : at;
    return type ? { key, valueStart, type } : { key, valueStart };
  },
};

const SECTION: SectionGrammar = {
  ends: [SECTION_END],
  callBegin: CALL_BEGIN,
  breaks: [...ENDS, SECTION_BEGIN],
  markers: MARKERS,
  call: (out, start, bodyStart, sectioned) => call(out, start, bodyStart, sectioned),
};

/** One grammar per reasoning effort: the tags differ, the rest is the same. */
const GRAMMARS = THINKS.map(
  (think): TurnGrammar => ({
    family: 'k2-horizon',
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    implicitThink: true,
    think,
    ends: ENDS,
    starters: [
      { marker: SECTION_BEGIN, parse: (out: ParseOut, start: number, hit: MarkerHit) => parseSection(out, SECTION, start, hit) },
      { marker: CALL_BEGIN, parse: (out: ParseOut, start: number) => parseSection(out, SECTION, start) },
    ],
  }),
);

const format: ModelFormat = {
  id: 'k2-horizon',
  displayName: 'K2-Horizon (IFM)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: SECTION_END,
  // IFM/K2-Horizon-7B, K2-Horizon-MoVA-36B-A4B, K2-Horizon-375B-A23B, their GGUF and MLX conversions.
  matchesModel: (modelId) => /k2[-_ ]?horizon/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [SECTION_BEGIN, 10],
      [CALL_BEGIN, 10],
      [KEY_OPEN, 6],
      [/<\/ifm\|think(?:_fast|_faster)?>/, 4],
      [IM_END, 2],
    ]),
  render,
  parse,
};

/** The reasoning tags the text uses: those of the first reasoning tag in it (`<ifm|think>` when none). */
function parse(text: string): ParsedNative {
  let best = 0;
  let bestAt = Infinity;
  THINKS.forEach((t, i) => {
    for (const tag of [t.open, t.close]) {
      const at = text.indexOf(tag);
      if (at >= 0 && at < bestAt) {
        bestAt = at;
        best = i;
      }
    }
  });
  return parseTurn(GRAMMARS[best], text);
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false, tags: THINKS[0] });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(`${SECTION_BEGIN}\n`);
      m.toolCalls.forEach((c, i) => {
        if (i > 0) out.put('\n');
        out.wrap(
          'call',
          () => {
            out.put(CALL_BEGIN).put(c.name, 'call-name', i).put('\n');
            renderParams(out, i, c.arguments, (k, v) => `${KEY_OPEN}${k}${KEY_CLOSE}\n${VALUE_OPEN}${v}${VALUE_CLOSE}`);
            if (close.call(i)) out.put(CALL_END);
          },
          i,
        );
      });
      if (close.turn) out.put(`\n${SECTION_END}`);
    });
  }
  if (close.turn) out.put(IM_END, 'end');
  return out.done();
}

/** One call from its `<ifm|tool_call>` at `start` (the body starts at `bodyStart`). Returns where it ends. */
function call(out: ParseOut, start: number, bodyStart: number, sectioned: boolean): number {
  const { text } = out;
  const stop = out.find(BODY_STOPS, bodyStart);
  const to = stop ? stop.start : text.length;
  const defects = sectioned ? [] : [`${CALL_BEGIN} outside ${SECTION_BEGIN}`];
  const at = skipWs(text, bodyStart, to);
  if (text[at] === '{' || text[at] === '[') return jsonCall(out, start, at, stop, defects);
  // The name runs to the first line break or markup.
  const nameStop = out.find(['\n', '<'], bodyStart, to);
  const nameRange = trimRange(text, bodyStart, nameStop ? nameStop.start : to);
  return xmlCall(out, { start, nameRange, bodyStart: skipWs(text, nameRange[1], to), stop, closers: [CALL_END], defects }, PARAMS, MARKERS);
}

/** The decoded value of a complete JSON member, if it parses. */
function memberValue(text: string, m: JsonMember | undefined): unknown {
  if (!m?.complete) return undefined;
  try {
    return JSON.parse(text.slice(...m.valueRange));
  } catch {
    return undefined;
  }
}

/** The JSON form: `{"name": …, "arguments": {…}}` (or `{"function": {…}}`) in the call's body. */
function jsonCall(out: ParseOut, start: number, at: number, stop: MarkerHit | undefined, defects: string[]): number {
  const { text } = out;
  const index = out.calls.length;
  const to = stop ? stop.start : text.length;
  const jsonEnd = jsonValueEnd(text, at, to);
  const complete = jsonEnd >= 0;
  const bodyEnd = complete ? jsonEnd : trimRange(text, at, to)[1];
  let members = text[at] === '{' ? (jsonMembers(text, at, bodyEnd) ?? []) : [];
  const fn = members.find((m) => m.key === 'function');
  if (fn && text[fn.valueRange[0]] === '{') members = jsonMembers(text, fn.valueRange[0], fn.valueRange[1]) ?? [];
  const nameMember = members.find((m) => m.key === 'name');
  const argsMember = members.find((m) => m.key === 'arguments') ?? members.find((m) => m.key === 'parameters');
  const name = memberValue(text, nameMember);
  let args = argsMember ? text.slice(...argsMember.valueRange) : complete ? '{}' : '';
  if (complete) {
    if (text[at] === '[') defects.push('a JSON list of calls in one call');
    else if (typeof name !== 'string' || !name) defects.push('no "name" string');
    const decoded = memberValue(text, argsMember);
    if (typeof decoded === 'string') {
      // Arguments sent as a JSON string: their text is the arguments (SGLang decodes it, vLLM rejects the call).
      defects.push('the arguments are a JSON string');
      args = decoded;
    } else if (argsMember && (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)))
      defects.push('the arguments are not a JSON object');
    const rest = trimRange(text, jsonEnd, to);
    // What follows the JSON up to the end of the text may be the closer still arriving (`<`, `</ifm|tool_`).
    if (rest[1] > rest[0] && !(rest[1] === text.length && endsInMarker(text, rest[0], MARKERS))) defects.push('text after the JSON');
  }
  const nameText = typeof name === 'string' ? name : '';
  out.addCall(nameText, args);
  const rest = complete ? trimRange(text, jsonEnd, to) : undefined;
  const bodyTo = Math.max(bodyEnd, rest && !(rest[1] === text.length && endsInMarker(text, rest[0], MARKERS)) ? rest[1] : bodyEnd);
  let end = bodyTo;
  let missing: string | undefined;
  let expectedAt = bodyTo;
  if (!complete) {
    if (stop) defects.push('the JSON is not whole');
    else missing = CALL_END;
  } else {
    const tail = expectClosers(out, bodyTo, [CALL_END], MARKERS, index);
    end = tail.end;
    missing = tail.missing;
    expectedAt = tail.expectedAt ?? end;
  }
  out.seg('call', start, Math.max(end, at), index);
  if (nameMember && nameText && text.slice(nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1) === nameText) {
    out.seg('call-name', nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1, index);
  }
  if (argsMember && argsMember.valueRange[1] > argsMember.valueRange[0])
    out.seg('arguments', argsMember.valueRange[0], argsMember.valueRange[1], index);
  if (missing) callUnclosed(out, index, start, Math.max(end, at), missing, expectedAt);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, Math.max(end, at), { callIndex: index });
  return Math.max(end, at);
}

// Verdicts read from the parsers' non-streaming code (no conformance fixture covers K2-Horizon).
const VLLM_CODE = 'vllm-project/vllm vllm/tool_parsers/k2_horizon_tool_parser.py';
const SGLANG_CODE = 'sgl-project/sglang python/sglang/srt/function_call/k2_v3_detector.py';
const dynamo = noParser('Dynamo registers no K2-Horizon parser');

const verdicts: FamilyVerdicts = {
  family: 'k2-horizon',
  engines: {
    vllm: {
      release: 'main @ 194efa2d',
      parser: 'k2_horizon',
      code: VLLM_CODE,
      evidence: `${VLLM_CODE} extract_tool_calls @ 194efa2d`,
      note: 'read from the code; no conformance fixture. Calls are read only inside a closed <ifm|tool_calls> group, in the one tool_call_format the request named (xml by default: a typed value then fails the whole group)',
    },
    sglang: {
      release: 'main @ 8d9f80f6',
      parser: 'k2_horizon',
      code: SGLANG_CODE,
      evidence: `${SGLANG_CODE} detect_and_parse, _parse_block @ 8d9f80f6`,
      note: 'read from the code; no conformance fixture. Calls to tools the request did not offer are dropped (SGLANG_FORWARD_UNKNOWN_TOOLS)',
    },
    dynamo: noParserInfo(
      'main @ 117eab15',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map (no K2-Horizon entry) @ 117eab15',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</ifm|tool_calls> missing after a complete call',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'recovered', text: 'the call is delivered; the group tag is stripped' },
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call and </ifm|tool_calls> without <ifm|tool_calls>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the markup stays in content' },
        sglang: { outcome: 'recovered', text: 'the call is delivered (a call needs no group); the stray group tag is stripped' },
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the call',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'content', text: 'no call; the unterminated <ifm|tool_call> block stays in content as written' },
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks </ifm|tool_call>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'mixed', text: 'the closed calls are delivered; the unterminated last block stays in content as written' },
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'mixed', text: 'the closed calls are delivered; the cut block stays in content as written' },
        dynamo,
      },
    },
  ],
};

export const k2Horizon: Family<'k2-horizon'> = {
  id: 'k2-horizon',
  format,
  verdicts,
  tokenizer: { repo: 'IFM/K2-Horizon-7B' },
  repair: {
    openers: [SECTION_BEGIN, CALL_BEGIN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
