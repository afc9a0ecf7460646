/**
 * AI2 OLMo 3 ('olmo3'): pythonic calls, one per line, inside a `<function_calls>` element:
 *
 *   <think>REASONING</think>CONTENT<function_calls>get_weather(city="Paris")\nnow()</function_calls><|im_end|>
 *
 * Arguments are keyword arguments whose values are Python literals or JSON ones (`None`/`null`, `True`/`true`, strings
 * in either quote); they come back as canonical compact JSON. The chat template writes the values as JSON (Ollama's
 * renderer: `json.Marshal`), and so does render. OLMo 3 Think's prompt ends with `<think>`, so a completion may start
 * inside reasoning. Sources: vLLM `vllm/tool_parsers/olmo3_tool_parser.py` (`<function_calls>(.*?)</function_calls>`,
 * lines joined into a list and read with `ast`, `null`/`true`/`false` accepted), Ollama `model/parsers/olmo3.go`
 * (calls split by newline, read only once `</function_calls>` arrives) and `model/renderers/olmo3.go`.
 */
import { noParser, noParserInfo, type EngineVerdict, type FamilyVerdicts } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  callUnclosed,
  endsInMarker,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  truncatedAt,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { AssistantMessage, NativeText } from '../model';
import type { Family } from './types';

const OPEN = '<function_calls>';
const CLOSE = '</function_calls>';
const IM_END = '<|im_end|>';
const ENDOFTEXT = '<|endoftext|>';
const ENDS = [IM_END, ENDOFTEXT];

const TOOL_MARKERS = [OPEN, CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [CLOSE, IM_END, THINK_CLOSE, ENDOFTEXT, OPEN, '<|im_start|>', THINK_OPEN];

// ---------------------------------------------------------------------------------------------------------------
// Python / JSON literals

interface Read {
  value?: unknown;
  end: number;
  /** False when the text ran out inside the value. */
  complete: boolean;
  /** Not a literal this grammar reads. */
  bad?: boolean;
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '/': '/',
};
const WORDS: Record<string, unknown> = { True: true, true: true, False: false, false: false, None: null, null: null };
const SCALAR = /^(?:True|False|None|true|false|null|[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)/;

/** A quoted string at `i` (either quote; JSON and Python escapes). */
function readString(text: string, i: number, to: number): Read {
  const q = text[i];
  let s = '';
  for (let j = i + 1; j < to; j++) {
    const ch = text[j];
    if (ch === q) return { value: s, end: j + 1, complete: true };
    if (ch === '\n') return { end: j, complete: true, bad: true };
    if (ch !== '\\') {
      s += ch;
      continue;
    }
    const n = text[++j];
    if (n === undefined || j >= to) break;
    if (n === 'u' || n === 'x') {
      const len = n === 'u' ? 4 : 2;
      const hex = text.slice(j + 1, j + 1 + len);
      if (hex.length < len || j + len >= to) break;
      if (!/^[0-9a-fA-F]+$/.test(hex)) return { end: j, complete: true, bad: true };
      s += String.fromCharCode(parseInt(hex, 16));
      j += len;
    } else s += ESCAPES[n] ?? `\\${n}`;
  }
  return { end: to, complete: false };
}

/** A literal at `pos`: string, number, True/False/None (or true/false/null), list, tuple (as a list), dict. */
function readValue(text: string, pos: number, to: number, depth = 0): Read {
  const i = skipWs(text, pos, to);
  if (i >= to) return { end: i, complete: false };
  if (depth > 64) return { end: i, complete: true, bad: true };
  const c = text[i];
  if (c === '"' || c === "'") return readString(text, i, to);
  if (c === '[' || c === '(' || c === '{') {
    const closeCh = c === '{' ? '}' : c === '[' ? ']' : ')';
    const dict = c === '{';
    const result: unknown[] | Record<string, unknown> = dict ? {} : [];
    let p = skipWs(text, i + 1, to);
    for (;;) {
      if (p >= to) return { end: p, complete: false };
      if (text[p] === closeCh) return { value: result, end: p + 1, complete: true };
      let key: unknown;
      if (dict) {
        const k = readValue(text, p, to, depth + 1);
        if (!k.complete || k.bad) return k;
        p = skipWs(text, k.end, to);
        if (p >= to) return { end: p, complete: false };
        if (text[p] !== ':') return { end: p, complete: true, bad: true };
        key = k.value;
        p++;
      }
      const v = readValue(text, p, to, depth + 1);
      if (!v.complete || v.bad) return v;
      if (dict) (result as Record<string, unknown>)[String(key)] = v.value;
      else (result as unknown[]).push(v.value);
      p = skipWs(text, v.end, to);
      if (text[p] === ',') p = skipWs(text, p + 1, to);
      else if (p < to && text[p] !== closeCh) return { end: p, complete: true, bad: true };
    }
  }
  const m = SCALAR.exec(text.slice(i, Math.min(to, i + 64)));
  if (!m) return { end: i, complete: true, bad: true };
  const e = i + m[0].length;
  // A number or a word cut by the end of the text may be longer than what arrived.
  if (e >= to) return { end: e, complete: false };
  if (/[\w.]/.test(text[e])) return { end: e, complete: true, bad: true };
  const word = m[0];
  const value = word in WORDS ? WORDS[word] : Number(word.replace(/_/g, ''));
  if (typeof value === 'number' && !Number.isFinite(value)) return { end: e, complete: true, bad: true };
  return { value, end: e, complete: true };
}

// ---------------------------------------------------------------------------------------------------------------
// Calls

/** `NAME(k=v, …)` at `pos`, no further than `to`; undefined when no call starts there. */
function readCall(out: ParseOut, pos: number, to: number): { end: number; complete: boolean } | undefined {
  const { text } = out;
  const nm = /^[A-Za-z_][\w.]*/.exec(text.slice(pos, Math.min(to, pos + 256)));
  if (!nm) return undefined;
  const nameEnd = pos + nm[0].length;
  let p = skipWs(text, nameEnd, to);
  // Cut off right after the name.
  if (p >= to && to === text.length) return finish(nameEnd, undefined, '', false, nameEnd);
  if (text[p] !== '(') return undefined;
  const argStart = skipWs(text, p + 1, to);
  p = argStart;
  const args: Record<string, unknown> = {};
  let bad = false;
  for (;;) {
    p = skipWs(text, p, to);
    if (p >= to) break;
    if (text[p] === ')') return finish(p + 1, [argStart, trimRange(text, argStart, p)[1]], JSON.stringify(args), true, p + 1);
    const key = /^([A-Za-z_]\w*)\s*=/.exec(text.slice(p, Math.min(to, p + 256)));
    if (!key) {
      // Cut off inside the keyword.
      if (to === text.length && /^[A-Za-z_]\w*\s*$/.test(text.slice(p, to))) break;
      bad = true;
      break;
    }
    const v = readValue(text, p + key[0].length, to);
    if (!v.complete) {
      p = to;
      break;
    }
    if (v.bad) {
      bad = true;
      break;
    }
    args[key[1]] = v.value;
    p = skipWs(text, v.end, to);
    if (text[p] === ',') p++;
    else if (p < to && text[p] !== ')') {
      bad = true;
      break;
    }
  }
  if (bad) {
    // Not keyword literals: the raw text up to the `)` that ends the line.
    const close = /\)[ \t]*(?=\n|<\/function_calls>|$)/.exec(text.slice(argStart, to));
    if (close) {
      const end = argStart + close.index;
      const range = trimRange(text, argStart, end);
      const index = out.calls.length;
      out.problem('malformed-call', `call ${index}: the arguments are not keyword=literal pairs`, pos, end + 1, { callIndex: index });
      return finish(end + 1, range, text.slice(...range), true, end + 1);
    }
  }
  // Cut off inside the call: what arrived, as written.
  const range = trimRange(text, argStart, to);
  return finish(range[1], range[1] > range[0] ? range : undefined, text.slice(...range), false, range[1]);

  function finish(end: number, argRange: [number, number] | undefined, argsText: string, complete: boolean, callEnd: number) {
    const index = out.addCall(text.slice(pos, nameEnd), argsText);
    const e = Math.max(end, callEnd, nameEnd);
    out.seg('call', pos, e, index);
    out.seg('call-name', pos, nameEnd, index);
    if (argRange && argRange[1] > argRange[0]) out.seg('arguments', argRange[0], argRange[1], index);
    if (!complete) callUnclosed(out, index, pos, e, ')', e);
    return { end: e, complete };
  }
}

/** `<function_calls>` from `start`: calls, one per line, up to `</function_calls>`. */
function section(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  let pos = hit.end;
  let lastEnd = hit.end;
  // The element ends at its close, or (left open) where the turn ends.
  const stop = out.find([CLOSE, ...ENDS, OPEN], pos);
  const to = stop ? stop.start : text.length;
  let end = stop?.marker === CLOSE ? stop.end : undefined;
  let expectedAt: number | undefined;
  for (;;) {
    pos = skipWs(text, pos, to);
    if (pos >= to) break;
    const cut = truncatedAt(text, pos, [CLOSE, ...MARKERS]);
    if (cut) {
      // A close cut short ends the element (unclosed); another marker is left to the text after it.
      if (cut.marker === CLOSE) {
        out.problem('marker-truncated', `${CLOSE} is cut short`, cut.start, cut.end, { marker: CLOSE });
        expectedAt = cut.start;
        lastEnd = cut.end;
      }
      break;
    }
    if (endsInMarker(text, pos, [CLOSE])) {
      // The text ends while the close was being written.
      expectedAt = lastEnd;
      lastEnd = text.length;
      break;
    }
    const call = readCall(out, pos, to);
    if (!call) {
      // A line that is not a call.
      const nl = text.indexOf('\n', pos);
      const junkEnd = nl >= 0 && nl < to ? nl : to;
      const [js, je] = trimRange(text, pos, junkEnd);
      out.problem('malformed-call', `text inside ${OPEN} that is not a call`, js, je);
      pos = lastEnd = junkEnd;
      continue;
    }
    pos = lastEnd = call.end;
    if (!call.complete) break;
  }
  if (expectedAt !== undefined) end = undefined;
  const sectionEnd = end ?? lastEnd;
  out.seg('section', start, sectionEnd);
  if (end === undefined) {
    out.problem('section-unclosed', `${OPEN} never closed by ${CLOSE}`, start, sectionEnd, {
      expectedAt: expectedAt ?? lastEnd,
      marker: CLOSE,
    });
  }
  return sectionEnd;
}

const GRAMMAR: TurnGrammar = {
  family: 'olmo3',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  ends: ENDS,
  starters: [{ marker: OPEN, parse: section }],
};

/** JSON-object arguments as keyword arguments with JSON values; anything else as written. */
function kwargs(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.every(([k]) => /^[A-Za-z_]\w*$/.test(k))) return entries.map(([k, x]) => `${k}=${JSON.stringify(x)}`).join(', ');
    }
  } catch {
    // Raw.
  }
  return args;
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(OPEN);
      m.toolCalls.forEach((c, i) => {
        if (i > 0) out.put('\n');
        out.wrap(
          'call',
          () => {
            out.put(c.name, 'call-name', i).put('(').put(kwargs(c.arguments), 'arguments', i);
            if (close.call(i)) out.put(')');
          },
          i,
        );
      });
      if (close.turn) out.put(CLOSE);
    });
  }
  if (close.turn) out.put(IM_END, 'end');
  return out.done();
}

const format: ModelFormat = {
  id: 'olmo3',
  displayName: 'OLMo 3 (<function_calls> pythonic)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // allenai/Olmo-3-7B-Instruct, Olmo-3-7B-Think, Olmo-3-32B-Think, Olmo-3.1-32B-Instruct; OpenRouter allenai/olmo-3-7b-instruct.
  matchesModel: (modelId) => /^olmo-?3(?![\d])/.test(modelKey(modelId)),
  // `<function_calls>` alone is also the old Claude XML wrapper: only a pythonic call after it is OLMo's.
  detectText: (text) => scoreText(text, [[/<function_calls>\s*[A-Za-z_][\w.]*\s*\(/, 12]]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/olmo3_tool_parser.py';
const content = (what: string): EngineVerdict => ({
  outcome: 'content',
  text: `no call; without a whole ${OPEN}…${CLOSE} block the output fails the call-list pattern, so all of it, ${what}, is content`,
});
const sglang = noParser('SGLang registers no OLMo 3 parser');
const dynamo = noParser('Dynamo lists no OLMo 3 parser family');

const verdicts: FamilyVerdicts = {
  family: 'olmo3',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'olmo3',
      code: VLLM,
      evidence: `${VLLM} extract_tool_calls @ 055e47c2; tests/tool_parsers/test_olmo3_tool_parser.py @ 2aac44dc`,
      note: `read from the code; a whole ${OPEN}…${CLOSE} block is read and the prose around it is dropped (content None)`,
    },
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no olmo3)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no olmo3)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CLOSE} missing after a complete call`,
      verdicts: { vllm: content('markup included'), sglang, dynamo },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a call and ${CLOSE} without ${OPEN}`,
      verdicts: { vllm: content('the orphan closer included'), sglang, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside an argument',
      verdicts: { vllm: content('the cut markup included'), sglang, dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `${CLOSE} missing after several complete calls`,
      verdicts: { vllm: content('the prose and every call'), sglang, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: content('the prose and every call'), sglang, dynamo },
    },
  ],
};

export const olmo3: Family<'olmo3'> = {
  id: 'olmo3',
  format,
  verdicts,
  tokenizer: { repo: 'allenai/Olmo-3-7B-Instruct' },
  repair: {
    openers: [OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
