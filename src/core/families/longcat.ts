/**
 * LongCat (Meituan, 'longcat'): one `<longcat_tool_call>` block per call, in one of two bodies.
 *
 *   <longcat_think>REASONING</longcat_think>CONTENT\n<longcat_tool_call>\n{"name": "NAME", "arguments": {…}}\n</longcat_tool_call></longcat_s>
 *   <longcat_tool_call>NAME\n<longcat_arg_key>K</longcat_arg_key>\n<longcat_arg_value>V</longcat_arg_value>\n</longcat_tool_call>
 *
 * The JSON body is LongCat-Flash-Chat's: SGLang `longcat_detector.py` (class docstring; `bot_token`
 * `<longcat_tool_call>\n`, `eot_token` `\n</longcat_tool_call>`, calls back to back with no separator) and vLLM
 * `longcat_tool_parser.py` (Hermes2ProToolParser with the LongCat tags). The key/value body is LongCat-Flash-Lite's
 * (the GLM-4.5 form with `longcat_`-prefixed tags): mlx-lm `tool_parsers/longcat.py` reads both, a body starting with `{`
 * as JSON, else a name followed by `<longcat_arg_key>`/`<longcat_arg_value>` pairs. `render` writes the JSON body with
 * the newlines SGLang's detector needs (vLLM reads that too). Reasoning is `<longcat_think>…</longcat_think>`; a turn
 * ends with `</longcat_s>` (the chat template closes each assistant round with it). Key/value arguments come back as
 * canonical compact JSON, typed by the request's schema elsewhere; JSON arguments are kept as written. No call ids.
 *
 * What the engines do with broken outputs, read from their code (no conformance fixtures exist for LongCat):
 * - vLLM `LongcatFlashToolParser` (Hermes2Pro `extract_tool_calls`): every `<longcat_tool_call>(.*?)</longcat_tool_call>`
 *   or `<longcat_tool_call>(.*)` capture is `json.loads`-ed; one that fails (a cut value, a key/value body) makes the
 *   whole turn content with no call. A complete JSON body whose closer is missing is still a call.
 * - SGLang `LongCatFlashDetector.detect_and_parse`: only `<longcat_tool_call>\n(.*?)\n</longcat_tool_call>` blocks are
 *   calls; the content is the text before the first `<longcat_tool_call>\n`, the rest is dropped. With no call,
 *   `parse_non_stream` returns the whole text as content.
 * - Dynamo: no LongCat parser.
 */
import { noParser, noParserInfo, unclosedCases, type FamilyVerdicts } from './shared/verdicts';
import {
  type RenderOut,
  callUnclosed,
  jsonBody,
  jsonMembers,
  jsonStringMember,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipLiteralNewlines,
  skipWs,
  trimRange,
  xmlCall,
  type MarkerHit,
  type ParamGrammar,
  type ParseOut,
  type ThinkTags,
  type TurnGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { AssistantMessage, NativeText, ToolCall } from '../model';
import type { Family } from './types';

const CALL_OPEN = '<longcat_tool_call>';
const CALL_CLOSE = '</longcat_tool_call>';
const KEY_OPEN = '<longcat_arg_key>';
const KEY_CLOSE = '</longcat_arg_key>';
const VALUE_OPEN = '<longcat_arg_value>';
const VALUE_CLOSE = '</longcat_arg_value>';
const THINK: ThinkTags = { open: '<longcat_think>', close: '</longcat_think>' };
const EOS = '</longcat_s>';

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE];
/** Closers first, so a cut-short fragment is read as the marker most often cut. */
const MARKERS = [CALL_CLOSE, VALUE_CLOSE, KEY_CLOSE, THINK.close, EOS, CALL_OPEN, KEY_OPEN, VALUE_OPEN, THINK.open];
const BODY_STOPS = [CALL_CLOSE, CALL_OPEN, EOS];

const PARAMS: ParamGrammar = {
  headStart: KEY_OPEN,
  close: VALUE_CLOSE,
  newlines: false,
  head: (out, pos, to) => {
    const { text } = out;
    if (!text.startsWith(KEY_OPEN, pos)) return undefined;
    const keyStart = pos + KEY_OPEN.length;
    const keyEnd = out.find([KEY_CLOSE], keyStart, to)?.start;
    if (keyEnd === undefined) return { key: text.slice(keyStart, to).trim(), valueStart: to };
    const at = skipLiteralNewlines(text, keyEnd + KEY_CLOSE.length, to);
    const valueStart = text.startsWith(VALUE_OPEN, at) ? at + VALUE_OPEN.length : at;
    return { key: text.slice(keyStart, keyEnd).trim(), valueStart };
  },
};

/** One call from its `<longcat_tool_call>` (`hit`): a JSON body when it opens with `{` (or nothing came yet), else key/value. */
function call(out: ParseOut, start: number, hit: MarkerHit): number {
  const at = skipWs(out.text, hit.end);
  if (at >= out.text.length || out.text[at] === '{') return jsonCall(out, start, hit);
  return keyValueCall(out, start, hit);
}

/** `{"name": …, "arguments": …}` up to `</longcat_tool_call>`; the arguments are the raw text of their member. */
function jsonCall(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const index = out.calls.length;
  const body = jsonBody(out, hit.end, BODY_STOPS, MARKERS);
  const members = jsonMembers(text, hit.end, body.range[1]);
  const nameMember = members?.find((m) => m.key === 'name' && m.complete);
  const argsMember = members?.find((m) => m.key === 'arguments' || m.key === 'parameters');
  const name = jsonStringMember(text, nameMember);
  const argRange = argsMember ? argsMember.valueRange : members ? undefined : body.range;
  let end = body.range[1];
  let closed = false;
  if (body.stop?.marker === CALL_CLOSE) {
    end = body.stop.end;
    closed = true;
  } else if (body.cut?.marker === CALL_CLOSE) {
    out.problem('marker-truncated', `${CALL_CLOSE} is cut short`, body.cut.start, body.cut.end, { marker: CALL_CLOSE, callIndex: index });
    end = body.cut.end;
  }
  out.addCall(name, argRange ? text.slice(...argRange) : '');
  out.seg('call', start, end, index);
  if (nameMember && name && text.slice(nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1) === name) {
    out.seg('call-name', nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1, index);
  }
  if (argRange && argRange[1] > argRange[0]) out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed) callUnclosed(out, index, start, end, CALL_CLOSE, body.cut?.marker === CALL_CLOSE ? body.cut.start : body.range[1]);
  // A finished call is judged; a cut-off one is already reported unclosed.
  const what = !closed
    ? undefined
    : !members
      ? 'the body is not a JSON object'
      : !nameMember || !name
        ? 'no "name" string'
        : !argsMember
          ? 'no "arguments" member'
          : undefined;
  if (what) out.problem('malformed-call', `call ${index}: ${what}`, start, end, { callIndex: index });
  return end;
}

/** `NAME` then `<longcat_arg_key>K</longcat_arg_key><longcat_arg_value>V</longcat_arg_value>` pairs (LongCat-Flash-Lite). */
function keyValueCall(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const stop = out.find(BODY_STOPS, hit.end);
  const to = stop ? stop.start : text.length;
  // The name runs to the first newline (real or a literal `\n`) or tag.
  const nameStop = out.find(['\n', '\\n', '<'], hit.end, to);
  const nameRange = trimRange(text, hit.end, nameStop ? nameStop.start : to);
  const bodyStart = skipLiteralNewlines(text, nameRange[1], to);
  return xmlCall(out, { start, nameRange, bodyStart, stop, closers: [CALL_CLOSE], defects: [] }, PARAMS, MARKERS);
}

const GRAMMAR: TurnGrammar = {
  family: 'longcat',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  think: THINK,
  ends: [EOS],
  starters: [{ marker: CALL_OPEN, parse: call }],
};

/** Content, then each call in its own block (back to back, as SGLang's docstring writes them), then `</longcat_s>`. */
function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close, hasContent } = renderStart(m, opts, { newlines: false, tags: THINK });
  m.toolCalls.forEach((c, i) => {
    if (hasContent && i === 0) out.put('\n');
    out.wrap('call', () => jsonBlock(out, c, i, close.call(i)), i);
  });
  if (close.turn) out.put(EOS, 'end');
  return out.done();
}

function jsonBlock(out: RenderOut, c: ToolCall, i: number, closed: boolean): void {
  const name = JSON.stringify(c.name);
  out.put(`${CALL_OPEN}\n{"name": "`);
  // The name segment covers the name itself, so it only exists when JSON needs no escapes for it.
  if (name === `"${c.name}"` && c.name) out.put(c.name, 'call-name', i);
  else out.put(name.slice(1, -1));
  out.put('", "arguments": ').put(c.arguments, 'arguments', i);
  if (closed) out.put(`}\n${CALL_CLOSE}`);
}

const format: ModelFormat = {
  id: 'longcat',
  displayName: 'LongCat (<longcat_tool_call>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // meituan-longcat/LongCat-Flash-Chat, -Flash-Thinking(-2601), -Flash-Lite, -Flash-Omni (Hugging Face),
  // meituan/longcat-flash-chat (OpenRouter), LongCat-2.0 (the LongCat API); not LongCat-Video, -Image or -Audio.
  matchesModel: (modelId) => /(?:^|[^a-z])longcat[-_ ]?(?:flash|\d)/.test(modelKey(modelId)),
  // Every LongCat tag is LongCat's own.
  detectText: (text) =>
    scoreText(text, [
      [CALL_OPEN, 10],
      [KEY_OPEN, 8],
      [CALL_CLOSE, 6],
      [VALUE_OPEN, 4],
      [THINK.close, 2],
      [EOS, 1],
    ]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/longcat_tool_parser.py';
const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/longcat_detector.py';
const NO_DYNAMO = 'Dynamo lists no LongCat parser';

const verdicts: FamilyVerdicts = {
  family: 'longcat',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'longcat',
      code: VLLM,
      evidence: `${VLLM} and hermes_tool_parser.py (Hermes2ProToolParser.extract_tool_calls) @ 055e47c28003; tests/tool_parsers/test_longcat_tool_parser.py @ 41c5903d049b`,
      note: 'read from the code, not from a recorded run; a key/value body (LongCat-Flash-Lite) is no JSON, so vLLM returns that turn as content with no call',
    },
    sglang: {
      release: 'registry @ 23d22602',
      parser: 'longcat',
      code: SGLANG,
      evidence: `${SGLANG} (LongCatFlashDetector.detect_and_parse) and function_call_parser.py (parse_non_stream, "longcat" registered) @ 23d226022f1c`,
      note: 'read from the code; the detector needs a newline after <longcat_tool_call> and before </longcat_tool_call>, so a block written without them is no call; the registry read at main (function_call_parser.py @ 00828e56, parser_names.py @ 042de61b) no longer lists "longcat"',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/dynamo lib/parsers/src/tool_calling/parsers.rs get_tool_parser_map @ 0436586e; ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe47d0 (no LongCat)',
    ),
  },
  cases: unclosedCases(
    { dynamo: noParser(NO_DYNAMO) },
    {
      '5.a': {
        what: '</longcat_tool_call> missing after a complete JSON body',
        verdicts: {
          vllm: { outcome: 'recovered', text: 'the call is delivered (the open <longcat_tool_call>(.*) capture is whole JSON)' },
          sglang: { outcome: 'content', text: 'no call; without \\n</longcat_tool_call> no block matches and the whole text is content' },
        },
      },
      '5.c': {
        what: 'output stopped inside the arguments',
        verdicts: {
          vllm: { outcome: 'content', text: 'no call; json.loads fails and the whole text is content' },
          sglang: { outcome: 'content', text: 'no call; no closed block, the whole text is content' },
        },
      },
      '5.d': {
        what: 'the last of several calls lacks only </longcat_tool_call>',
        verdicts: {
          vllm: { outcome: 'recovered', text: 'every call is delivered' },
          sglang: {
            outcome: 'partial',
            text: 'the closed calls are delivered, the unclosed last one dropped; the content is the text before the first call',
          },
        },
      },
      '5.e': {
        what: 'the last of several calls cut off mid-value',
        verdicts: {
          vllm: {
            outcome: 'content',
            text: 'no call at all; the cut JSON fails json.loads and the whole text, complete calls included, is content',
          },
          sglang: { outcome: 'partial', text: 'the closed calls are delivered, the cut one dropped' },
        },
      },
    },
  ),
};

export const longcat: Family<'longcat'> = {
  id: 'longcat',
  format,
  verdicts,
  tokenizer: { repo: 'meituan-longcat/LongCat-Flash-Chat' },
  repair: {
    openers: [CALL_OPEN, KEY_OPEN, VALUE_OPEN],
    stripped: [],
    // The JSON body, as render writes it. A key/value body (Flash-Lite) cut inside a value is still reported
    // call-unclosed by the parse, but repair judges wholeness by the JSON alone.
    arguments: 'json',
    callIds: 'digest',
  },
};
