/**
 * MiniMax-M2 (M2, M2.1, M2.5):
 *
 *   <think>\nREASONING\n</think>\n\nCONTENT\n<minimax:tool_call>\n<invoke name="f">\n<parameter name="p">v</parameter>\n</invoke>\n</minimax:tool_call>[e~[
 *
 * `<minimax:tool_call>` is the section (several `<invoke>`s inside); `[e~[` ends the turn. Arguments are
 * canonical compact JSON (see `paramsToJson` in base.ts); the `arguments` segment spans the
 * `<parameter>` markup. Arguments that are not a JSON object are written raw inside `<invoke>` and come
 * back raw (flagged `malformed-call`). `parse` accepts a completion that starts inside `<think>` (the
 * thinking prompt ends with `<think>\n`). No call ids in the format.
 */
import type { AssistantMessage, NativeText } from '../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  renderStart,
  renderParams,
  modelKey,
  parseSection,
  parseTurn,
  scoreText,
  trimRange,
  xmlCall,
  type ParamGrammar,
  type ParseOut,
  type SectionGrammar,
  type TurnGrammar,
} from './base';
import type { ModelFormat, RenderOptions } from './types';

export const SECTION_BEGIN = '<minimax:tool_call>';
export const SECTION_END = '</minimax:tool_call>';
export const INVOKE_OPEN = '<invoke name="';
export const INVOKE_CLOSE = '</invoke>';
export const PARAM_OPEN = '<parameter name="';
export const PARAM_CLOSE = '</parameter>';
export const END = '[e~[';

const TOOL_MARKERS = [SECTION_BEGIN, SECTION_END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE];
const MARKERS = [SECTION_END, INVOKE_CLOSE, PARAM_CLOSE, THINK_CLOSE, END, SECTION_BEGIN, INVOKE_OPEN, PARAM_OPEN, THINK_OPEN, ']~b]', ']~!b['];
const BODY_STOPS = [INVOKE_CLOSE, INVOKE_OPEN, SECTION_END, SECTION_BEGIN, END];

/** `PREFIX` + quoted name + `">` at `pos`: the name range and where the head ends. */
function quotedHead(out: ParseOut, pos: number, prefix: string, to: number): { name: [number, number]; end: number; closed: boolean } {
  const { text } = out;
  const nameStart = pos + prefix.length;
  const close = out.find(['">', '\n', '<'], nameStart, to);
  if (close?.marker === '">') return { name: [nameStart, close.start], end: close.end, closed: true };
  const nameEnd = close ? close.start : to;
  return { name: trimRange(text, nameStart, nameEnd), end: nameEnd, closed: false };
}

const PARAMS: ParamGrammar = {
  headStart: PARAM_OPEN,
  close: PARAM_CLOSE,
  newlines: false,
  head: (out, pos, to) => {
    if (!out.text.startsWith(PARAM_OPEN, pos)) return undefined;
    const head = quotedHead(out, pos, PARAM_OPEN, to);
    return { key: out.text.slice(...head.name), valueStart: head.closed ? head.end : to };
  },
};

const SECTION: SectionGrammar = {
  ends: [SECTION_END],
  callBegin: INVOKE_OPEN,
  breaks: [END, SECTION_BEGIN],
  markers: MARKERS,
  call,
};

const GRAMMAR: TurnGrammar = {
  family: 'minimax-m2',
  toolMarkers: TOOL_MARKERS,
  markers: MARKERS,
  implicitThink: true,
  ends: [END],
  starters: [
    { marker: SECTION_BEGIN, parse: (out, start, hit) => parseSection(out, SECTION, start, hit) },
    { marker: INVOKE_OPEN, parse: (out, start) => parseSection(out, SECTION, start) },
  ],
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
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close, hasContent } = renderStart(m, opts, { newlines: true });
  if (m.toolCalls.length) {
    if (hasContent) out.put('\n');
    out.wrap('section', () => {
      out.put(`${SECTION_BEGIN}\n`);
      m.toolCalls.forEach((c, i) => {
        out.wrap(
          'call',
          () => {
            out.put(INVOKE_OPEN).put(c.name, 'call-name', i).put('">\n');
            renderParams(out, i, c.arguments, (k, v) => `${PARAM_OPEN}${k}">${v}${PARAM_CLOSE}`);
            if (close.call(i)) out.put(INVOKE_CLOSE);
          },
          i,
        );
        if (close.call(i)) out.put('\n');
      });
      if (close.turn) out.put(SECTION_END);
    });
  }
  if (close.turn) out.put(END, 'end');
  return out.done();
}

/** One `<invoke name="…">` from `start`; `sectioned` is false when no `<minimax:tool_call>` opened. */
function call(out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number {
  const { text } = out;
  const stop = out.find(BODY_STOPS, start + INVOKE_OPEN.length);
  const head = quotedHead(out, start, INVOKE_OPEN, stop ? stop.start : text.length);
  return xmlCall(
    out,
    {
      start,
      nameRange: head.name,
      nameUnclosed: head.closed ? undefined : '">',
      bodyStart: head.end,
      stop,
      closers: [INVOKE_CLOSE],
      defects: sectioned ? [] : [`${INVOKE_OPEN}…"> outside ${SECTION_BEGIN}`],
    },
    PARAMS,
    MARKERS,
  );
}
