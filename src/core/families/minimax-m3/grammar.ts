/**
 * MiniMax M3 ('minimax-m3'): every tag carries the namespace sentinel `]<]minimax[>[`:
 *
 *   <mm:think>REASONING</mm:think>CONTENT]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="f">\n]<]minimax[>[<path>a.ts]<]minimax[>[</path>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>[e~[
 *
 * A parameter is an element named after its key (SGLang `minimax_m3.py`, vLLM `test_minimax_m3_tool_parser.py`).
 * Objects may come as nested elements, arrays as `<item>` children, and repeated same-name children form a list;
 * `parse` reads those. `render` writes one element per key with non-string values as JSON text, so a string `"2"`
 * and the number 2 stay apart without the tool schema. Scalars are typed as in the other XML families. The reasoning is
 * `<mm:think>…</mm:think>`, and a turn without reasoning may start with a bare `</mm:think>` (written by the prompt with
 * thinking off, or by the model): ggml-org/llama.cpp common/parsers/minimax-m3.cpp and tests/test-chat.cpp "MiniMax-M3"
 * @ 0042e2079d3428ba7af410df553202aa7fdf8d7a, whose template writes no line breaks around it and none between the
 * content and the section. The `[e~[` end of turn is MiniMax-M2's (the sources do not describe M3's). No call ids.
 */
import {
  callUnclosed,
  endsInMarker,
  expectClosers,
  findTruncated,
  invokeGrammar,
  modelKey,
  paramsToJson,
  parseTurn,
  renderInvokes,
  scoreText,
  skipWs,
  trimRange,
  type InvokeRender,
  type ParseOut,
} from '../shared';
import type { ModelFormat } from '../shared/format';

export const NS = ']<]minimax[>[';
export const SECTION_BEGIN = `${NS}<tool_call>`;
export const SECTION_END = `${NS}</tool_call>`;
export const INVOKE_OPEN = `${NS}<invoke name="`;
export const INVOKE_CLOSE = `${NS}</invoke>`;
const END = '[e~[';
const THINK = { open: '<mm:think>', close: '</mm:think>' };

const TOOL_MARKERS = [SECTION_BEGIN, SECTION_END, INVOKE_OPEN, INVOKE_CLOSE];
const MARKERS = [SECTION_END, INVOKE_CLOSE, SECTION_BEGIN, INVOKE_OPEN, THINK.close, THINK.open, END];
const BODY_STOPS = [INVOKE_CLOSE, INVOKE_OPEN, SECTION_END, SECTION_BEGIN, END];
const KEY = /^[^\s<>/"]+/;
const KEY_TAIL = /^[^\s<>/"]*$/;

const DIALECT = { sectionBegin: SECTION_BEGIN, sectionEnd: SECTION_END, invokeOpen: INVOKE_OPEN, invokeClose: INVOKE_CLOSE };
const GRAMMAR = invokeGrammar('minimax-m3', DIALECT, END, MARKERS, TOOL_MARKERS, call, THINK);
const RENDER: InvokeRender = {
  ...DIALECT,
  end: END,
  thinkNewlines: false,
  thinkTags: THINK,
  beforeSection: '',
  param: (k, v) => `${NS}<${k}>${v}${NS}</${k}>`,
};

export const minimaxM3: ModelFormat = {
  id: 'minimax-m3',
  displayName: 'MiniMax M3 (]<]minimax[>[)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: SECTION_END,
  matchesModel: (modelId) => /minimax-m3/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [SECTION_BEGIN, 12],
      [SECTION_END, 8],
      [INVOKE_OPEN, 8],
      [NS, 4],
    ]),
  render: (m, opts) => renderInvokes(RENDER, m, opts),
  parse: (text) => parseTurn(GRAMMAR, text),
};

/** The JSON value of an element's text: nested elements become an object (or a list of `<item>`s), text a scalar. */
function decode(raw: string): unknown {
  if (!raw.includes(`${NS}<`)) return (JSON.parse(paramsToJson([['v', raw]])) as { v: unknown }).v;
  const kids = elements(raw, 0, raw.length).params;
  if (!kids.length) return raw;
  if (kids.every(([k]) => k === 'item')) return kids.map(([, v]) => decode(v));
  return members(kids);
}

/** Elements as an object's members; a key that repeats collects its values into a list. */
function members(kids: readonly [string, string][]): Record<string, unknown> {
  const lists = new Map<string, unknown[]>();
  for (const [k, v] of kids) lists.set(k, [...(lists.get(k) ?? []), decode(v)]);
  return Object.fromEntries([...lists].map(([k, vs]) => [k, vs.length > 1 ? vs : vs[0]]));
}

interface Elements {
  params: [string, string][];
  range?: [number, number];
  rest: number;
  /** The element the text ended inside: its close marker and where that close was due. */
  unclosed?: { marker: string; expectedAt: number; cut?: [number, number] };
}

/** The `NS<KEY>VALUE NS</KEY>` elements in [from, to); stops at the first text that is not one. */
function elements(text: string, from: number, to: number): Elements {
  const params: [string, string][] = [];
  let pos = skipWs(text, from, to);
  let first: number | undefined;
  let last = pos;
  while (pos < to && text.startsWith(`${NS}<`, pos) && !text.startsWith(`${NS}</`, pos)) {
    const keyStart = pos + NS.length + 1;
    const key = KEY.exec(text.slice(keyStart, to))?.[0];
    if (!key || text[keyStart + key.length] !== '>') {
      // The text ends inside the head of the next element: it is cut off, not stray text.
      if (to === text.length && KEY_TAIL.test(text.slice(keyStart, to)))
        return { params, range: [first ?? pos, to], rest: to, unclosed: { marker: '>', expectedAt: to } };
      break;
    }
    first ??= pos;
    const valueStart = keyStart + key.length + 1;
    const closer = `${NS}</${key}>`;
    const closeAt = matchingClose(text, key, valueStart, to);
    if (closeAt < 0) {
      const cut = findTruncated(text, [closer, ...MARKERS], valueStart, to).find((c) => c.end === to);
      const valueEnd = cut ? cut.start : to;
      params.push([key, text.slice(valueStart, valueEnd)]);
      last = cut ? cut.end : Math.max(valueStart, trimRange(text, valueStart, valueEnd)[1]);
      return {
        params,
        range: [first, last],
        rest: to,
        unclosed: { marker: closer, expectedAt: valueEnd, cut: cut && [cut.start, cut.end] },
      };
    }
    params.push([key, text.slice(valueStart, closeAt)]);
    last = closeAt + closer.length;
    pos = skipWs(text, last, to);
  }
  return { params, range: first === undefined ? undefined : [first, last], rest: pos };
}

/** Where `NS</KEY>` closes the element whose value starts at `from`, counting same-name elements nested in it. */
function matchingClose(text: string, key: string, from: number, to: number): number {
  const open = `${NS}<${key}>`;
  const close = `${NS}</${key}>`;
  let depth = 0;
  let pos = from;
  for (;;) {
    const c = text.indexOf(close, pos);
    if (c < 0 || c + close.length > to) return -1;
    const o = text.indexOf(open, pos);
    if (o >= 0 && o < c) {
      depth++;
      pos = o + open.length;
    } else if (depth) {
      depth--;
      pos = c + close.length;
    } else return c;
  }
}

/** One `NS<invoke name="…">` from `start`; `sectioned` is false when no `NS<tool_call>` opened. */
function call(out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number {
  const { text } = out;
  const index = out.calls.length;
  const defects = sectioned ? [] : [`${INVOKE_OPEN}…"> outside ${SECTION_BEGIN}`];
  const stop = out.find(BODY_STOPS, start + INVOKE_OPEN.length);
  const to = stop ? stop.start : text.length;
  const nameStart = start + INVOKE_OPEN.length;
  const q = text.indexOf('">', nameStart);
  const nameClosed = q >= 0 && q < to && !/[\n<]/.test(text.slice(nameStart, q));
  const nameRange: [number, number] = nameClosed
    ? [nameStart, q]
    : trimRange(text, nameStart, Math.min(to, ...['\n', '<'].map((c) => text.indexOf(c, nameStart)).filter((i) => i >= 0)));
  const bodyStart = nameClosed ? q + 2 : nameRange[1];
  const els = nameClosed ? elements(text, bodyStart, to) : ({ params: [], rest: bodyStart } as Elements);
  let restRange = trimRange(text, els.rest, to);
  if (!stop && endsInMarker(text, restRange[0], [INVOKE_CLOSE, ...MARKERS])) restRange = [restRange[0], restRange[0]];
  const rest = els.unclosed ? '' : text.slice(...restRange);
  let args: string;
  let argRange = els.range;
  if (els.params.length) {
    args = JSON.stringify(members(els.params));
    if (rest) defects.push('text after the parameters');
  } else {
    args = rest || '{}';
    if (rest) {
      argRange = restRange;
      if (stop) defects.push('the body is not parameters');
    }
  }
  const bodyEnd = Math.max(els.range?.[1] ?? bodyStart, rest ? restRange[1] : 0, nameRange[1]);
  let end = bodyEnd;
  let missing: string | undefined;
  let expectedAt = bodyEnd;
  if (!nameClosed) {
    if (stop) defects.push('name not closed by ">');
    else missing = '">';
  } else if (els.unclosed) {
    if (els.unclosed.cut)
      out.problem('marker-truncated', `${text.slice(...els.unclosed.cut)} is cut short`, ...els.unclosed.cut, { callIndex: index });
    if (stop) defects.push(`parameter '${els.params.at(-1)![0]}' lacks ${els.unclosed.marker}`);
    else missing = els.unclosed.marker;
    expectedAt = els.unclosed.expectedAt;
  } else {
    const tail = expectClosers(out, bodyEnd, [INVOKE_CLOSE], MARKERS, index);
    end = tail.end;
    missing = tail.missing;
    expectedAt = tail.expectedAt ?? end;
    defects.push(...tail.skipped.map((s) => `no ${s}`));
  }
  out.addCall(text.slice(...nameRange), args);
  out.seg('call', start, end, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (missing) callUnclosed(out, index, start, end, missing, expectedAt);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, end, { callIndex: index });
  return end;
}
