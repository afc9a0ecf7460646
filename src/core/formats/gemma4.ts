/**
 * Gemma 4 ('gemma4'):
 *
 *   <|channel>thought\nREASONING\n<channel|>CONTENT<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1,o:{k:[1,2]}}<tool_call|><turn|>
 *
 * Bare keys, `<|"|>` as the string delimiter (no escapes inside), JSON scalars, `{…}` objects and `[…]` lists
 * (ai-dynamo/frontend-crates `parsers/v2/README.md`, "Parser families"; conformance fixtures `inputs/gemma4`). Arguments
 * come back as canonical compact JSON, typed by the grammar; an argument body that is not this syntax is kept raw and
 * flagged. A call cut off keeps the text that arrived as its arguments.
 */
import type { AssistantMessage, NativeText } from '../model';
import { callUnclosed, modelKey, parseTurn, renderStart, scoreText, skipWs, trimRange, truncatedAt, type MarkerHit, type ParseOut, type TurnGrammar } from './base';
import type { ModelFormat, RenderOptions } from './types';

const CALL_OPEN = '<|tool_call>';
const CALL_CLOSE = '<tool_call|>';
const Q = '<|"|>';
const PREFIX = 'call:';
const THINK = { open: '<|channel>thought', close: '<channel|>' };
const END = '<turn|>';

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, '<|tool_response>', '<tool_response|>'];
const MARKERS = [CALL_CLOSE, THINK.close, END, CALL_OPEN, THINK.open, '<|turn>', '<|tool_response>', '<tool_response|>', Q];

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

/** JSON arguments in Gemma's syntax; text that is not a JSON object is written as it is. */
function gemmaArgs(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) return gemmaValue(v);
  } catch {
    // Not JSON: raw.
  }
  return args;
}

function gemmaValue(v: unknown): string {
  if (typeof v === 'string') return `${Q}${v}${Q}`;
  if (Array.isArray(v)) return `[${v.map(gemmaValue).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${k}:${gemmaValue(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

/** A value read from `pos`: `end` is where it stops; `complete` false when the text ran out first; `bad` when off-grammar. */
interface Read {
  value?: unknown;
  end: number;
  complete: boolean;
  bad?: boolean;
}

const KEY = /[A-Za-z0-9_.$-]/;

/** Gemma's value syntax in [pos, to): iterative over nesting depth by recursion kept shallow by real payloads. */
function readValue(text: string, pos: number, to: number, depth = 0): Read {
  const i = skipWs(text, pos, to);
  if (i >= to) return { end: to, complete: false };
  if (depth > 64) return { end: i, complete: true, bad: true };
  if (text.startsWith(Q, i)) {
    const close = text.indexOf(Q, i + Q.length);
    if (close < 0 || close + Q.length > to) return { end: to, complete: false };
    return { value: text.slice(i + Q.length, close), end: close + Q.length, complete: true };
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
      let key = '';
      if (obj) {
        const ks = p;
        while (p < to && KEY.test(text[p])) p++;
        key = text.slice(ks, p);
        if (p >= to) return { end: to, complete: false };
        if (!key || text[p] !== ':') return { end: p, complete: true, bad: true };
        p++;
      }
      const v = readValue(text, p, to, depth + 1);
      if (!v.complete || v.bad) return v;
      if (obj) (result as Record<string, unknown>)[key] = v.value;
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
    return { value: raw, end: e, complete: true, bad: !raw };
  }
}

/** One `<|tool_call>call:NAME{…}<tool_call|>` from `start`. The arguments are read first, so markers inside strings stay text. */
function call(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const index = out.calls.length;
  const stop = out.find([CALL_CLOSE, CALL_OPEN, END], hit.end);
  const to = stop ? stop.start : text.length;
  let pos = skipWs(text, hit.end, to);
  const defects: string[] = [];
  if (text.startsWith(PREFIX, pos)) pos += PREFIX.length;
  else if (!(to === text.length && PREFIX.startsWith(text.slice(pos, to).trim()))) defects.push(`no ${PREFIX} before the name`);
  const brace = text.indexOf('{', pos);
  const hasBody = brace >= 0 && brace < to;
  const nameRange = trimRange(text, pos, hasBody ? brace : to);
  let args = '';
  let argRange: [number, number] | undefined;
  let end: number;
  let closed = false;
  let expectedAt: number;
  const read = hasBody ? readValue(text, brace, text.length) : undefined;
  if (read && read.complete && !read.bad) {
    args = JSON.stringify(read.value);
    argRange = [brace, read.end];
    const after = skipWs(text, read.end);
    expectedAt = read.end;
    if (text.startsWith(CALL_CLOSE, after)) {
      closed = true;
      end = after + CALL_CLOSE.length;
    } else {
      const cut = truncatedAt(text, after, [CALL_CLOSE]);
      if (cut) out.problem('marker-truncated', `${CALL_CLOSE} is cut short`, cut.start, cut.end, { marker: CALL_CLOSE, callIndex: index });
      end = cut ? cut.end : read.end;
      if (!cut && after < text.length) {
        // Something else follows the arguments: the call ends at the next marker, flagged.
        defects.push(`no ${CALL_CLOSE} after the arguments`);
        closed = stop?.marker === CALL_CLOSE;
        end = closed ? stop!.end : read.end;
      }
    }
  } else if (read && !read.complete) {
    // Cut off inside the arguments: what arrived, as written.
    argRange = trimRange(text, brace, text.length);
    args = text.slice(...argRange);
    end = argRange[1];
    expectedAt = end;
  } else {
    // No argument body, or one that is not Gemma's syntax: the text up to the next marker, raw.
    closed = stop?.marker === CALL_CLOSE;
    const body = hasBody ? trimRange(text, brace, to) : undefined;
    if (body && body[1] > body[0]) {
      argRange = body;
      args = text.slice(...body);
      if (closed) defects.push('the arguments are not {key:value,…}');
    } else if (closed) args = '{}';
    end = closed ? stop!.end : trimRange(text, hit.end, to)[1];
    expectedAt = end;
  }
  end = Math.max(end, hit.end);
  out.addCall(text.slice(...nameRange), args);
  out.seg('call', start, end, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed) callUnclosed(out, index, start, end, CALL_CLOSE, Math.max(expectedAt, hit.end));
  else if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, end, { callIndex: index });
  return end;
}
