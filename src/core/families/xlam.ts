/**
 * Salesforce xLAM ('xlam', vLLM `xlam`): one JSON list of call objects, written bare as the whole reply, after the
 * reasoning, or after some text in a ```` ```json ```` fence; the parser also reads it after `[TOOL_CALLS]` and inside
 * `<tool_call>…</tool_call>`:
 *
 *   [{"name": "NAME", "arguments": {…}}, {"name": …}]
 *   <think>REASONING</think>[{"name": "NAME", "arguments": {…}}]
 *   CONTENT\n```json\n[{"name": "NAME", "arguments": {…}}]\n```
 *
 * The list has no marker of its own: only its shape (a list of `{"name", "arguments"}` objects opening the reply, or
 * opening a fenced block) tells it, never prose. `[TOOL_CALLS]` is Mistral's marker and `<tool_call>` Qwen3's, so text
 * holding them is only read as xLAM's when the model id says xLAM. The arguments are the raw text of the `arguments`
 * member, never re-serialized. The turn ends with the base model's end of turn (`<|eot_id|>` for the Llama-based
 * checkpoints, `<|im_end|>` for the Qwen-based ones).
 * Sources: vLLM `vllm/frontend/processing/tool_parsers/xlam_tool_parser.py` (`preprocess_model_output`,
 * `extract_tool_calls`) and `tests/tool_parsers/test_xlam_tool_parser.py`.
 */
import type { AssistantMessage, NativeText } from '../model';
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  jsonCallStarters,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  type JsonCallsGrammar,
  type PatternStarter,
  type TurnGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { Family } from './types';
import { renderObjectCall } from './shared/json-object-call';

const MISTRAL_OPEN = '[TOOL_CALLS]';
const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const FENCE = '```';
const FENCE_JSON = '```json';
const EOT = '<|eot_id|>';
const IM_END = '<|im_end|>';
const ENDS = [EOT, IM_END];

const TOOL_MARKERS = [MISTRAL_OPEN, CALL_OPEN, CALL_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. The fence is no marker: prose has fences. */
const MARKERS = [CALL_CLOSE, EOT, IM_END, THINK_CLOSE, MISTRAL_OPEN, CALL_OPEN, THINK_OPEN];

const list = (open: string, close?: string): JsonCallsGrammar => ({
  family: 'xlam',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open,
  close,
  list: 'array',
  argKeys: ['arguments'],
  ends: ENDS,
  implicitThink: false,
});

/** A call list written bare, as the grammar's bare list (its section reader only). */
const BARE = { ...list(MISTRAL_OPEN), bare: true };
const bareReader = jsonCallStarters(BARE).patterns![0];

/** A list of call objects starts at `at`. */
const LIST_HEAD = /^\[\s*\{\s*"name"\s*:/;
const listAt = (text: string, at: number): boolean => LIST_HEAD.test(text.slice(at, at + 64));

/** Where the reply starts: after leading space and a `<think>…</think>` block. */
function replyStart(text: string): number {
  const at = skipWs(text, 0);
  if (!text.startsWith(THINK_OPEN, at)) return at;
  const close = text.indexOf(THINK_CLOSE, at);
  return close < 0 ? -1 : skipWs(text, close + THINK_CLOSE.length);
}

/** The bare list: only where the reply starts. */
const BARE_LIST: PatternStarter = {
  find: (text, from) => {
    const at = replyStart(text);
    return at >= from && listAt(text, at) ? at : -1;
  },
  parse: (out, start) => bareReader.parse(out, start),
};

/** A fence (```` ```json ```` or ```` ``` ````) that opens a call list. */
const FENCED = /```(?:json)?[ \t]*\r?\n?\s*(?=\[\s*\{\s*"name"\s*:)/g;
const FENCE_READERS = {
  [FENCE_JSON]: jsonCallStarters(list(FENCE_JSON, FENCE)).starters[0],
  [FENCE]: jsonCallStarters(list(FENCE, FENCE)).starters[0],
};

const FENCED_LIST: PatternStarter = {
  find: (text, from) => {
    FENCED.lastIndex = from;
    const m = FENCED.exec(text);
    return m ? m.index : -1;
  },
  parse: (out, start) => {
    const open = out.text.startsWith(FENCE_JSON, start) ? FENCE_JSON : FENCE;
    return FENCE_READERS[open].parse(out, start, { marker: open, start, end: start + open.length });
  },
};

const GRAMMAR: TurnGrammar = {
  family: 'xlam',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: false,
  ends: ENDS,
  starters: [
    ...jsonCallStarters({ ...list(MISTRAL_OPEN), closeOptional: true }).starters,
    ...jsonCallStarters(list(CALL_OPEN, CALL_CLOSE)).starters,
  ],
  patterns: [BARE_LIST, FENCED_LIST],
};

/** The reply: reasoning, then the calls bare, or the content and the calls in a fence after it; then the end of turn. */
function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close, hasContent } = renderStart(m, opts, { newlines: false });
  if (m.toolCalls.length) {
    if (hasContent) out.put('\n');
    out.wrap('section', () => {
      if (hasContent) out.put(`${FENCE_JSON}\n`);
      out.put('[');
      m.toolCalls.forEach((c, i) => {
        if (i > 0) out.put(', ');
        out.wrap('call', () => renderObjectCall(out, c, i, 'arguments', close.call(i)), i);
      });
      if (close.turn) out.put(hasContent ? `]\n${FENCE}` : ']');
    });
  }
  if (close.turn) out.put(EOT, 'end');
  return out.done();
}

const format: ModelFormat = {
  id: 'xlam',
  displayName: 'xLAM (JSON call list)',
  // The bare list carries no marker.
  markerless: true,
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // Salesforce/xLAM-2-32b-fc-r, Salesforce/Llama-xLAM-2-8b-fc-r, xLAM-7b-r, xLAM-1b-fc-r and their GGUF conversions.
  matchesModel: (modelId) => /(?:^|[^a-z])xlam(?:[-_]|$)/.test(modelKey(modelId)),
  // Only the list's own shape: opening the reply (after reasoning), or opening a fenced block.
  detectText: (text) => {
    const at = replyStart(text);
    return (
      scoreText(text, [[/```(?:json)?[ \t]*\r?\n?\s*\[\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"arguments"\s*:/, 6]]) +
      (at >= 0 && /^\[\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"arguments"\s*:/.test(text.slice(at, at + 256)) ? 6 : 0)
    );
  },
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/xlam_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const sglang = noParser('SGLang registers no xLAM parser');
const dynamo = noParser('Dynamo lists no xLAM parser family');
const whole = 'no call at all; the list must decode whole (json.loads), so the whole output, complete calls included, is content';

const verdicts: FamilyVerdicts = {
  family: 'xlam',
  engines: {
    vllm: {
      release: 'main @ 761f1975',
      parser: 'xlam',
      code: VLLM,
      evidence: `${VLLM} preprocess_model_output, extract_tool_calls @ 761f1975; tests/tool_parsers/test_xlam_tool_parser.py @ 10a67515`,
      note: 'read from the code: a fence is read only once its closing ``` arrived; a bare list only when the output starts with [; content is the output with the list removed, reasoning included',
    },
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no xlam)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no xlam)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: "the list's closing ] (or the fence's closing ```) missing after a complete call",
      verdicts: { vllm: v('content', whole), sglang, dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: { vllm: v('content', whole), sglang, dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: "the list's closing ] (or the fence's closing ```) missing after several complete calls",
      verdicts: { vllm: v('content', whole), sglang, dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: v('content', whole), sglang, dynamo },
    },
  ],
};

export const xlam: Family<'xlam'> = {
  id: 'xlam',
  format,
  verdicts,
  tokenizer: { repo: 'Salesforce/Llama-xLAM-2-8b-fc-r' },
  repair: {
    // A ```json fence after the content carries the calls; one that holds none is released as it came.
    openers: [MISTRAL_OPEN, CALL_OPEN, FENCE_JSON],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
