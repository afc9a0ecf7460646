/**
 * Llama 4 pythonic tool calls ('llama4-pythonic'):
 *
 *   CONTENT\n[get_weather(location="NYC", days=3), now()]<|eot|>       (optionally inside <|python_start|>…<|python_end|>)
 *
 * vLLM `llama4_pythonic_tool_parser.py` / `pythonic` (a Python list of calls with keyword arguments, literal values;
 * `<|python_start|>`/`<|python_end|>` stripped). Llama 4 also writes the Llama 3 JSON form (`<|python_tag|>{…}`), read
 * here too. A list is recognised where a call list can start: `[NAME(` followed by `)` or `KEY=`, so `a[len(x)]` in
 * prose or code is text. Arguments come back as canonical compact JSON, typed by the Python literals (`True` → true,
 * `None` → null); arguments that are not keyword literals are kept raw and flagged.
 */
import type { AssistantMessage, NativeText } from '../../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  callUnclosed,
  jsonCallStarters,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from '../shared';
import { LLAMA_JSON, PYTHON_TAG } from '../llama3-json/grammar';
import type { ModelFormat, RenderOptions } from '../shared/format';

const START = '<|python_start|>';
const STOP = '<|python_end|>';
const EOT = '<|eot|>';
const EOM = '<|eom|>';
const TOOL_MARKERS = [START, STOP, PYTHON_TAG];
const MARKERS = [STOP, EOT, EOM, START, PYTHON_TAG, '<|header_start|>', '<|header_end|>', '<|begin_of_text|>', THINK_OPEN, THINK_CLOSE];

/** Where a call list may start: `[NAME(` then `)` or `KEY=`; at the start of a line any `[NAME(`. */
const LIST_START = /\[\s*[A-Za-z_][\w.]*\s*\(\s*(?:\)|[A-Za-z_]\w*\s*=)|^[ \t]*\[\s*[A-Za-z_][\w.]*\s*\(/gm;

const json = jsonCallStarters(LLAMA_JSON);
const GRAMMAR: TurnGrammar = {
  family: 'llama4-pythonic',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: false,
  ends: [EOT, EOM],
  starters: [...json.starters, { marker: START, parse: wrapped }],
  patterns: [...(json.patterns ?? []), { find: findList, parse: (out, start) => list(out, start, start) }, { find: findBare, parse: bareList }],
};

export const llama4Pythonic: ModelFormat = {
  id: 'llama4-pythonic',
  displayName: 'Llama 4 (pythonic tool calls)',
  markerless: true,
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /llama-?4|pythonic/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [START, 10],
      [/(?:^|[\s!.?:;,])\[\s*[A-Za-z_][\w.]*\s*\(\s*(?:\)|[A-Za-z_]\w*\s*=)/, 8],
      [BARE, 6],
      [STOP, 4],
    ]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

/** A whole turn that is a call list missing its `[`: `get_weather(location="NYC")]`. */
const BARE = /^\s*[A-Za-z_][\w.]*\s*\(\s*[A-Za-z_]\w*\s*=[^]*\)\s*\]\s*$/;

function findBare(text: string, from: number): number {
  return from === 0 && text.length < 1_000_000 && BARE.test(text) ? skipWs(text, 0) : -1;
}

/** The calls of a list that lacks its `[`, up to the orphan `]`: kept, and flagged. */
function bareList(out: ParseOut, start: number): number {
  const { text } = out;
  let pos = start;
  for (;;) {
    const c = readCall(out, skipWs(text, pos));
    if (c.end <= pos || !c.complete) break;
    pos = skipWs(text, c.end);
    if (text[pos] !== ',') break;
    pos++;
  }
  const end = text[pos] === ']' ? pos + 1 : pos;
  out.seg('section', start, end);
  out.problem('malformed-call', 'a call list without its opening [', start, end);
  return Math.max(end, start + 1);
}

function findList(text: string, from: number): number {
  LIST_START.lastIndex = from;
  for (let m = LIST_START.exec(text); m; m = LIST_START.exec(text)) {
    // At the start of the text or a line, or after sentence punctuation or a space: not an index into a name.
    const at = m.index + m[0].indexOf('[');
    const before = at === 0 ? '' : text[at - 1];
    if (before === '' || /[\s!.?:;,)>]/.test(before)) return at;
  }
  return -1;
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close, hasContent } = renderStart(m, opts, { newlines: false });
  if (m.toolCalls.length) {
    if (hasContent) out.put('\n');
    out.wrap('section', () => {
      out.put('[');
      m.toolCalls.forEach((c, i) => {
        if (i > 0) out.put(', ');
        out.wrap(
          'call',
          () => {
            out.put(c.name, 'call-name', i).put('(').put(pyArgs(c.arguments), 'arguments', i);
            if (close.call(i)) out.put(')');
          },
          i,
        );
      });
      if (close.turn) out.put(']');
    });
  }
  if (close.turn) out.put(EOT, 'end');
  return out.done();
}

/** JSON-object arguments as keyword arguments; anything else as written. */
export function pyArgs(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${k}=${pyValue(x)}`)
        .join(', ');
    }
  } catch {
    // Raw.
  }
  return args;
}

function pyValue(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null) return 'None';
  if (Array.isArray(v)) return `[${v.map(pyValue).join(', ')}]`;
  if (typeof v === 'object') return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${JSON.stringify(k)}: ${pyValue(x)}`).join(', ')}}`;
  return JSON.stringify(v);
}

/** `<|python_start|>[…]<|python_end|>`. */
function wrapped(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const at = skipWs(text, hit.end);
  if (text[at] !== '[') {
    out.seg('marker', hit.start, hit.end);
    if (at < text.length) out.problem('malformed-call', `${START} not followed by a call list`, hit.start, hit.end);
    return hit.end;
  }
  const end = list(out, start, at);
  const stop = skipWs(text, end);
  return text.startsWith(STOP, stop) ? stop + STOP.length : end;
}

interface Read {
  value?: unknown;
  end: number;
  /** False when the text ran out inside the value. */
  complete: boolean;
  bad?: boolean;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', b: '\b', f: '\f' };

/**
 * A Python literal at `pos` (strings, numbers, True/False/None, lists, dicts, tuples as lists). `jsonWords`: also
 * `true`/`false`/`null` (LFM2's chat template writes mappings and lists as JSON).
 */
function readValue(text: string, pos: number, depth = 0, jsonWords = false): Read {
  const i = skipWs(text, pos);
  if (i >= text.length) return { end: i, complete: false };
  if (depth > 64) return { end: i, complete: true, bad: true };
  const c = text[i];
  if (c === '"' || c === "'") {
    let s = '';
    for (let j = i + 1; j < text.length; j++) {
      const ch = text[j];
      if (ch === c) return { value: s, end: j + 1, complete: true };
      if (ch === '\\') {
        const n = text[++j];
        if (n === undefined) break;
        if (n === 'u' || n === 'x') {
          const len = n === 'u' ? 4 : 2;
          const hex = text.slice(j + 1, j + 1 + len);
          if (hex.length < len) break;
          s += String.fromCharCode(parseInt(hex, 16));
          j += len;
        } else s += ESCAPES[n] ?? `\\${n}`;
      } else s += ch;
    }
    return { end: text.length, complete: false };
  }
  if (c === '[' || c === '(' || c === '{') {
    const closeCh = c === '{' ? '}' : c === '[' ? ']' : ')';
    const dict = c === '{';
    const result: unknown[] | Record<string, unknown> = dict ? {} : [];
    let p = skipWs(text, i + 1);
    for (;;) {
      if (p >= text.length) return { end: p, complete: false };
      if (text[p] === closeCh) return { value: result, end: p + 1, complete: true };
      let key: unknown;
      if (dict) {
        const k = readValue(text, p, depth + 1, jsonWords);
        if (!k.complete || k.bad) return k;
        p = skipWs(text, k.end);
        if (p >= text.length) return { end: p, complete: false };
        if (text[p] !== ':') return { end: p, complete: true, bad: true };
        key = k.value;
        p++;
      }
      const v = readValue(text, p, depth + 1, jsonWords);
      if (!v.complete || v.bad) return v;
      if (dict) (result as Record<string, unknown>)[String(key)] = v.value;
      else (result as unknown[]).push(v.value);
      p = skipWs(text, v.end);
      if (text[p] === ',') p = skipWs(text, p + 1);
      else if (p < text.length && text[p] !== closeCh) return { end: p, complete: true, bad: true };
    }
  }
  const m = (jsonWords ? /^(?:True|False|None|true|false|null|-?(?:\d[\d_]*)(?:\.\d*)?(?:[eE][-+]?\d+)?)/ : /^(?:True|False|None|-?(?:\d[\d_]*)(?:\.\d*)?(?:[eE][-+]?\d+)?)/).exec(text.slice(i, i + 64));
  if (!m) return { end: i, complete: true, bad: true };
  const e = i + m[0].length;
  // A number or a name cut by the end of the text may be longer than what arrived.
  if (e >= text.length) return { end: e, complete: false };
  if (/[\w.]/.test(text[e])) return { end: e, complete: true, bad: true };
  const word = m[0];
  const value = word === 'True' || word === 'true' ? true : word === 'False' || word === 'false' ? false : word === 'None' || word === 'null' ? null : Number(word.replace(/_/g, ''));
  return { value, end: e, complete: true };
}

/** The call list whose `[` is at `at` (`start`: where its section starts). Returns where it ends. */
function list(out: ParseOut, start: number, at: number): number {
  const { text } = out;
  let pos = at + 1;
  let lastEnd = pos;
  let closed = false;
  let cut = false;
  let atEnd = false;
  for (;;) {
    pos = skipWs(text, pos);
    atEnd = pos >= text.length;
    if (text[pos] === ']') {
      closed = true;
      lastEnd = pos + 1;
      break;
    }
    if (pos >= text.length) break;
    const c = readCall(out, pos);
    if (c.end <= pos) break;
    lastEnd = c.end;
    if (!c.complete) {
      cut = true;
      break;
    }
    pos = skipWs(text, c.end);
    if (text[pos] === ',') {
      pos++;
      continue;
    }
    if (text[pos] === ']') continue;
    break;
  }
  atEnd ||= skipWs(text, pos) >= text.length;
  out.seg('section', start, lastEnd);
  if (!closed && (cut || atEnd)) {
    out.problem('section-unclosed', 'the call list never closed by ]', start, lastEnd, { expectedAt: trimRange(text, at, lastEnd)[1], marker: ']' });
  } else if (!closed) {
    out.problem('malformed-call', 'the call list goes on with text that is not a call', start, lastEnd);
  }
  return lastEnd;
}

/** `NAME(k=v, …)` at `pos`; `jsonWords` as for `readValue`. */
export function readCall(out: ParseOut, pos: number, jsonWords = false): { end: number; complete: boolean } {
  const { text } = out;
  const index = out.calls.length;
  const nm = /^[A-Za-z_][\w.]*/.exec(text.slice(pos, pos + 256));
  if (!nm) return { end: pos, complete: true };
  const nameEnd = pos + nm[0].length;
  let p = skipWs(text, nameEnd);
  if (p >= text.length) return finish(index, pos, nameEnd, undefined, '', false, p);
  if (text[p] !== '(') return { end: pos, complete: true };
  const argStart = skipWs(text, p + 1);
  p = argStart;
  const args: Record<string, unknown> = {};
  let bad = false;
  for (;;) {
    p = skipWs(text, p);
    if (p >= text.length) break;
    if (text[p] === ')') {
      return finish(index, pos, nameEnd, [argStart, trimRange(text, argStart, p)[1]], JSON.stringify(args), true, p + 1);
    }
    const key = /^([A-Za-z_]\w*)\s*=/.exec(text.slice(p, p + 256));
    if (!key) {
      if (/^[A-Za-z_]\w*\s*$/.test(text.slice(p))) break; // cut inside the keyword
      bad = true;
      break;
    }
    const v = readValue(text, p + key[0].length, 0, jsonWords);
    if (!v.complete) {
      p = text.length;
      break;
    }
    if (v.bad) {
      bad = true;
      break;
    }
    args[key[1]] = v.value;
    p = skipWs(text, v.end);
    if (text[p] === ',') p++;
    else if (p < text.length && text[p] !== ')') {
      bad = true;
      break;
    }
  }
  if (bad) {
    // Not keyword literals: the raw text up to the `)` that ends the call.
    const close = /\)\s*(?:[\],]|$)/.exec(text.slice(argStart));
    if (close) {
      const end = argStart + close.index;
      out.problem('malformed-call', `call ${index}: the arguments are not keyword=literal pairs`, pos, end + 1, { callIndex: index });
      return finish(index, pos, nameEnd, trimRange(text, argStart, end), text.slice(...trimRange(text, argStart, end)), true, end + 1);
    }
  }
  // Cut off inside the call: what arrived, as written.
  const range = trimRange(text, argStart, text.length);
  return finish(index, pos, nameEnd, range[1] > range[0] ? range : undefined, text.slice(...range), false, range[1]);

  function finish(i: number, start: number, nEnd: number, argRange: [number, number] | undefined, argsText: string, complete: boolean, end: number) {
    out.addCall(text.slice(start, nEnd), argsText);
    out.seg('call', start, Math.max(end, nEnd), i);
    out.seg('call-name', start, nEnd, i);
    if (argRange && argRange[1] > argRange[0]) out.seg('arguments', argRange[0], argRange[1], i);
    if (!complete) callUnclosed(out, i, start, Math.max(end, nEnd), ')', Math.max(end, nEnd));
    return { end: Math.max(end, nEnd), complete };
  }
}
