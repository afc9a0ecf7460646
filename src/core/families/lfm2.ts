/**
 * LFM2 / LFM2.5 (Liquid AI) ('lfm2'): a pythonic call list between two special tokens.
 *
 *   <think>REASONING</think>CONTENT<|tool_call_start|>[get_weather(location="Paris"), ping()]<|tool_call_end|>CONTENT<|im_end|>
 *
 * The list is the pythonic one Llama 4 writes (keyword arguments, Python literals; the call reader is shared with
 * families/llama4-pythonic/grammar.ts), and LFM2's chat template writes mappings and lists as JSON inside it, so `true`,
 * `false` and `null` are literals too (SGLang `lfm2_detector.py` `_PYTHONIC_NAME_LITERALS`). A JSON list of
 * `{"name": …, "arguments": {…}}` objects between the same tokens is also read (SGLang `lfm2_detector.py`
 * `_parse_json_content`; Liquid AI's own fine-tuning examples write it), although vLLM `lfm2_tool_parser.py` and
 * Ollama `model/parsers/lfm2.go` read only the pythonic list. Both engines repair the slips LFM2 models make in the
 * pythonic list before reading it (vLLM `tool_parsers/utils.py` `escape_nested_quotes_in_strings` and kin @ 011cde7c,
 * SGLang `_recovery_candidates` @ 02caf64a): a set literal is a list, `month=07` is 7, a raw newline stays in the
 * string, and a shell command holding quotes of its string's own kind (`command='sed -n '1,9p' f.py'`) closes at the
 * one quote after which the call reads; so are they read here, and not flagged. Several blocks may follow one another, with text
 * between them (Ollama `lfm2_test.go`). The LFM2.5 thinking models write `<think>…</think>` first, and the prompt may
 * already hold the `<think>`.
 *
 * `<|tool_call_end|>` is also Kimi K2's call closer: only `<|tool_call_start|>` and a call list closed right before
 * `<|tool_call_end|>` are LFM2's own, and detection scores on those.
 *
 * Arguments of the pythonic form come back as canonical compact JSON (typed by the Python literals); those of the
 * JSON form as written. What the engines do with broken outputs, read from their parsers:
 * - vLLM `lfm2_tool_parser.py` `extract_tool_calls`: without `<|tool_call_end|>` the rest of the output is read as the
 *   list, so a list that is whole but unclosed is delivered; any list that does not parse (cut short, JSON form)
 *   leaves the whole output as content.
 * - SGLang `lfm2_detector.py` `detect_and_parse`: only blocks closed by `<|tool_call_end|>` are read; an unclosed
 *   block is dropped with everything after its opener (the text before it stays), and so is any text after a block.
 * - Dynamo: no LFM2 parser in its registry.
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../model';
import { noParser, noParserInfo, type FamilyVerdicts } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  endsInMarker,
  jsonCallStarters,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  truncatedAt,
  type JsonCallsGrammar,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from './shared';
import { pyArgs, readCall } from './llama4-pythonic/grammar';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { Family } from './types';

const START = '<|tool_call_start|>';
const END = '<|tool_call_end|>';
const IM_END = '<|im_end|>';
const IM_START = '<|im_start|>';

const TOOL_MARKERS = [START, END];
/** The chat format's special tokens (LiquidAI/LFM2 tokenizer), the call list's first so a cut fragment reads as them. */
const MARKERS = [
  END,
  START,
  IM_END,
  THINK_CLOSE,
  THINK_OPEN,
  IM_START,
  '<|tool_list_start|>',
  '<|tool_list_end|>',
  '<|tool_response_start|>',
  '<|tool_response_end|>',
  '<|startoftext|>',
];

/** The JSON form: a JSON array of call objects between the same tokens. */
const JSON_FORM: JsonCallsGrammar = {
  family: 'lfm2',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: START,
  close: END,
  list: 'array',
  argKeys: ['arguments', 'parameters'],
  ends: [IM_END],
  implicitThink: true,
};
const jsonSection = jsonCallStarters(JSON_FORM).starters[0];

const GRAMMAR: TurnGrammar = {
  family: 'lfm2',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  ends: [IM_END],
  starters: [{ marker: START, parse: section }],
};

const format: ModelFormat = {
  id: 'lfm2',
  displayName: 'LFM2 / LFM2.5 (Liquid AI)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: END,
  // LiquidAI/LFM2-1.2B, LFM2-8B-A1B, LFM2-1.2B-Tool, LFM2-VL-…, LFM2.5-1.2B-Instruct; OpenRouter liquid/lfm2-8b-a1b,
  // liquid/lfm-2.2-6b, liquid/lfm-2.5-1.2b-thinking. Not the first generation (liquid/lfm-3b, lfm-7b, lfm-40b).
  matchesModel: (modelId) => /^lfm-?2(?![0-9])/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [START, 10],
      [/<\|tool_call_start\|>\s*\[/, 4],
      // A call list closed right before <|tool_call_end|> (Kimi K2 closes a JSON object there instead).
      [/[)}]\s*\]\s*<\|tool_call_end\|>/, 9],
    ]),
  render,
  parse,
};

function parse(text: string): ParsedNative {
  return parseTurn(GRAMMAR, text);
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(`${START}[`);
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
      if (close.turn) out.put(`]${END}`);
    });
  }
  if (close.turn) out.put(IM_END, 'end');
  return out.done();
}

/** One block from its `<|tool_call_start|>` (`hit`): the JSON form, or the pythonic list. Returns where it ends. */
function section(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const at = skipWs(text, hit.end);
  if (/^(?:\[\s*)?\{/.test(text.slice(at, at + 64))) return jsonSection.parse(out, start, hit);
  if (at >= text.length) {
    out.seg('section', start, hit.end);
    out.problem('section-unclosed', `${START} never followed by its calls`, start, hit.end, { expectedAt: hit.end, marker: END });
    return text.length;
  }
  const bracketed = text[at] === '[';
  let pos = bracketed ? at + 1 : at;
  let lastEnd = pos;
  let listClosed = false;
  let cut = false;
  const first = out.calls.length;
  for (;;) {
    pos = skipWs(text, pos);
    if (bracketed && text[pos] === ']') {
      listClosed = true;
      lastEnd = pos + 1;
      break;
    }
    if (pos >= text.length) break;
    const c = readCall(out, pos, { jsonWords: true, repairs: true });
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
    if (!(bracketed && text[pos] === ']')) break;
  }
  const read = out.calls.length - first;
  if (cut || (skipWs(text, pos) >= text.length && !listClosed)) {
    // The text ended inside the block.
    const end = Math.max(cut ? lastEnd : text.length, hit.end);
    const marker = bracketed ? ']' : END;
    out.seg('section', start, end);
    out.problem('section-unclosed', `${START} never closed by ${marker}`, start, end, {
      expectedAt: Math.max(trimRange(text, hit.end, lastEnd)[1], hit.end),
      marker,
    });
    return end;
  }
  if (!listClosed) {
    // Something that is not a call: the block is malformed up to its end marker (or the next marker).
    const stop = out.find([END, START, IM_END], pos);
    const end = Math.max(stop?.marker === END ? stop.end : stop ? stop.start : text.length, hit.end);
    out.seg('section', start, end);
    const what = bracketed
      ? `text inside the ${START} call list, outside any call`
      : read
        ? `${START} holds calls that are not in a [ ] list`
        : `${START} is not followed by a call list`;
    out.problem('malformed-call', what, start, end);
    return end;
  }
  // The list closed: <|tool_call_end|> comes next.
  const after = skipWs(text, lastEnd);
  if (text.startsWith(END, after)) {
    out.seg('section', start, after + END.length);
    return after + END.length;
  }
  const broken = truncatedAt(text, after, [END]);
  if (broken) {
    out.seg('section', start, broken.end);
    out.problem('marker-truncated', `${END} is cut short`, broken.start, broken.end, { marker: END });
    out.problem('section-unclosed', `${START} never closed by ${END}`, start, broken.end, { expectedAt: broken.start, marker: END });
    return broken.end;
  }
  const end = after < text.length && endsInMarker(text, after, [END]) ? text.length : lastEnd;
  out.seg('section', start, end);
  out.problem('section-unclosed', `${START} never closed by ${END}`, start, end, { expectedAt: lastEnd, marker: END });
  return end;
}

// Verdicts read from the parsers' non-streaming code (no conformance fixture covers LFM2).
const VLLM_CODE = 'vllm-project/vllm vllm/tool_parsers/lfm2_tool_parser.py';
const SGLANG_CODE = 'sgl-project/sglang python/sglang/srt/function_call/lfm2_detector.py';
const dynamo = noParser('Dynamo registers no LFM2 parser');

const verdicts: FamilyVerdicts = {
  family: 'lfm2',
  engines: {
    vllm: {
      release: 'main @ 011cde7c',
      parser: 'lfm2',
      code: VLLM_CODE,
      evidence: `${VLLM_CODE} _extract_tool_call_text, extract_tool_calls @ 011cde7c`,
      note: 'read from the code; no conformance fixture. The JSON form ([{"name": …}]) is not read: the whole output stays content',
    },
    sglang: {
      release: 'main @ 02caf64a',
      parser: 'lfm2',
      code: SGLANG_CODE,
      evidence: `${SGLANG_CODE} detect_and_parse @ 02caf64a`,
      note: 'read from the code; no conformance fixture. Calls to tools the request did not offer are dropped (SGLANG_FORWARD_UNKNOWN_TOOLS)',
    },
    dynamo: noParserInfo(
      'main @ 117eab15',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map (no lfm2 entry) @ 117eab15',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<|tool_call_end|> missing after a complete call list',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the call is delivered (the rest of the output is read as the list)' },
        sglang: { outcome: 'dropped', text: 'no call; the block is dropped, only the text before it stays' },
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call list and <|tool_call_end|> without <|tool_call_start|>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the list and the orphan <|tool_call_end|> stay in content' },
        sglang: { outcome: 'content', text: 'no call; the list and the orphan <|tool_call_end|> stay in content' },
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside an argument',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'dropped', text: 'no call; the cut block is dropped, only the text before it stays' },
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: '<|tool_call_end|> missing after a complete list of several calls',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'every call is delivered' },
        sglang: { outcome: 'dropped', text: 'no call; the block is dropped, only the text before it stays' },
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'dropped', text: 'no call; the block with its complete calls is dropped, only the text before it stays' },
        dynamo,
      },
    },
  ],
};

export const lfm2: Family<'lfm2'> = {
  id: 'lfm2',
  format,
  verdicts,
  tokenizer: { repo: 'LiquidAI/LFM2-1.2B' },
  repair: {
    openers: [START],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
