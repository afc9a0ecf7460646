/**
 * Google FunctionGemma ('functiongemma'; vLLM `functiongemma`, Ollama `functiongemma`), one element per call:
 *
 *   CONTENT<start_function_call>call:NAME{key:<escape>text<escape>,n:1,o:{k:[1,<escape>a<escape>]}}<end_function_call>
 *
 * Gemma 4's call syntax with FunctionGemma's tokens: bare keys, `<escape>` on both sides of a string (no escapes
 * inside), JSON numbers / booleans / null written bare, `{…}` objects and `[…]` lists. The chat template follows the
 * calls with `<start_function_response>` (where the tool's result goes) and ends any other turn with `<end_of_turn>`;
 * the model stops at either. Arguments come back as canonical compact JSON typed by the syntax (an `<escape>` value is
 * a string, as Ollama reads it; vLLM JSON-decodes it, so `<escape>42<escape>` is 42 there, and it drops every value
 * written without `<escape>` and flattens nested objects). A body that is not this syntax is kept raw and flagged; a call cut off keeps the text
 * that arrived as its arguments. FunctionGemma does not reason; `<think>` is read as elsewhere.
 * Sources: vLLM `vllm/tool_parsers/functiongemma_tool_parser.py` and `tests/tool_parsers/test_functiongemma_tool_parser.py`;
 * Ollama `model/parsers/functiongemma.go`, `functiongemma_test.go` and `model/renderers/functiongemma.go`.
 */
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from './shared';
import type { ModelFormat } from './shared/format';
import { keyValueArgs, keyValueCall, type KeyValueRead } from './shared/key-value-call';
import type { Family } from './types';

const CALL_OPEN = '<start_function_call>';
const CALL_CLOSE = '<end_function_call>';
const ESC = '<escape>';
const PREFIX = 'call:';
const RESPONSE_OPEN = '<start_function_response>';
const RESPONSE_CLOSE = '<end_function_response>';
const END = '<end_of_turn>';
const TURN = '<start_of_turn>';
const DECLARATION = ['<start_function_declaration>', '<end_function_declaration>'];
const ENDS = [END, RESPONSE_OPEN];

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, RESPONSE_OPEN, RESPONSE_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [
  CALL_CLOSE,
  END,
  THINK_CLOSE,
  RESPONSE_CLOSE,
  DECLARATION[1],
  CALL_OPEN,
  RESPONSE_OPEN,
  TURN,
  ESC,
  THINK_OPEN,
  DECLARATION[0],
];
const CALL_STOPS = [CALL_CLOSE, CALL_OPEN, ...ENDS];

const GRAMMAR: TurnGrammar = {
  family: 'functiongemma',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: false,
  ends: ENDS,
  starters: [{ marker: CALL_OPEN, parse: call }],
};

const BARE_KEY = /^[A-Za-z0-9_.$-]+$/;

/** JSON arguments in FunctionGemma's syntax (a key that is not bare in `<escape>`); text that is not a JSON object is written as it is. */
const fgArgs = (args: string): string => keyValueArgs(args, ESC, (k) => (BARE_KEY.test(k) ? k : `${ESC}${k}${ESC}`));

/** A value read from `pos` (see `KeyValueRead`). */
type Read = KeyValueRead;

const KEY_CHAR = /[A-Za-z0-9_.$-]/;

/**
 * A string between `<escape>` pairs from `i` (which holds the first one), its close looked for before `bound` (the
 * call's end): one never closed there was cut off when the text ends, and is off-grammar when the call goes on.
 */
function escaped(text: string, i: number, bound: number): Read {
  const from = i + ESC.length;
  const end = text.indexOf(ESC, from);
  if (end >= 0 && end + ESC.length <= bound) return { value: text.slice(from, end), end: end + ESC.length, complete: true };
  return bound < text.length ? { end: bound, complete: true, bad: true } : { end: text.length, complete: false };
}

/** FunctionGemma's value syntax from `pos`; strings close before `bound` (nesting is shallow in real payloads; bounded). */
function readValue(text: string, pos: number, bound: number, depth = 0): Read {
  const to = text.length;
  const i = skipWs(text, pos, to);
  if (i >= to) return { end: to, complete: false };
  if (depth > 64) return { end: i, complete: true, bad: true };
  if (text.startsWith(ESC, i)) return escaped(text, i, bound);
  // The text ends inside `<escape>`: the string never began.
  if (ESC.startsWith(text.slice(i, to))) return { end: to, complete: false };
  const c = text[i];
  if (c === '{' || c === '[') {
    const obj = c === '{';
    const close = obj ? '}' : ']';
    const result: unknown[] | Record<string, unknown> = obj ? {} : [];
    let p = skipWs(text, i + 1, to);
    if (p >= to) return { end: to, complete: false };
    if (text[p] === close) return { value: result, end: p + 1, complete: true };
    for (;;) {
      let key = '';
      if (obj) {
        if (text.startsWith(ESC, p)) {
          const k = escaped(text, p, bound);
          if (!k.complete) return k;
          key = k.value as string;
          p = k.end;
        } else {
          const ks = p;
          while (p < to && KEY_CHAR.test(text[p])) p++;
          key = text.slice(ks, p);
          if (p >= to) return { end: to, complete: false };
          if (!key) return { end: p, complete: true, bad: true };
        }
        p = skipWs(text, p, to);
        if (p >= to) return { end: to, complete: false };
        if (text[p] !== ':') return { end: p, complete: true, bad: true };
        p++;
      }
      const v = readValue(text, p, bound, depth + 1);
      if (!v.complete || v.bad) return v;
      if (obj) (result as Record<string, unknown>)[key] = v.value;
      else (result as unknown[]).push(v.value);
      p = skipWs(text, v.end, to);
      if (p >= to) return { end: to, complete: false };
      if (text[p] === ',') {
        p = skipWs(text, p + 1, to);
        continue;
      }
      if (text[p] === close) return { value: result, end: p + 1, complete: true };
      return { end: p, complete: true, bad: true };
    }
  }
  // A bare scalar: runs to the next delimiter or markup.
  let e = i;
  while (e < to && !',}]'.includes(text[e]) && text[e] !== '<') e++;
  if (e >= to) return { end: to, complete: false };
  const raw = text.slice(i, e).trim();
  if (!raw) return { end: e, complete: true, bad: true };
  try {
    return { value: JSON.parse(raw) as unknown, end: e, complete: true };
  } catch {
    // A bare word: a string, as Ollama reads it.
    return { value: raw, end: e, complete: true };
  }
}

/** One `<start_function_call>call:NAME{…}<end_function_call>` from `start`. The arguments are read first, so markers inside strings stay text. */
function call(out: ParseOut, start: number, hit: MarkerHit): number {
  return keyValueCall(out, start, hit, {
    close: CALL_CLOSE,
    stops: CALL_STOPS,
    prefix: PREFIX,
    read: (o, brace, to) => readValue(o.text, brace, to),
  }).end;
}

const format: ModelFormat = {
  id: 'functiongemma',
  displayName: 'FunctionGemma (<start_function_call>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // google/functiongemma-270m-it, its GGUF / MLX conversions, Ollama's `functiongemma`.
  matchesModel: (modelId) => /function-?gemma/.test(modelKey(modelId)),
  // The call tokens are FunctionGemma's own (Gemma 4 writes <|tool_call>).
  detectText: (text) =>
    scoreText(text, [
      [/<start_function_call>\s*call:/, 12],
      [CALL_CLOSE, 6],
      [ESC, 3],
      [RESPONSE_OPEN, 2],
    ]),
  render: (m, opts) => {
    const { out, close } = renderStart(m, opts, { newlines: false });
    m.toolCalls.forEach((c, i) => {
      out.wrap(
        'call',
        () => {
          out.put(`${CALL_OPEN}${PREFIX}`).put(c.name, 'call-name', i);
          out.put(fgArgs(c.arguments), 'arguments', i);
          if (close.call(i)) out.put(CALL_CLOSE);
        },
        i,
      );
    });
    if (close.turn) out.put(m.toolCalls.length ? RESPONSE_OPEN : END, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/tool_parsers/functiongemma_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const sglang = noParser('SGLang registers no FunctionGemma parser');
const dynamo = noParser('Dynamo lists no FunctionGemma parser family');

const verdicts: FamilyVerdicts = {
  family: 'functiongemma',
  engines: {
    vllm: {
      release: 'main @ fe3771ba',
      parser: 'functiongemma',
      code: VLLM,
      evidence: `${VLLM} tool_call_regex, _parse_arguments, extract_tool_calls @ fe3771ba; tests/tool_parsers/test_functiongemma_tool_parser.py @ 26c3628c`,
      note: `read from the code: a call without ${CALL_CLOSE} is still read to the end of the output; only key:<escape>value<escape> pairs are read, anywhere in the body (JSON-decoded when they parse), so a value written bare (n:1) is dropped and the string pairs of a nested object come back as top-level keys; content is the text before the first ${CALL_OPEN}`,
    },
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no functiongemma)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no functiongemma)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CALL_CLOSE} missing after complete arguments`,
      verdicts: {
        vllm: v('recovered', 'the call is delivered: the regex also takes a call that runs to the end of the output'),
        sglang,
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `call:NAME{…} and ${CALL_CLOSE} without ${CALL_OPEN}`,
      verdicts: { vllm: v('content', 'no call; the text stays in content'), sglang, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: {
        vllm: v(
          'cut-call-delivered',
          'the call is delivered with the parameters that closed before the cut; the cut one is dropped ({} when it was the only one)',
        ),
        sglang,
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several calls lacks only ${CALL_CLOSE}`,
      verdicts: { vllm: v('recovered', 'every call is delivered'), sglang, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: v('cut-call-delivered', 'every call is delivered, the last without its cut parameter'), sglang, dynamo },
    },
  ],
};

export const functiongemma: Family<'functiongemma'> = {
  id: 'functiongemma',
  format,
  verdicts,
  tokenizer: { repo: 'google/functiongemma-270m-it' },
  repair: {
    openers: [CALL_OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
