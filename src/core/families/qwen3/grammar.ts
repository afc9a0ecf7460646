/**
 * Qwen3 (and Qwen2.5) Hermes-style calls, one block per call:
 *
 *   <think>\nREASONING\n</think>\n\nCONTENT\n<tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call><|im_end|>
 *
 * As the chat template writes it: calls after content (or after another call) start on a new line. The
 * arguments are the raw text of the `arguments` member (also `parameters`), never re-serialized. No call
 * ids in the format. `parse` accepts a completion that starts inside `<think>` (thinking prompts end with it).
 * There is no section marker, so no `section` segments.
 */
import type { AssistantMessage, NativeText, ToolCall } from '../../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  renderStart,
  type RenderOut,
  callUnclosed,
  jsonBody,
  jsonMembers,
  jsonStringMember,
  modelKey,
  parseTurn,
  withPlaceholders,
  scoreText,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

export const CALL_OPEN = '<tool_call>';
export const CALL_CLOSE = '</tool_call>';
export const IM_END = '<|im_end|>';
const ENDOFTEXT = '<|endoftext|>';

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, '<tool_response>', '</tool_response>'];
/** Every marker of the Qwen chat format (shared with qwen3-coder). Cut-short fragments read as the first match. */
export const QWEN_MARKERS = [
  CALL_CLOSE,
  IM_END,
  THINK_CLOSE,
  CALL_OPEN,
  THINK_OPEN,
  ENDOFTEXT,
  '<|im_start|>',
  '<tool_response>',
  '</tool_response>',
];
export const QWEN_ENDS = [IM_END, ENDOFTEXT];
const BODY_STOPS = [CALL_CLOSE, CALL_OPEN, ...QWEN_ENDS];

const GRAMMAR: TurnGrammar = {
  family: 'qwen3',
  toolMarkers: TOOL_MARKERS,
  markers: QWEN_MARKERS,
  implicitThink: true,
  ends: QWEN_ENDS,
  starters: [{ marker: CALL_OPEN, parse: call }],
};

/** Qwen3's marker ids (Qwen/Qwen3 `tokenizer_config.json` `added_tokens_decoder`). */
const QWEN_IDS: Readonly<Record<number, string>> = {
  151643: ENDOFTEXT,
  151644: '<|im_start|>',
  151645: IM_END,
  151657: CALL_OPEN,
  151658: CALL_CLOSE,
  151665: '<tool_response>',
  151666: '</tool_response>',
  151667: THINK_OPEN,
  151668: THINK_CLOSE,
};

export const qwen3: ModelFormat = {
  id: 'qwen3',
  displayName: 'Qwen3 (Hermes tool calls)',
  markers: QWEN_MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => {
    const key = modelKey(modelId);
    // Qwen3.5 / 3.6 write the Qwen3-Coder XML (qwen3-coder/grammar.ts). MiMo-VL, built on Qwen2.5-VL, writes these
    // calls (llama.cpp tests/test-chat.cpp runs its MiMo-VL.jinja with the Qwen 2.5 cases).
    if (/(?:^|[^a-z])mimo-?vl/.test(key)) return true;
    return /(?:^|[^a-z])(?:qwen3|qwen2\.5|qwq)/.test(key) && !key.includes('coder') && !/qwen3\.[5-9]/.test(key);
  },
  detectText: (text) =>
    scoreText(text, [
      [/<tool_call>\s*\{/, 10],
      [/"name"\s*:\s*"[^"]*"\s*,\s*"arguments"/, 5],
      [CALL_CLOSE, 3],
      [IM_END, 1],
    ]),
  render: (m, opts) =>
    renderQwenTurn(m, opts, (out, c, i, closed) => {
      const name = JSON.stringify(c.name);
      out.put('{"name": "');
      // The name segment covers the name itself, so it only exists when JSON needs no escapes for it.
      if (name === `"${c.name}"`) out.put(c.name, 'call-name', i);
      else out.put(name.slice(1, -1));
      out.put('", "arguments": ').put(c.arguments, 'arguments', i);
      if (closed) out.put('}');
    }),
  markerIds: QWEN_IDS,
  parse: withPlaceholders((text) => parseTurn(GRAMMAR, text), QWEN_IDS),
};

/**
 * A turn as the Qwen chat template writes it (shared with qwen3-coder, Granite 4 and Trinity): each call in its own
 * `<tool_call>\n…\n</tool_call>` block on a new line, then `end` (`<|im_end|>`). `body` writes what is inside the
 * block, with its own closing markup only when `closed`.
 */
export function renderQwenTurn(
  m: AssistantMessage,
  opts: RenderOptions | undefined,
  body: (out: RenderOut, c: ToolCall, index: number, closed: boolean) => void,
  end = IM_END,
): NativeText {
  const { out, close, hasContent } = renderStart(m, opts, { newlines: true });
  m.toolCalls.forEach((c, i) => {
    if (hasContent || i > 0) out.put('\n');
    out.wrap(
      'call',
      () => {
        out.put(`${CALL_OPEN}\n`);
        body(out, c, i, close.call(i));
        if (close.call(i)) out.put(`\n${CALL_CLOSE}`);
      },
      i,
    );
  });
  if (close.turn) out.put(end, 'end');
  return out.done();
}

function call(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const index = out.calls.length;
  const body = jsonBody(out, hit.end, BODY_STOPS, QWEN_MARKERS);
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
    // Another cut-short marker is left to the text after the call, where it is reported.
    out.problem('marker-truncated', `${CALL_CLOSE} is cut short`, body.cut.start, body.cut.end, { marker: CALL_CLOSE, callIndex: index });
    end = body.cut.end;
  }
  out.addCall(name, argRange ? text.slice(...argRange) : '');
  out.seg('call', start, end, index);
  if (nameMember && text.slice(nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1) === name) {
    out.seg('call-name', nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1, index);
  }
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed) callUnclosed(out, index, start, end, CALL_CLOSE, body.cut?.marker === CALL_CLOSE ? body.cut.start : body.range[1]);
  // Judge the grammar only on a finished call: a cut-off one is already reported unclosed. Arguments that
  // are not JSON are the checks' business; a broken object around sound arguments is the format's.
  const what = !closed
    ? undefined
    : !members
      ? 'the body is not a JSON object'
      : !nameMember
        ? 'no "name" string'
        : !argsMember
          ? 'no "arguments" member'
          : !isJson(text.slice(...body.range)) && isJson(text.slice(...argsMember.valueRange))
            ? 'the call object around the arguments is not valid JSON'
            : undefined;
  if (what) out.problem('malformed-call', `call ${index}: ${what}`, start, end, { callIndex: index });
  return end;
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
