/**
 * Gemma 4 ('gemma4'):
 *
 *   <|channel>thought\nREASONING\n<channel|>CONTENT<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1,o:{k:[1,2]}}<tool_call|><turn|>
 *
 * Bare keys, `<|"|>` as the string delimiter (no escapes inside), JSON scalars, `{…}` objects and `[…]` lists
 * (ai-dynamo/frontend-crates `parsers/v2/README.md`, "Parser families"; conformance fixtures `inputs/gemma4`). Arguments
 * come back as canonical compact JSON, typed by the grammar; an argument body that is not this syntax is kept raw and
 * flagged. A call cut off keeps the text that arrived as its arguments.
 *
 * A string closes at the delimiter that structure follows (an inner `<|"|>` is a literal quote). A JSON-quoted string
 * reads as JSON, as Ollama reads it. A string opened with one form and closed with another (`'…'<|"|>`, `<|"|>…"`, no
 * opener and a closing `<|"|>`), single-quoted, or never closed before the call's `}` is read as Ollama's and SGLang's
 * repairs read it, and flagged `malformed-call`: vLLM keeps such a value as its raw text, quotes and delimiter included.
 * `<|tool_response>` right after a call ends the turn (the chat template opens the tool's turn with it).
 */
import type { AssistantMessage, NativeText } from '../../model';
import {
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  stringEnd,
  trimRange,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from '../shared';
import { keyValueArgs, keyValueCall, type KeyValueCallSyntax, type KeyValueRead } from '../shared/key-value-call';
import type { ModelFormat, RenderOptions } from '../shared/format';

const CALL_OPEN = '<|tool_call>';
const CALL_CLOSE = '<tool_call|>';
const Q = '<|"|>';
const PREFIX = 'call:';
const THINK = { open: '<|channel>thought', close: '<channel|>' };
const END = '<turn|>';

const TOOL_RESPONSE = '<|tool_response>';

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, TOOL_RESPONSE, '<tool_response|>'];
const MARKERS = [CALL_CLOSE, THINK.close, END, CALL_OPEN, THINK.open, '<|turn>', TOOL_RESPONSE, '<tool_response|>', Q];

const GRAMMAR: TurnGrammar = {
  family: 'gemma4',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: false,
  think: THINK,
  ends: [END],
  starters: [{ marker: CALL_OPEN, parse: call }],
};

export const gemma4: ModelFormat = {
  id: 'gemma4',
  displayName: 'Gemma 4 (<|tool_call>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /gemma-?4/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [CALL_OPEN, 10],
      [CALL_CLOSE, 8],
      [Q, 4],
      [END, 1],
    ]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: true, tags: THINK });
  m.toolCalls.forEach((c, i) => {
    out.wrap(
      'call',
      () => {
        out.put(`${CALL_OPEN}${PREFIX}`).put(c.name, 'call-name', i);
        out.put(gemmaArgs(c.arguments), 'arguments', i);
        if (close.call(i)) out.put(CALL_CLOSE);
      },
      i,
    );
  });
  if (close.turn) out.put(END, 'end');
  return out.done();
}

/** JSON arguments in Gemma's syntax (bare keys); text that is not a JSON object is written as it is. */
const gemmaArgs = (args: string): string => keyValueArgs(args, Q, (k) => k);

/** A value read from `pos` (see `KeyValueRead`). */
type Read = KeyValueRead;

/** What a read found off the grammar but recovered (a string opened with one quote form and closed with another). */
type Notes = string[];

const KEY = /[A-Za-z0-9_.$-]/;
/** The ways a string value is written: Gemma's own delimiter, and the JSON and Python quotes the model falls back to. */
const QUOTES = [Q, '"', "'"] as const;
type Quote = (typeof QUOTES)[number];
type Container = '{' | '[';

/** The quote form at `i` (a `"` that is part of `<|"|>` is that delimiter, not a quote of its own). */
function quoteAt(text: string, i: number): Quote | undefined {
  if (text.startsWith(Q, i)) return Q;
  if (text[i] === '"' && !text.startsWith(Q, i - 2)) return '"';
  if (text[i] === "'") return "'";
  return undefined;
}

/**
 * Whether a value that ends at `p` is followed by what its container allows: `,` and the next key (or value in a
 * list), or the container's close followed by more structure, the call's close or the end of the text.
 */
function follows(text: string, p: number, to: number, container: Container): boolean {
  const i = skipWs(text, p, to);
  if (i >= to) return true;
  const c = text[i];
  if (c === (container === '{' ? '}' : ']')) {
    const j = skipWs(text, i + 1, to);
    return j >= to || ',}]<'.includes(text[j]);
  }
  if (c !== ',') return false;
  if (container === '[') return true;
  const j = skipWs(text, i + 1, to);
  if (j >= to) return true;
  if (text.startsWith(Q, j)) {
    // A key in the delimiter is short: looked for close by.
    const k = text.slice(j + Q.length, j + Q.length + 256).indexOf(Q);
    return k >= 0 && text[skipWs(text, j + 2 * Q.length + k, to)] === ':';
  }
  let k = j;
  if (text[k] === '"') k = Math.max(stringEnd(text, k, to), k);
  else while (k < to && KEY.test(text[k])) k++;
  return k > j && text[skipWs(text, k, to)] === ':';
}

/**
 * Where a string opened with `open` at `i` closes, looked for before `bound` (the call's end): first with its own form
 * (Gemma's `<|"|>` has no escapes, so an inner `<|"|>` that no structure follows is a literal quote: vLLM PR #48678),
 * then with any other form or pair of forms (`'abc'<|"|>`, `<|"|>abc"`, ollama/ollama#15315). Undefined: no close
 * that structure follows.
 */
function closeOf(
  text: string,
  i: number,
  bound: number,
  open: Quote | '',
  container: Container,
): { value: string; end: number; closer: string } | undefined {
  const to = text.length;
  const from = i + open.length;
  if (open === '"') {
    for (let k = from; k < bound; k++) {
      if (text[k] === '\\') k++;
      else if (quoteAt(text, k) === '"' && follows(text, k + 1, to, container)) {
        let value: string;
        try {
          value = JSON.parse(text.slice(i, k + 1)) as string;
        } catch {
          value = text.slice(from, k);
        }
        return { value, end: k + 1, closer: '"' };
      }
    }
  } else if (open) {
    for (let k = text.indexOf(open, from); k >= 0 && k < bound; k = text.indexOf(open, k + 1)) {
      if (quoteAt(text, k) === open && follows(text, k + open.length, to, container))
        return { value: text.slice(from, k), end: k + open.length, closer: open };
    }
  }
  // Closed with another form, or with two (a quote and then the delimiter).
  for (let k = from; k < bound; k++) {
    const q1 = quoteAt(text, k);
    if (!q1) continue;
    const after1 = k + q1.length;
    const q2 = quoteAt(text, after1);
    if (q2 && q2 !== q1 && follows(text, after1 + q2.length, to, container))
      return { value: text.slice(from, k), end: after1 + q2.length, closer: q1 + q2 };
    if (q1 !== open && follows(text, after1, to, container)) return { value: text.slice(from, k), end: after1, closer: q1 };
  }
  return undefined;
}

/** How a read goes: where the call region ends after a position, and what it recovered off the grammar. */
interface Reader {
  /** The end of the call region (the next `<tool_call|>`, `<|tool_call>` or `<turn|>`) at or after `pos`. */
  bound(pos: number): number;
  notes: Notes;
}

/** Gemma's value syntax in [pos, to): iterative over nesting depth by recursion kept shallow by real payloads. */
function readValue(text: string, pos: number, to: number, r: Reader, container: Container = '{', key = '', depth = 0): Read {
  const { notes } = r;
  const i = skipWs(text, pos, to);
  if (i >= to) return { end: to, complete: false };
  if (depth > 64) return { end: i, complete: true, bad: true };
  const label = key ? `the value of '${key}'` : 'a value';
  const open = quoteAt(text, i);
  if (open) {
    const close = closeOf(text, i, r.bound(i + 1), open, container);
    if (close) {
      if (close.closer !== open) notes.push(`${label} is opened with ${open} and closed with ${close.closer}`);
      else if (open === "'") notes.push(`${label} is quoted with ' instead of ${Q}`);
      return { value: close.value, end: close.end, complete: true };
    }
    if (open === Q) {
      const end = text.indexOf(Q, i + Q.length);
      if (end < 0) {
        // Never closed: cut off, or closed by the object close just before the call's `<tool_call|>` (ollama/ollama#15315:
        // `{command:<|"|>ls}`).
        const b = r.bound(i + 1);
        const brace = trimRange(text, i + Q.length, b)[1] - 1;
        if (text.startsWith(CALL_CLOSE, b) && brace >= i + Q.length && text[brace] === '}') {
          notes.push(`${label} is opened with ${Q} and never closed`);
          return { value: text.slice(i + Q.length, brace), end: brace, complete: true };
        }
        return { end: to, complete: false };
      }
      return { value: text.slice(i + Q.length, end), end: end + Q.length, complete: true };
    }
    // A JSON or Python quote never closed: cut off, unless the call was closed after it.
    const b = r.bound(i + 1);
    return text.startsWith(CALL_CLOSE, b) ? { end: i, complete: true, bad: true } : { end: to, complete: false };
  }
  if (to - i < Q.length && Q.startsWith(text.slice(i, to))) return { end: to, complete: false };
  const c = text[i];
  if (c === '{' || c === '[') {
    const obj = c === '{';
    const result: unknown[] | Record<string, unknown> = obj ? {} : [];
    let p = skipWs(text, i + 1, to);
    if (p >= to) return { end: to, complete: false };
    if (text[p] === (obj ? '}' : ']')) return { value: result, end: p + 1, complete: true };
    for (;;) {
      let k = '';
      if (obj) {
        // A bare key; a key in Gemma's delimiter or in JSON quotes (vLLM test_string_delimited_dict_key) is read too.
        if (text.startsWith(Q, p)) {
          const e = text.indexOf(Q, p + Q.length);
          if (e < 0 || e + Q.length > to) return { end: to, complete: false };
          k = text.slice(p + Q.length, e);
          p = e + Q.length;
        } else if (text[p] === '"') {
          const e = stringEnd(text, p, to);
          if (e < 0) return { end: to, complete: false };
          try {
            k = JSON.parse(text.slice(p, e)) as string;
          } catch {
            return { end: p, complete: true, bad: true };
          }
          p = e;
        } else {
          const ks = p;
          while (p < to && KEY.test(text[p])) p++;
          k = text.slice(ks, p);
          if (!k && p < to) return { end: p, complete: true, bad: true };
        }
        p = skipWs(text, p, to);
        if (p >= to) return { end: to, complete: false };
        if (!k || text[p] !== ':') return { end: p, complete: true, bad: true };
        p++;
      }
      const v = readValue(text, p, to, r, obj ? '{' : '[', obj ? k : key, depth + 1);
      if (!v.complete || v.bad) return v;
      if (obj) (result as Record<string, unknown>)[k] = v.value;
      else (result as unknown[]).push(v.value);
      p = skipWs(text, v.end, to);
      if (p >= to) return { end: to, complete: false };
      if (text[p] === ',') {
        p = skipWs(text, p + 1, to);
        continue;
      }
      if (text[p] === (obj ? '}' : ']')) return { value: result, end: p + 1, complete: true };
      return { end: p, complete: true, bad: true };
    }
  }
  // A scalar: runs to the next delimiter.
  let e = i;
  while (e < to && !',}]'.includes(text[e]) && !text.startsWith('<', e)) e++;
  if (e >= to) return { end: to, complete: false };
  const raw = text.slice(i, e).trim();
  try {
    return { value: JSON.parse(raw) as unknown, end: e, complete: true };
  } catch {
    // A bare string. Written with no opening quote but a closing one (SGLang PR #39240: `query:weather in Tokyo<|"|>`),
    // it runs to that close.
    if (!follows(text, e, to, container) || quoteAt(text, e) || /["']$/.test(raw)) {
      const close = closeOf(text, i, r.bound(i), '', container);
      if (close) {
        notes.push(`${label} has no opening quote and is closed with ${close.closer}`);
        return { value: close.value.trim(), end: close.end, complete: true };
      }
    }
    return { value: raw, end: e, complete: true, bad: !raw };
  }
}

/** Gemma's call: its closer, what ends a call region, and its value syntax (with the repairs it reads, flagged). */
const CALL_SYNTAX: KeyValueCallSyntax = {
  close: CALL_CLOSE,
  stops: [CALL_CLOSE, CALL_OPEN, END],
  prefix: PREFIX,
  read: (out, brace) => {
    const { text } = out;
    const reader: Reader = { bound: (p) => out.find([CALL_CLOSE, CALL_OPEN, END], p)?.start ?? text.length, notes: [] };
    return { ...readValue(text, brace, text.length, reader), notes: reader.notes };
  },
};

/** One `<|tool_call>call:NAME{…}<tool_call|>` from `start`. The arguments are read first, so markers inside strings stay text. */
function call(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const { end, closed } = keyValueCall(out, start, hit, CALL_SYNTAX);
  // The chat template follows a call with `<|tool_response>` (the turn the tool's result goes in), and the model may
  // write it before stopping: it ends the model's turn (Ollama `TestGemma4Parser_IgnoresToolResponseBoundaryAfterToolCall`).
  const response = skipWs(text, end);
  if (closed && text.startsWith(TOOL_RESPONSE, response)) {
    out.seg('end', response, response + TOOL_RESPONSE.length);
    return response + TOOL_RESPONSE.length;
  }
  return end;
}
