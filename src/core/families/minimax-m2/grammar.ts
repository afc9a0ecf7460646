/**
 * MiniMax-M2 (M2, M2.1, M2.5):
 *
 *   <think>\nREASONING\n</think>\n\nCONTENT\n<minimax:tool_call>\n<invoke name="f">\n<parameter name="p">v</parameter>\n</invoke>\n</minimax:tool_call>[e~[
 *
 * `<minimax:tool_call>` is the section (several `<invoke>`s inside); `[e~[` ends the turn. Arguments are
 * canonical compact JSON (see `paramsToJson` in shared/xml-args.ts); the `arguments` segment spans the
 * `<parameter>` markup. Arguments that are not a JSON object are written raw inside `<invoke>` and come
 * back raw (flagged `malformed-call`). `parse` accepts a completion that starts inside `<think>` (the
 * thinking prompt ends with `<think>\n`). No call ids in the format.
 */
import {
  THINK_CLOSE,
  THINK_OPEN,
  invokeCall,
  invokeGrammar,
  modelKey,
  quotedParams,
  parseTurn,
  renderInvokes,
  scoreText,
  type InvokeRender,
  type ParseOut,
} from '../shared';
import type { ModelFormat } from '../shared/format';

export const SECTION_BEGIN = '<minimax:tool_call>';
export const SECTION_END = '</minimax:tool_call>';
export const INVOKE_OPEN = '<invoke name="';
export const INVOKE_CLOSE = '</invoke>';
export const PARAM_OPEN = '<parameter name="';
export const PARAM_CLOSE = '</parameter>';
export const END = '[e~[';

const TOOL_MARKERS = [SECTION_BEGIN, SECTION_END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE];
const MARKERS = [
  SECTION_END,
  INVOKE_CLOSE,
  PARAM_CLOSE,
  THINK_CLOSE,
  END,
  SECTION_BEGIN,
  INVOKE_OPEN,
  PARAM_OPEN,
  THINK_OPEN,
  ']~b]',
  ']~!b[',
];
const BODY_STOPS = [INVOKE_CLOSE, INVOKE_OPEN, SECTION_END, SECTION_BEGIN, END];

const PARAMS = quotedParams(PARAM_OPEN, PARAM_CLOSE);

const DIALECT = { sectionBegin: SECTION_BEGIN, sectionEnd: SECTION_END, invokeOpen: INVOKE_OPEN, invokeClose: INVOKE_CLOSE };
const GRAMMAR = invokeGrammar('minimax-m2', DIALECT, END, MARKERS, TOOL_MARKERS, call);
const RENDER: InvokeRender = {
  ...DIALECT,
  end: END,
  thinkNewlines: true,
  beforeSection: '\n',
  param: (k, v) => `${PARAM_OPEN}${k}">${v}${PARAM_CLOSE}`,
};

export const minimaxM2: ModelFormat = {
  id: 'minimax-m2',
  displayName: 'MiniMax-M2',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: SECTION_END,
  matchesModel: (modelId) => /minimax-m2/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [SECTION_BEGIN, 10],
      [SECTION_END, 8],
      [INVOKE_OPEN, 6],
      [END, 2],
    ]),
  render: (m, opts) => renderInvokes(RENDER, m, opts),
  parse: (text) => parseTurn(GRAMMAR, text),
};

/** One `<invoke name="…">` from `start`; `sectioned` is false when no `<minimax:tool_call>` opened. */
function call(out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number {
  return invokeCall(out, start, sectioned, { ...DIALECT, bodyStops: BODY_STOPS, markers: MARKERS, params: PARAMS });
}
