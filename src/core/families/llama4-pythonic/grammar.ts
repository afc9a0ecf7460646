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
  patterns: [
    ...(json.patterns ?? []),
    { find: findList, parse: (out, start) => list(out, start, start) },
    { find: findBare, parse: bareList },
  ],
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
  if (typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pyValue(x)}`)
      .join(', ')}}`;
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

/**
 * How far a family's call lists stray from Python:
 * - `jsonWords`: `true`/`false`/`null` are literals too (LFM2's chat template writes mappings and lists as JSON);
 * - `repairs`: the slips the engines' LFM2 parsers read as the model meant them (vLLM `lfm2_tool_parser.py` with
 *   `tool_parsers/utils.py`, SGLang `lfm2_detector.py` `_recovery_candidates`): a set literal is a list, `+5` a
 *   number, and a string holding unescaped quotes of its own kind (`command='sed -n '1,9p' f.py'`) closes at the one
 *   quote after which the call still reads (see `readCall`).
 */
export interface PyDialect {
  jsonWords?: boolean;
  repairs?: boolean;
}

/** State of one reading of a call's arguments. */
interface ReadCtx {
  d: PyDialect;
  /** A string opened at `[0]` closes at `[1]` (a nested-quote reading being tried). */
  override?: [number, number];
  /** The first string whose first closing quote cannot close it (what follows is none of `,)]}:`). */
  broken?: number;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', b: '\b', f: '\f' };

/** After a quote at `q`, what follows can end a string: `,)]}:`, or the end of the text (more may come). */
function canClose(text: string, q: number): boolean {
  const k = skipWs(text, q + 1);
  return k >= text.length || ',)]}:'.includes(text[k]);
}

/** A Python literal at `pos` (strings, numbers, True/False/None, lists, dicts, tuples as lists). */
function readValue(text: string, pos: number, ctx: ReadCtx, depth = 0): Read {
  const i = skipWs(text, pos);
  if (i >= text.length) return { end: i, complete: false };
  if (depth > 64) return { end: i, complete: true, bad: true };
  const c = text[i];
  if (c === '"' || c === "'") {
    const closeAt = ctx.override?.[0] === i ? ctx.override[1] : -1;
    let s = '';
    for (let j = i + 1; j < text.length; j++) {
      const ch = text[j];
      if (ch === c && (closeAt < 0 || j === closeAt)) {
        if (ctx.d.repairs && closeAt < 0 && ctx.broken === undefined && !canClose(text, j)) ctx.broken = i;
        return { value: s, end: j + 1, complete: true };
      }
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
    let dict = c === '{';
    let result: unknown[] | Record<string, unknown> = dict ? {} : [];
    let p = skipWs(text, i + 1);
    for (let first = true; ; first = false) {
      if (p >= text.length) return { end: p, complete: false };
      if (text[p] === closeCh) return { value: result, end: p + 1, complete: true };
      const v = readValue(text, p, ctx, depth + 1);
      if (!v.complete || v.bad) return v;
      p = skipWs(text, v.end);
      if (dict && first && ctx.d.repairs && (text[p] === ',' || text[p] === '}')) {
        // A set literal (`{'urgent', 'bug'}`): JSON has no set, the engines give a list in source order.
        dict = false;
        result = [];
      }
      if (dict) {
        if (p >= text.length) return { end: p, complete: false };
        if (text[p] !== ':') return { end: p, complete: true, bad: true };
        const x = readValue(text, p + 1, ctx, depth + 1);
        if (!x.complete || x.bad) return x;
        (result as Record<string, unknown>)[String(v.value)] = x.value;
        p = skipWs(text, x.end);
      } else (result as unknown[]).push(v.value);
      if (text[p] === ',') p = skipWs(text, p + 1);
      else if (p < text.length && text[p] !== closeCh) return { end: p, complete: true, bad: true };
    }
  }
  const m = (
    ctx.d.jsonWords
      ? /^(?:True|False|None|true|false|null|[-+]?(?:\d[\d_]*)(?:\.\d*)?(?:[eE][-+]?\d+)?)/
      : /^(?:True|False|None|-?(?:\d[\d_]*)(?:\.\d*)?(?:[eE][-+]?\d+)?)/
  ).exec(text.slice(i, i + 64));
  if (!m || (m[0][0] === '+' && !ctx.d.repairs)) return { end: i, complete: true, bad: true };
  const e = i + m[0].length;
  // A number or a name cut by the end of the text may be longer than what arrived.
  if (e >= text.length) return { end: e, complete: false };
  if (/[\w.]/.test(text[e])) return { end: e, complete: true, bad: true };
  const word = m[0];
  const value =
    word === 'True' || word === 'true'
      ? true
      : word === 'False' || word === 'false'
        ? false
        : word === 'None' || word === 'null'
          ? null
          : Number(word.replace(/_/g, ''));
  // A literal past the float range (`1e999`) has no JSON form: the engines reject the call.
  if (typeof value === 'number' && !Number.isFinite(value)) return { end: e, complete: true, bad: true };
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
    out.problem('section-unclosed', 'the call list never closed by ]', start, lastEnd, {
      expectedAt: trimRange(text, at, lastEnd)[1],
      marker: ']',
    });
  } else if (!closed) {
    out.problem('malformed-call', 'the call list goes on with text that is not a call', start, lastEnd);
  }
  return lastEnd;
}

interface ArgsRead {
  args: Record<string, unknown>;
  /** Where reading stopped: the call's `)` when `closed`. */
  p: number;
  closed: boolean;
  bad: boolean;
}

/** The `k=v, …` of a call from `argStart` (after its `(`), up to its `)`. */
function readArgs(text: string, argStart: number, ctx: ReadCtx): ArgsRead {
  const args: Record<string, unknown> = {};
  let p = argStart;
  for (;;) {
    p = skipWs(text, p);
    if (p >= text.length) return { args, p, closed: false, bad: false };
    if (text[p] === ')') return { args, p, closed: true, bad: false };
    const key = /^([A-Za-z_]\w*)\s*=/.exec(text.slice(p, p + 256));
    if (!key) {
      // Cut inside the keyword, or not a keyword argument.
      const cut = /^[A-Za-z_]\w*\s*$/.test(text.slice(p));
      return { args, p: cut ? text.length : p, closed: false, bad: !cut };
    }
    const v = readValue(text, p + key[0].length, ctx);
    if (!v.complete) return { args, p: text.length, closed: false, bad: false };
    if (v.bad) return { args, p, closed: false, bad: true };
    args[key[1]] = v.value;
    p = skipWs(text, v.end);
    if (text[p] === ',') p++;
    else if (p < text.length && text[p] !== ')') return { args, p, closed: false, bad: true };
  }
}

/** A `)` the list goes on after (`,`) or closes after (`]`). */
const LIST_GOES_ON = /\)\s*[\],]/g;

/** Where bracket counting alone (blind to quotes, so a stray quote cannot mislead it) ends the call opened at `open`. */
function bracketEnd(text: string, open: number): number {
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    const ch = text[j];
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if ((ch === ')' || ch === ']' || ch === '}') && --depth === 0) return j;
  }
  return -1;
}

/**
 * The arguments of a call whose reading failed on a string holding unescaped quotes of its own kind (`repairs`),
 * read as the engines' LFM2 parsers do: every quote after which the string could close (`,)]}:` follows) is tried,
 * and the string closes at the one quote after which the call reads to its `)` and the list goes on (`,` `]`, or the
 * end of the text). None, or several, and the call stays broken; none while the text may still be arriving (no `)`
 * that could end the list seen yet) and the call is only cut off. A reading that swallows the next call into the
 * string is not one (SGLang `_escape_nested_quotes_in_strings` counts the calls by brackets to the same end).
 */
function requote(text: string, argStart: number, open: number, d: PyDialect): ArgsRead | 'cut' | undefined {
  const quote = text[open];
  const end = bracketEnd(text, argStart - 1);
  const sibling = end >= 0 && /^\s*,\s*[A-Za-z_][\w.]*\s*\(/.test(text.slice(end + 1, end + 257));
  let winner: ArgsRead | undefined;
  let winners = 0;
  let tried = 0;
  for (let j = open + 1; j < text.length && tried < 64; j++) {
    if (sibling && j > end) break;
    if (text[j] === '\\') {
      j++;
      continue;
    }
    if (text[j] !== quote || !canClose(text, j) || skipWs(text, j + 1) >= text.length) continue;
    tried++;
    const r = readArgs(text, argStart, { d, override: [open, j] });
    if (!r.closed || r.bad) continue;
    const after = skipWs(text, r.p + 1);
    if (after < text.length && text[after] !== ',' && text[after] !== ']') continue;
    winners++;
    winner = r;
  }
  if (winners === 1) return winner;
  LIST_GOES_ON.lastIndex = open;
  if (winners === 0 && !LIST_GOES_ON.test(text)) return 'cut';
  return undefined;
}

/** The `)` that ends a call: the list goes on, closes, or the text ends after it. */
const CALL_END = /\)\s*(?:[\],]|$)/g;

/** `NAME(k=v, …)` at `pos`, in the dialect `d`. */
export function readCall(out: ParseOut, pos: number, d: PyDialect = {}): { end: number; complete: boolean } {
  const { text } = out;
  const index = out.calls.length;
  const nm = /^[A-Za-z_][\w.]*/.exec(text.slice(pos, pos + 256));
  if (!nm) return { end: pos, complete: true };
  const nameEnd = pos + nm[0].length;
  const p = skipWs(text, nameEnd);
  if (p >= text.length) return finish(index, pos, nameEnd, undefined, '', false, p);
  if (text[p] !== '(') return { end: pos, complete: true };
  const argStart = skipWs(text, p + 1);
  const ctx: ReadCtx = { d };
  let r = readArgs(text, argStart, ctx);
  if (!r.closed && d.repairs && ctx.broken !== undefined) {
    const fixed = requote(text, argStart, ctx.broken, d);
    if (fixed === 'cut') r = { args: r.args, p: text.length, closed: false, bad: false };
    else if (fixed) r = fixed;
  }
  if (r.closed) return finish(index, pos, nameEnd, [argStart, trimRange(text, argStart, r.p)[1]], JSON.stringify(r.args), true, r.p + 1);
  if (r.bad) {
    // Not keyword literals: the raw text up to the `)` that ends the call.
    CALL_END.lastIndex = argStart;
    const close = CALL_END.exec(text);
    if (close) {
      const end = close.index;
      out.problem('malformed-call', `call ${index}: the arguments are not keyword=literal pairs`, pos, end + 1, { callIndex: index });
      return finish(index, pos, nameEnd, trimRange(text, argStart, end), text.slice(...trimRange(text, argStart, end)), true, end + 1);
    }
  }
  // Cut off inside the call: what arrived, as written.
  const range = trimRange(text, argStart, text.length);
  return finish(index, pos, nameEnd, range[1] > range[0] ? range : undefined, text.slice(...range), false, range[1]);

  function finish(
    i: number,
    start: number,
    nEnd: number,
    argRange: [number, number] | undefined,
    argsText: string,
    complete: boolean,
    end: number,
  ) {
    out.addCall(text.slice(start, nEnd), argsText);
    out.seg('call', start, Math.max(end, nEnd), i);
    out.seg('call-name', start, nEnd, i);
    if (argRange && argRange[1] > argRange[0]) out.seg('arguments', argRange[0], argRange[1], i);
    if (!complete) callUnclosed(out, i, start, Math.max(end, nEnd), ')', Math.max(end, nEnd));
    return { end: Math.max(end, nEnd), complete };
  }
}
