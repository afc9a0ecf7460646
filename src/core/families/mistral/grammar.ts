/**
 * Mistral ('mistral'):
 *
 *   [THINK]REASONING[/THINK]CONTENT[TOOL_CALLS][{"name": "NAME", "arguments": {…}}, …]</s>     (pre-v11 tokenizer)
 *   CONTENT[TOOL_CALLS]NAME[ARGS]{…}[TOOL_CALLS]NAME2[ARGS]{…}</s>                          (v11+ tokenizer)
 *   CONTENT[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}</s>                                         (Mistral Small 3.2 template)
 *
 * vLLM `vllm/tool_parsers/mistral_tool_parser.py` (`bot_token`, `_is_pre_v11_tokeniser`, `[THINK]` handling). The wire
 * form has no closer; the Dynamo conformance fixtures write `[/TOOL_CALLS]`, which is read when present. In the first two
 * forms the call ids (9 alphanumerics) are the server's, not in the text. The third carries the id itself: llama.cpp
 * `tests/test-chat.cpp` @ 0042e207 parses `[TOOL_CALLS]special_function[CALL_ID]123456789[ARGS]{"arg1": 1}` into a call
 * with id `123456789` (and the same for parallel calls, one `[TOOL_CALLS]` each). A call whose id is a valid Mistral id
 * is rendered in that form, so its id survives a round trip; other calls are rendered as the pre-v11 list. SGLang's
 * `mistral_detector.py` @ a343daaf reads the name as everything between `[TOOL_CALLS]` and `[ARGS`, so there the name
 * is `NAME[CALL_ID]ID`, which matches no tool of the request and the call is dropped.
 */
import type { AssistantMessage, NativeText } from '../../model';
import {
  callUnclosed,
  endsInMarker,
  jsonCallStarters,
  jsonValueEnd,
  modelKey,
  parseTurn,
  renderJsonCalls,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  truncatedAt,
  type JsonCallsGrammar,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

const OPEN = '[TOOL_CALLS]';
const CLOSE = '[/TOOL_CALLS]';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
const THINK = { open: '[THINK]', close: '[/THINK]' };
const EOS = '</s>';

const TOOL_MARKERS = [OPEN, CLOSE, ARGS, CALL_ID];
const MARKERS = [
  CLOSE,
  THINK.close,
  ...TOOL_MARKERS.filter((m) => m !== CLOSE),
  THINK.open,
  EOS,
  '[INST]',
  '[/INST]',
  '[AVAILABLE_TOOLS]',
  '[TOOL_RESULTS]',
];

const GRAMMAR: JsonCallsGrammar = {
  family: 'mistral',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: OPEN,
  close: CLOSE,
  closeOptional: true,
  list: 'array',
  argKeys: ['arguments', 'parameters'],
  ends: [EOS],
  implicitThink: false,
  think: THINK,
  named: ARGS,
};

/** A call id Mistral accepts: 9 alphanumerics (mistral-common `validator.py`, quoted by vLLM `MistralToolCall`). */
const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;

/** The list form (pre-v11) goes to the shared JSON-calls grammar; the named forms are read here. */
const LIST_STARTER = jsonCallStarters(GRAMMAR).starters[0];

// A completion may start inside the reasoning: Ollama's ministral parser begins in `[THINK]` when thinking is on
// (ollama/ollama model/parsers/ministral_test.go "thinking content": `thinking here[/THINK]content after`), and vLLM's
// mistral reasoning parser, a DeepSeek-R1 parser, takes the text before a `[/THINK]` without its opener as reasoning.
const TURN: TurnGrammar = {
  family: 'mistral',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  think: THINK,
  ends: [EOS],
  starters: [
    {
      marker: OPEN,
      parse: (out: ParseOut, start: number, hit: MarkerHit) => {
        const at = skipWs(out.text, hit.end);
        // A list (`[{…}]`), a lone object, or nothing yet: the shared grammar reads and reports it.
        if (at >= out.text.length || out.text[at] === '[' || out.text[at] === '{') return LIST_STARTER.parse(out, start, hit);
        return namedCall(out, start, hit, at);
      },
    },
  ],
};

/** What ends a named call's name or id: the markers that may follow it, or the start of another call or the turn's end. */
const NAME_STOPS = [CALL_ID, ARGS, OPEN, CLOSE, EOS];

/**
 * `NAME[ARGS]{…}` or `NAME[CALL_ID]ID[ARGS]{…}` after `[TOOL_CALLS]` (`hit`), the name starting at `at`. One call per
 * opener; an optional `[/TOOL_CALLS]` after the arguments closes the section. Returns where the section ends.
 */
function namedCall(out: ParseOut, start: number, hit: MarkerHit, at: number): number {
  const { text } = out;
  const index = out.calls.length;
  const defects: string[] = [];
  let missing: string | undefined;
  let expectedAt = at;
  let end = at;
  let idRange: [number, number] | undefined;
  let argRange: [number, number] | undefined;
  let complete = false;

  // The name runs to the first marker after it; at the end of the text, to a cut-short marker.
  const afterName = out.find(NAME_STOPS, at);
  const nameTo = afterName ? afterName.start : cutTail(out, at, [ARGS, CALL_ID]);
  const nameRange = trimRange(text, at, nameTo);
  end = Math.max(nameRange[1], nameTo);
  let argsHit: MarkerHit | undefined;
  if (afterName?.marker === CALL_ID) {
    const afterId = out.find(NAME_STOPS, afterName.end);
    const idTo = afterId ? afterId.start : cutTail(out, afterName.end, [ARGS]);
    idRange = trimRange(text, afterName.end, idTo);
    end = Math.max(afterName.end, idTo);
    if (afterId?.marker === ARGS) argsHit = afterId;
    else if (afterId) defects.push(`no ${ARGS} after the call id`);
    else {
      missing = ARGS;
      expectedAt = idRange[1] > idRange[0] ? idRange[1] : afterName.end;
      end = text.length;
    }
    if (idRange[1] === idRange[0] && (argsHit || afterId)) defects.push(`an empty id after ${CALL_ID}`);
  } else if (afterName?.marker === ARGS) {
    argsHit = afterName;
  } else if (afterName) {
    defects.push(`'${text.slice(...nameRange)}' is not followed by ${ARGS}`);
  } else {
    missing = ARGS;
    expectedAt = nameRange[1];
    end = text.length;
  }

  if (argsHit) {
    const argStart = skipWs(text, argsHit.end);
    // A JSON value cut short never runs past the next call or the end of the turn.
    const next = out.find([OPEN, EOS], argStart);
    const to = next ? next.start : text.length;
    const argEnd = jsonValueEnd(text, argStart, to);
    if (argEnd >= 0) {
      argRange = [argStart, argEnd];
      end = argEnd;
      complete = true;
    } else {
      argRange = trimRange(text, argStart, to);
      end = Math.max(argRange[1], argsHit.end);
      missing = '}';
      expectedAt = end;
      if (next) defects.push('its arguments are not a whole JSON value');
    }
  }

  const name = text.slice(...nameRange);
  out.addCall(
    name,
    argRange ? text.slice(...argRange) : '',
    idRange && idRange[1] > idRange[0] ? text.slice(...idRange) : idRange ? '' : undefined,
  );
  const callEnd = end;
  // The optional closer the conformance fixtures write.
  let sectionEnd = callEnd;
  if (complete) {
    const c = skipWs(text, callEnd);
    if (text.startsWith(CLOSE, c)) sectionEnd = c + CLOSE.length;
  }
  out.seg('section', start, Math.max(sectionEnd, hit.end));
  out.seg('call', nameRange[0], callEnd, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  if (idRange) out.seg('call-id', idRange[0], idRange[1], index);
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (!name) defects.push('no function name');
  if (missing && !defects.length) callUnclosed(out, index, nameRange[0], callEnd, missing, expectedAt);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, nameRange[0], callEnd, { callIndex: index });
  return Math.max(sectionEnd, hit.end);
}

/**
 * Where the text stops being a name or an id when no marker follows it: at a cut-short `[ARGS]` / `[CALL_ID]` that ends
 * the text (reported as cut short), else at the end of the text.
 */
function cutTail(out: ParseOut, from: number, markers: readonly string[]): number {
  const { text } = out;
  const bracket = text.lastIndexOf('[');
  if (bracket < from) return text.length;
  const cut = truncatedAt(text, bracket, markers);
  if (cut && cut.end === text.length) {
    out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker, callIndex: out.calls.length });
    return bracket;
  }
  return endsInMarker(text, bracket, markers) ? bracket : text.length;
}

/** True when every call carries an id Mistral accepts: then the turn is written in the `[CALL_ID]` form. */
function withIds(m: AssistantMessage): boolean {
  return m.toolCalls.length > 0 && m.toolCalls.every((c) => c.id !== undefined && MISTRAL_ID.test(c.id) && /^[^[\s]+$/.test(c.name));
}

/** `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}` for each call, then `</s>`. */
function renderCallIds(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false, tags: THINK });
  m.toolCalls.forEach((c, i) => {
    out.wrap('section', () => {
      out.put(OPEN);
      out.wrap(
        'call',
        () => out.put(c.name, 'call-name', i).put(CALL_ID).put(c.id!, 'call-id', i).put(ARGS).put(c.arguments, 'arguments', i),
        i,
      );
    });
  });
  if (close.turn) out.put(EOS, 'end');
  return out.done();
}

export const mistral: ModelFormat = {
  id: 'mistral',
  displayName: 'Mistral ([TOOL_CALLS])',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /mistral|mixtral|magistral|devstral|codestral|ministral|pixtral/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [OPEN, 10],
      [ARGS, 4],
      [CALL_ID, 2],
      [CLOSE, 7],
      [THINK.close, 1],
    ]),
  render: (m, opts) => (withIds(m) ? renderCallIds(m, opts) : renderJsonCalls({ ...GRAMMAR, close: undefined }, m, opts)),
  parse: (text) => parseTurn(TURN, text),
};
