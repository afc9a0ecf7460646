/**
 * A tool call written in a dialect Tokenscope has no grammar for. The marker rules see the markup of every known
 * family and special-token-shaped text (unknown-markup.ts); a plain XML-ish, bracketed, fenced or ReAct call carries
 * neither, and without this rule the turn would pass as clean while the agent received its call as text.
 *
 * It reports, in content and reasoning (what no parser turned into calls), a call-shaped structure inside a wrapper:
 * - a tag around a JSON call (`<function_call>{"name": …, "arguments": …}</function_call>`, `<tool>{"tool_name": …,
 *   "tool_input": …}</tool>`), around `NAME{…}` / `NAME(…)` when the tag is call-like (`<call>get_weather{…}</call>`),
 *   a call-like element with a `name` attribute and parameter children (`<tool name="x"><arg name="a">1</arg></tool>`),
 *   or an element named after an offered tool (`<get_weather><city>Paris</city></get_weather>`);
 * - a bracket token around a JSON call (`[TOOL_REQUEST]{…}[END_TOOL_REQUEST]`), or a call-list word before one
 *   (`functools[{…}]`, `tool_calls: [{…}]`);
 * - a fenced block holding a JSON call (```` ```json ````, ```` ```tool_code ````);
 * - ReAct lines (`Action: get_weather` then `Action Input: {…}`);
 * - a JSON call that is the whole content (or reasoning) and nothing else: a model that left out its markers.
 *
 * A call is call-shaped when its name is one of the request's tools (when the request is known), or, without a
 * request, when it is JSON with a name key and an object of arguments (`arguments`, `parameters`, `input`…) and no
 * other data keys. Prose, code in a fenced block of a programming or markup language, inline code, tool definitions
 * (arguments that are a JSON Schema), and JSON data with other keys are never reported. A structure a marker rule
 * already reports (any family's markers, special-token-shaped markup) is left to that rule, and a call the turn
 * delivered as a structured call as well is no loss.
 */
import type { Finding, Segment } from '../model';
import { jsonMembers, jsonValueEnd, skipWs } from '../families/shared/text';
import { freeTextMarkers, leaks } from './scan';
import { unknownMarkup } from './unknown-markup';
import type { Check, CheckContext } from './types';

/** One call-shaped structure in free text. */
export interface DialectCall {
  region: 'content' | 'reasoning';
  start: number;
  end: number;
  /** What the structure looks like, for the message (`a <call> tag around NAME{…}`). */
  shape: string;
  /** The names of the calls it holds. */
  names: string[];
  /** The arguments of each call as canonical JSON, when they are JSON (to tell an echo of a delivered call). */
  args: (string | undefined)[];
  /** The structure runs to the end of its segment without its closing part. */
  cut: boolean;
}

const NAME_KEYS = new Set([
  'name',
  'tool_name',
  'toolName',
  'tool',
  'function',
  'function_name',
  'functionName',
  'action',
  'recipient_name',
  'api_name',
]);
const ARG_KEYS = new Set([
  'arguments',
  'parameters',
  'args',
  'input',
  'tool_input',
  'toolInput',
  'action_input',
  'actionInput',
  'params',
  'kwargs',
  'argument',
  'tool_args',
  'tool_arguments',
]);
/** Keys a call object may carry besides its name and arguments. */
const EXTRA_KEYS = new Set(['id', 'type', 'call_id', 'tool_call_id', 'index']);
const CALL_TYPES = new Set(['function', 'tool_use', 'tool_call', 'function_call', 'tool']);
/** Keys of an object that only wraps a list of calls (`{"tool_calls": […]}`). */
const WRAP_KEYS = new Set(['tool_calls', 'tool_call', 'function_call', 'function_calls', 'calls', 'tool_uses']);
const TOOL_NAME = /^[A-Za-z_][\w.:/-]{0,80}$/;

/** Fence languages that hold calls, not the user's code (`` ``` `` with no language, ```` ```json ````, ```` ```tool_code ````). */
const CALL_FENCES = new Set([
  '',
  'json',
  'json5',
  'jsonc',
  'tool_call',
  'tool_calls',
  'tool_code',
  'tool',
  'tools',
  'function_call',
  'function_calls',
  'call',
  'calls',
  'action',
]);
/** Of those, the ones that say they hold a call (a `NAME(…)` body counts there). */
const CALL_LABELLED = /^(?:tool|function|call|action)/;

/** Words of a tag's name that make it call-like (`<call>`, `<tool_use>`, `<functionCall>`, `<fn:invoke>`). */
const CALL_WORDS = new Set([
  'call',
  'calls',
  'tool',
  'tools',
  'invoke',
  'function',
  'functions',
  'func',
  'fn',
  'action',
  'toolcall',
  'toolcalls',
  'functioncall',
  'functioncalls',
]);
/** HTML elements that show code: a call written inside one is an example. */
const CODE_TAGS = new Set(['code', 'pre', 'samp', 'kbd', 'tt', 'script', 'style', 'textarea', 'template', 'xmp', 'listing', 'plaintext']);
/** Call-list words before a JSON call or list of calls (`functools[`, `tool_calls: [`, `TOOL_CALL {`). */
const LIST_WORD = /(?<![\w"'`$.-])(?:functools|tool_?calls?|function_?calls?|calls|tool_?code|functions)(?![\w-])[ \t]*:?[ \t]*(?=[[{])/gi;

/**
 * Characters the scan of one segment may still read in JSON values, parenthesised arguments, element bodies and
 * closer searches. Ordinary text never comes near it (eight times the segment, plus a million); text built to make
 * every opener scan to its end (`<call>{` 30,000 times) stops being scanned when it is spent, instead of taking
 * quadratic time.
 */
let work = 0;

/** Counts [from, to) against the budget; false once it is spent. */
function spend(from: number, to: number): boolean {
  work -= Math.max(1, to - from);
  return work >= 0;
}

/** Fixed ranges (they may overlap), for overlap queries in logarithmic time. */
class RangeIndex {
  private readonly starts: number[];
  private readonly maxEnds: number[];
  constructor(ranges: readonly (readonly [number, number])[]) {
    const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
    this.starts = sorted.map((r) => r[0]);
    let max = -Infinity;
    this.maxEnds = sorted.map((r) => (max = Math.max(max, r[1])));
  }
  /** Whether some range overlaps [s, e) (a point when e = s + 1). */
  overlaps(s: number, e: number): boolean {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid] < e) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 && this.maxEnds[lo - 1] > s;
  }
}

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

const callLike = new Map<string, boolean>();

function callLikeTag(tag: string): boolean {
  let yes = callLike.get(tag);
  if (yes === undefined) {
    const w = words(tag);
    yes = w.some((x) => CALL_WORDS.has(x)) || CALL_WORDS.has(w.join(''));
    // Tag names repeat (an HTML answer's <div>s): each is split into words once.
    if (callLike.size > 4096) callLike.clear();
    callLike.set(tag, yes);
  }
  return yes;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What an arguments value holds: an object (canonical JSON), a string, or nothing usable. */
function argumentsOf(v: unknown): { json?: string; text?: string } | undefined {
  if (isObject(v)) {
    // A JSON Schema is a tool's definition, not a call's arguments.
    if (v.type === 'object' && isObject(v.properties)) return undefined;
    return { json: JSON.stringify(v) };
  }
  if (typeof v === 'string') {
    try {
      const o: unknown = JSON.parse(v);
      if (isObject(o)) return argumentsOf(o);
    } catch {
      // a plain string: the input of a one-argument tool
    }
    return { text: v };
  }
  return undefined;
}

interface Calls {
  names: string[];
  args: (string | undefined)[];
}

/** The calls a parsed JSON value is, or undefined when it is anything else (data, a definition, a list of other things). */
function jsonCalls(v: unknown, tools: Set<string> | undefined, depth = 0): Calls | undefined {
  if (depth > 3) return undefined;
  if (Array.isArray(v)) {
    if (v.length === 0 || v.length > 64) return undefined;
    const out: Calls = { names: [], args: [] };
    for (const x of v) {
      const c = jsonCalls(x, tools, depth + 1);
      if (!c) return undefined;
      out.names.push(...c.names);
      out.args.push(...c.args);
    }
    return out;
  }
  if (!isObject(v)) return undefined;
  const keys = Object.keys(v);
  const typeOk = v.type === undefined || (typeof v.type === 'string' && CALL_TYPES.has(v.type));
  if (!typeOk) return undefined;
  const wrap = keys.filter((k) => WRAP_KEYS.has(k));
  if (wrap.length === 1 && keys.every((k) => k === wrap[0] || EXTRA_KEYS.has(k))) return jsonCalls(v[wrap[0]], tools, depth + 1);
  // `{"type": "function", "function": {"name": …, "arguments": …}}`
  if (isObject(v.function) && keys.every((k) => k === 'function' || EXTRA_KEYS.has(k))) return jsonCalls(v.function, tools, depth + 1);
  const nameKeys = keys.filter((k) => NAME_KEYS.has(k));
  const argKeys = keys.filter((k) => ARG_KEYS.has(k));
  if (nameKeys.length !== 1 || argKeys.length > 1) return undefined;
  if (!keys.every((k) => NAME_KEYS.has(k) || ARG_KEYS.has(k) || EXTRA_KEYS.has(k))) return undefined;
  const name = v[nameKeys[0]];
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) return undefined;
  if (tools && !tools.has(name)) return undefined;
  if (argKeys.length === 0) return tools ? { names: [name], args: ['{}'] } : undefined;
  const args = argumentsOf(v[argKeys[0]]);
  if (!args) return undefined;
  // Without the request's tools, only an object of arguments makes it a call; a string input is too weak a sign.
  if (args.json === undefined && !tools) return undefined;
  return { names: [name], args: [args.json] };
}

/**
 * The call a JSON value cut short holds (a call that was still being written when the turn ended): an object whose
 * name is complete and whose arguments key arrived, every key a call's.
 */
function cutJsonCall(text: string, pos: number, to: number, tools: Set<string> | undefined): Calls | undefined {
  let i = skipWs(text, pos, to);
  if (text[i] === '[') i = skipWs(text, i + 1, to);
  const members = jsonMembers(text, i, to);
  if (!members || members.length === 0) return undefined;
  const keys = members.map((m) => m.key ?? '');
  if (!keys.every((k) => NAME_KEYS.has(k) || ARG_KEYS.has(k) || EXTRA_KEYS.has(k))) return undefined;
  const nameMember = members.find((m) => m.key !== undefined && NAME_KEYS.has(m.key) && m.complete);
  if (!nameMember || !members.some((m) => m.key !== undefined && ARG_KEYS.has(m.key))) return undefined;
  let name: unknown;
  try {
    name = JSON.parse(text.slice(nameMember.valueRange[0], nameMember.valueRange[1]));
  } catch {
    return undefined;
  }
  if (typeof name !== 'string' || !TOOL_NAME.test(name) || (tools && !tools.has(name))) return undefined;
  return { names: [name], args: [undefined] };
}

/** A JSON call at `pos`: its end (exclusive, or `to` when cut short), the calls, and whether it was cut short. */
function jsonCallAt(
  text: string,
  pos: number,
  to: number,
  tools: Set<string> | undefined,
): { end: number; calls: Calls; cut: boolean } | undefined {
  const i = skipWs(text, pos, to);
  if ((text[i] !== '{' && text[i] !== '[') || work <= 0) return undefined;
  const end = jsonValueEnd(text, i, to);
  if (!spend(i, end < 0 ? to : end)) return undefined;
  if (end < 0) {
    // Cut short: only when nothing but the call's own text follows, up to the end of the segment.
    if (!spend(i, to)) return undefined;
    const calls = cutJsonCall(text, i, to, tools);
    return calls ? { end: to, calls, cut: true } : undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text.slice(i, end));
  } catch {
    return undefined;
  }
  const calls = jsonCalls(value, tools);
  return calls ? { end, calls, cut: false } : undefined;
}

/** End of the balanced `(…)` at `pos` (strings in either quote skipped), or -1. */
function parenEnd(text: string, pos: number, to: number): number {
  let depth = 0;
  for (let i = pos; i < to; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < to && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      if (j >= to) return -1;
      i = j;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * `NAME{…}`, `NAME: {…}`, `NAME\n{…}` or `NAME(…)` at `pos`. A namespaced name (`default_api.get_weather`, `functions.read`)
 * is the tool its last part names, and `print(NAME(…))` (Gemma's tool_code) is the call inside.
 */
function namedCallAt(
  text: string,
  pos: number,
  to: number,
  tools: Set<string> | undefined,
): { end: number; calls: Calls; paren: boolean } | undefined {
  const i = skipWs(text, pos, to);
  const printed = /print[ \t]*\(/y;
  printed.lastIndex = i;
  if (printed.test(text) && printed.lastIndex < to) {
    const inner = namedCallAt(text, printed.lastIndex, to, tools);
    const close = inner?.paren ? skipWs(text, inner.end, to) : -1;
    if (inner && close < to && text[close] === ')') return { ...inner, end: close + 1 };
  }
  const m = /[A-Za-z_][\w.-]{0,80}/y;
  m.lastIndex = i;
  const hit = m.exec(text);
  if (!hit || hit.index + hit[0].length > to) return undefined;
  const written = hit[0];
  const short = written.slice(written.lastIndexOf('.') + 1);
  const name = !tools ? written : tools.has(written) ? written : tools.has(short) ? short : undefined;
  if (name === undefined) return undefined;
  let j = i + written.length;
  while (j < to && (text[j] === ' ' || text[j] === '\t')) j++;
  if (text[j] === ':') j++;
  j = skipWs(text, j, to);
  if (work <= 0) return undefined;
  if (text[j] === '(') {
    const e = parenEnd(text, j, to);
    if (!spend(j, e < 0 ? to : e)) return undefined;
    return e < 0 ? undefined : { end: e, calls: { names: [name], args: [undefined] }, paren: true };
  }
  if (text[j] !== '{') return undefined;
  const e = jsonValueEnd(text, j, to);
  if (!spend(j, e < 0 ? to : e) || e < 0) return undefined;
  try {
    const v: unknown = JSON.parse(text.slice(j, e));
    if (!isObject(v)) return undefined;
    return { end: e, calls: { names: [name], args: [JSON.stringify(v)] }, paren: false };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Where not to look: the user's code

interface Block {
  start: number;
  end: number;
  /** The fence's language, lower-case (`` for none). */
  lang: string;
  bodyStart: number;
  bodyEnd: number;
}

/** The fenced blocks of a segment (an unclosed one runs to the end), and the inline code spans outside them. */
function codeRegions(text: string, from: number, to: number): { fences: Block[]; inline: [number, number][] } {
  const fences: Block[] = [];
  const open = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\n`]*?)[ \t]*$/gm;
  open.lastIndex = from;
  for (let m = open.exec(text); m && m.index < to; m = open.exec(text)) {
    const fence = m[1];
    const lang = (m[2].split(/[\s{]/)[0] ?? '').toLowerCase();
    const bodyStart = Math.min(to, m.index + m[0].length + 1);
    const close = new RegExp(`^[ \\t]{0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`, 'gm');
    close.lastIndex = bodyStart;
    const c = close.exec(text);
    const closed = c !== null && c.index < to;
    const bodyEnd = closed ? c.index : to;
    const end = closed ? Math.min(to, c.index + c[0].length) : to;
    fences.push({ start: m.index, end, lang, bodyStart, bodyEnd });
    open.lastIndex = Math.max(end, m.index + 1);
  }
  const inline: [number, number][] = [];
  const span = /`[^`\n]+`/g;
  span.lastIndex = from;
  // Spans and fences both come in text order: one pointer walks the fences.
  let f = 0;
  for (let m = span.exec(text); m && m.index < to; m = span.exec(text)) {
    if (m.index + m[0].length > to) break;
    while (f < fences.length && fences[f].end <= m.index) f++;
    if (f < fences.length && fences[f].start <= m.index) {
      span.lastIndex = Math.max(span.lastIndex, fences[f].end);
      continue;
    }
    inline.push([m.index, m.index + m[0].length]);
  }
  return { fences, inline };
}

// ---------------------------------------------------------------------------------------------------------------
// The scan

const cache = new WeakMap<CheckContext, DialectCall[]>();

/** Every call-shaped structure in the turn's free text that no marker rule reports and no structured call repeats. */
export function dialectCalls(ctx: CheckContext): DialectCall[] {
  let out = cache.get(ctx);
  if (out) return out;
  out = [];
  const tools = ctx.request ? new Set(ctx.request.tools.map((t) => t.name)) : undefined;
  // A request that offered no tools: no call can have been lost.
  if (!tools || tools.size > 0) {
    const ranges: [number, number][] = [];
    // Tool-call markers of any family are the leak rules' (a family's other markers, `<think>`, `<response>`, are not).
    for (const { hits } of freeTextMarkers(ctx)) for (const h of hits) if (h.tool) ranges.push([h.start, h.end]);
    for (const l of leaks(ctx)) ranges.push([l.start, l.end]);
    for (const u of unknownMarkup(ctx)) ranges.push([u.start, u.end]);
    const reported = new RangeIndex(ranges);
    for (const segment of ctx.native.segments) {
      if (segment.kind !== 'content' && segment.kind !== 'reasoning') continue;
      for (const c of scanSegment(ctx.native.text, segment, tools)) {
        if (reported.overlaps(c.start, c.end)) continue;
        if (delivered(ctx, c)) continue;
        out.push(c);
      }
    }
  }
  cache.set(ctx, out);
  return out;
}

/** The turn also delivered these calls as structured calls (a model that echoes its call in its text). */
function delivered(ctx: CheckContext, c: DialectCall): boolean {
  const calls = ctx.message.toolCalls;
  if (calls.length === 0) return false;
  return c.names.every((name, i) =>
    calls.some((d) => {
      if (d.name !== name) return false;
      const a = c.args[i];
      if (a === undefined) return true;
      try {
        return JSON.stringify(JSON.parse(d.arguments || '{}')) === a;
      } catch {
        return false;
      }
    }),
  );
}

function scanSegment(text: string, segment: Segment, tools: Set<string> | undefined): DialectCall[] {
  const from = segment.start;
  const to = segment.end;
  const region = segment.kind as DialectCall['region'];
  work = 8 * (to - from) + 1_000_000;
  // Found structures, sorted and never overlapping.
  const found: DialectCall[] = [];
  const { fences, inline } = codeRegions(text, from, to);
  const code = new RangeIndex([...fences.map((f) => [f.start, f.end] as const), ...inline]);
  const inCode = (p: number): boolean => code.overlaps(p, p + 1);
  /** Index of the first found structure that ends after `s`. */
  const after = (s: number): number => {
    let lo = 0;
    let hi = found.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (found[mid].end <= s) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const taken = (s: number, e: number): boolean => {
    const i = after(s);
    return i < found.length && found[i].start < e;
  };
  const add = (start: number, end: number, shape: string, calls: Calls, cut: boolean): void => {
    if (!taken(start, end)) found.splice(after(start), 0, { region, start, end, shape, names: calls.names, args: calls.args, cut });
  };
  // Where each closing tag next occurs: one forward search per closer, not one per opener.
  const closers = new Map<string, { from: number; at: number }>();
  const nextCloser = (closer: string, pos: number): number => {
    const known = closers.get(closer);
    if (known && known.from <= pos && (known.at < 0 || known.at >= pos)) return known.at;
    const hit = text.indexOf(closer, pos);
    const at = hit >= 0 && hit + closer.length <= to ? hit : -1;
    spend(pos, at < 0 ? to : at);
    closers.set(closer, { from: pos, at });
    return at;
  };

  // The whole segment is one JSON call (or a list of calls) and nothing else: its bounds are the wrapper (a model that
  // left out its dialect's tags).
  const first = skipWs(text, from, to);
  if (text[first] === '{' || text[first] === '[') {
    const json = jsonCallAt(text, first, to, tools);
    if (json && skipWs(text, json.end, to) >= to)
      add(first, json.end, `the whole ${region} is a JSON call, with none of the dialect's markers`, json.calls, json.cut);
  }

  // Fenced blocks that hold a call. A JSON call only where the model ended its turn on it (or on more such calls): an
  // example in an explanation is followed by more explanation. Read from the last block back, so a block knows
  // whether the one after it is a call.
  let nextCall = to;
  for (const f of [...fences].reverse()) {
    if (!CALL_FENCES.has(f.lang)) continue;
    const label = f.lang ? `a \`\`\`${f.lang} block` : 'a fenced block';
    const last = skipWs(text, f.end, to) >= nextCall;
    const json = jsonCallAt(text, f.bodyStart, f.bodyEnd, tools);
    if (json && !json.cut && skipWs(text, json.end, f.bodyEnd) >= f.bodyEnd) {
      if (last || CALL_LABELLED.test(f.lang)) {
        add(f.start, f.end, `${label} holding a JSON call`, json.calls, f.bodyEnd === to);
        nextCall = f.start;
      }
      continue;
    }
    if (CALL_LABELLED.test(f.lang)) {
      const named = namedCallAt(text, f.bodyStart, f.bodyEnd, tools);
      if (named && skipWs(text, named.end, f.bodyEnd) >= f.bodyEnd) {
        add(f.start, f.end, `${label} holding ${named.calls.names[0]}${named.paren ? '(…)' : '{…}'}`, named.calls, f.bodyEnd === to);
        nextCall = f.start;
      }
    }
  }

  // Tags.
  const tag = /<([A-Za-z_][\w.:-]{0,63})((?:\s[^<>]{0,400}?)?)(\/?)>/g;
  tag.lastIndex = from;
  for (let m = tag.exec(text); m && m.index < to && work > 0; m = tag.exec(text)) {
    const start = m.index;
    const openEnd = start + m[0].length;
    if (openEnd > to) break;
    if (inCode(start) || taken(start, openEnd)) continue;
    const hit = judgeTag(text, m[1], m[2], m[3] === '/', openEnd, to, tools, nextCloser);
    if (hit) {
      add(start, hit.end, hit.shape, hit.calls, hit.cut);
      tag.lastIndex = hit.end;
    }
  }

  // Bracket tokens before JSON calls.
  const bracket = /\[([A-Za-z_][\w-]{0,40})\]/g;
  bracket.lastIndex = from;
  for (let m = bracket.exec(text); m && m.index < to && work > 0; m = bracket.exec(text)) {
    const start = m.index;
    const after = start + m[0].length;
    if (inCode(start) || taken(start, after)) continue;
    const json = jsonCallAt(text, after, to, tools);
    if (json) {
      const close = closerAfter(text, m[1], json.end, to);
      const end = close ?? json.end;
      add(
        start,
        end,
        close !== undefined
          ? `[${m[1]}] … ${text.slice(skipWs(text, json.end, to), end)} around a JSON call`
          : `a [${m[1]}] token before a JSON call`,
        json.calls,
        json.cut,
      );
      bracket.lastIndex = Math.max(bracket.lastIndex, end);
      continue;
    }
    if (callLikeTag(m[1])) {
      const named = namedCallAt(text, after, to, tools);
      if (named && !named.paren) {
        const close = closerAfter(text, m[1], named.end, to);
        const end = close ?? named.end;
        add(start, end, `a [${m[1]}] token before ${named.calls.names[0]}{…}`, named.calls, false);
        bracket.lastIndex = Math.max(bracket.lastIndex, end);
      }
    }
  }

  // Call-list words before JSON calls.
  const list = new RegExp(LIST_WORD.source, 'gi');
  list.lastIndex = from;
  for (let m = list.exec(text); m && m.index < to && work > 0; m = list.exec(text)) {
    const start = m.index;
    const after = start + m[0].length;
    if (inCode(start) || taken(start, after)) continue;
    const json = jsonCallAt(text, after, to, tools);
    if (!json) continue;
    const word = m[0].replace(/[\s:]+$/, '');
    const open = text[after];
    add(start, json.end, `${word}${open}…${open === '[' ? ']' : '}'} holding JSON calls`, json.calls, json.cut);
    list.lastIndex = Math.max(list.lastIndex, json.end);
  }

  // ReAct: `Action: NAME` then `Action Input: …`.
  const react =
    /^[ \t]*(?:\*\*)?Action(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?`?([A-Za-z_][\w.-]{0,80})`?(?:\*\*)?[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*(?:\*\*)?Action[ \t]+Input(?:\*\*)?[ \t]*:[ \t]*/gm;
  react.lastIndex = from;
  for (let m = react.exec(text); m && m.index < to && work > 0; m = react.exec(text)) {
    const start = m.index + (m[0].length - m[0].trimStart().length);
    const inputStart = m.index + m[0].length;
    if (inputStart > to || inCode(start) || taken(start, inputStart)) continue;
    const name = m[1];
    if (tools && !tools.has(name)) continue;
    let end: number;
    let args: string | undefined;
    const json = text[inputStart] === '{' ? jsonValueEnd(text, inputStart, to) : -1;
    spend(inputStart, json < 0 ? inputStart : json);
    if (json > 0) {
      end = json;
      try {
        const v: unknown = JSON.parse(text.slice(inputStart, json));
        args = isObject(v) ? JSON.stringify(v) : undefined;
      } catch {
        args = undefined;
      }
    } else {
      // The input runs to a blank line, an `Observation:` line, or the end of the segment.
      const stop = /\r?\n[ \t]*\r?\n|\r?\n[ \t]*Observation[ \t]*:/g;
      stop.lastIndex = inputStart;
      const s = stop.exec(text);
      end = s && s.index < to ? s.index : to;
    }
    add(start, end, 'ReAct `Action:` / `Action Input:` lines', { names: [name], args: [args] }, false);
    react.lastIndex = Math.max(react.lastIndex, end);
  }

  // A call-like wrapper right around one found structure belongs to it (`<function_calls><invoke …>…</invoke></function_calls>`).
  found.forEach((c, i) => {
    const before = /<([A-Za-z_][\w.:-]{0,63})>\s*$/.exec(text.slice(Math.max(from, c.start - 80), c.start));
    if (!before || !callLikeTag(before[1])) return;
    const closeAt = skipWs(text, c.end, to);
    const closer = `</${before[1]}>`;
    if (!text.startsWith(closer, closeAt) || closeAt + closer.length > to) return;
    const start = c.start - before[0].length;
    const end = closeAt + closer.length;
    // Only when the wrapper holds this one structure (the neighbours, in text order, stay outside it).
    if ((i > 0 && found[i - 1].end > start) || (i + 1 < found.length && found[i + 1].start < end)) return;
    c.start = start;
    c.end = end;
    c.shape = `<${before[1]}> around ${c.shape}`;
  });
  return found;
}

/** The end of the closing token of `[WORD]` at `pos` (after blanks): `[/WORD]`, `[END_WORD]`, `[WORD_END]`, `[END]`. */
function closerAfter(text: string, word: string, pos: number, to: number): number | undefined {
  const i = skipWs(text, pos, to);
  for (const c of [`[/${word}]`, `[END_${word}]`, `[${word}_END]`, `[END]`, `[/END]`]) {
    if (text.startsWith(c, i) && i + c.length <= to) return i + c.length;
  }
  return undefined;
}

/** The end of `</TAG>` at `pos` after blanks, or -1. */
function closeTag(text: string, name: string, pos: number, to: number): number {
  const i = skipWs(text, pos, to);
  const c = `</${name}>`;
  return text.startsWith(c, i) && i + c.length <= to ? i + c.length : -1;
}

const PARAM_CHILD = /<(?:parameter|param|arg|argument)\b[\s=>]/;

/** Whether the tag opened at `openEnd` wraps a call, and where the structure ends. */
function judgeTag(
  text: string,
  name: string,
  attrs: string,
  selfClosing: boolean,
  openEnd: number,
  to: number,
  tools: Set<string> | undefined,
  nextCloser: (closer: string, pos: number) => number,
): { end: number; shape: string; calls: Calls; cut: boolean } | undefined {
  if (CODE_TAGS.has(name.toLowerCase())) return undefined;
  const callLike = callLikeTag(name);
  const open = `<${name}${attrs ? ' …' : ''}>`;
  if (!selfClosing) {
    // A JSON call between the tags, or from the tag to the end of the turn.
    const json = jsonCallAt(text, openEnd, to, tools);
    if (json) {
      const close = json.cut ? -1 : closeTag(text, name, json.end, to);
      if (close > 0) return { end: close, shape: `a ${open} tag around a JSON call`, calls: json.calls, cut: false };
      if (json.cut || skipWs(text, json.end, to) >= to)
        return { end: json.end, shape: `a ${open} tag before a JSON call, never closed`, calls: json.calls, cut: true };
      return undefined;
    }
    // `<call>get_weather{"city": "Paris"}</call>`, `<tool_call>get_weather(city="Paris")</tool_call>`
    if (callLike) {
      const named = namedCallAt(text, openEnd, to, tools);
      if (named) {
        const close = closeTag(text, name, named.end, to);
        const shown = `${named.calls.names[0]}${named.paren ? '(…)' : '{…}'}`;
        if (close > 0) return { end: close, shape: `a ${open} tag around ${shown}`, calls: named.calls, cut: false };
        if (skipWs(text, named.end, to) >= to)
          return { end: named.end, shape: `a ${open} tag before ${shown}, never closed`, calls: named.calls, cut: true };
      }
    }
  }
  // `<tool name="get_weather"><param name="city">Paris</param></tool>`: a call-like element named by an attribute.
  const attr = /(?:^|\s)(?:name|tool|tool_name|function)\s*=\s*(?:"([^"]{1,81})"|'([^']{1,81})')/.exec(attrs);
  const named = attr ? (attr[1] ?? attr[2]) : undefined;
  // (`<action name=…>` is also a web framework's mapping: an action is no call-like element here.)
  const byAttr =
    named !== undefined &&
    callLike &&
    words(name).some((w) => w !== 'action' && CALL_WORDS.has(w)) &&
    TOOL_NAME.test(named) &&
    (!tools || tools.has(named));
  // `<get_weather><city>Paris</city></get_weather>`: an element named after an offered tool.
  const byTool = tools?.has(name) === true && !attrs.trim();
  if (!byAttr && !byTool) return undefined;
  const toolName = byAttr ? named! : name;
  if (selfClosing)
    return tools?.has(toolName)
      ? { end: openEnd, shape: `an empty <${name} …/> element`, calls: { names: [toolName], args: ['{}'] }, cut: false }
      : undefined;
  const closer = `</${name}>`;
  // A call's body is bounded: a closer far away is no longer this element's.
  const limit = Math.min(to, openEnd + 200_000);
  const at = nextCloser(closer, openEnd);
  const closed = at >= 0 && at + closer.length <= limit;
  const bodyEnd = closed ? at : to;
  if ((!closed && limit < to) || !spend(openEnd, bodyEnd)) return undefined;
  const body = text.slice(openEnd, bodyEnd);
  const trimmed = body.trim();
  let ok: boolean;
  if (byAttr) ok = PARAM_CHILD.test(body) || (tools !== undefined && (trimmed === '' || trimmed.startsWith('{')));
  else ok = trimmed === '' || trimmed.startsWith('{') || /^<([A-Za-z_][\w.-]*)>[\s\S]*<\/\1>$/.test(trimmed);
  if (!ok) return undefined;
  const shape = byAttr ? `a <${name} ${attr![0].trim()}> element with its parameters` : `a <${name}> element named after the tool`;
  return { end: closed ? at + closer.length : to, shape, calls: { names: [toolName], args: [undefined] }, cut: !closed };
}

// ---------------------------------------------------------------------------------------------------------------

const check: Check = {
  id: 'unknown-dialect-call',
  severity: 'warning',
  title: 'Tool call in a dialect with no grammar',
  why: 'The model wrote a tool call in a dialect no parser of its family reads: no server turns it into a structured call, so the agent shows it as text and the call never runs.',
  run: (ctx) =>
    dialectCalls(ctx).map((c): Finding => {
      const names = [...new Set(c.names)].map((n) => (n.length > 64 ? `${n.slice(0, 63)}…` : n));
      const calling = `calling ${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`;
      const parser = `a parser for ${ctx.format ? ctx.format.displayName : 'this model'}`;
      const hint = ctx.format
        ? ` If this model does not write ${ctx.format.displayName} markup, name its family (--family).`
        : ' Name the model (--model) or the family (--family) if it is one Tokenscope knows.';
      return {
        rule: check.id,
        severity: check.severity,
        message:
          `This looks like a tool call in a dialect Tokenscope has no grammar for (${c.shape}, ${calling})` +
          `${c.cut ? ', cut off at the end of the turn' : ''}; ${parser} would not deliver it as a call, so the agent receives it as ${c.region} text.${hint}`,
        location: c.region,
        start: c.start,
        end: c.end,
      };
    }),
};

export default check;
