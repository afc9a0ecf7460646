/**
 * Arcee Trinity ('trinity': Trinity Mini, Trinity Large Thinking and the rest): Qwen 2.5's Hermes `<tool_call>` JSON,
 * one block per call, and `<think>` reasoning, which the prompt may already have opened:
 *
 *   <think>\nREASONING\n</think>\n\nCONTENT\n<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call><|im_end|>
 *
 * Trinity also writes its calls inside the reasoning (`<think>…<tool_call>…</tool_call></think>`). Its own parser,
 * SGLang's TrinityDetector, strips `<think>`/`</think>` before reading the calls, so those are calls: Tokenscope reads
 * them as calls too, and the reasoning around them stays reasoning. Sources: SGLang
 * `python/sglang/srt/function_call/trinity_detector.py` (a Qwen25Detector that removes the think tags) and
 * `test_trinity_detector.py` (`test_streaming_tool_call_inside_think_split`). vLLM and Dynamo have no Trinity parser;
 * they serve it with their hermes parsers, whose recorded verdicts theirs are.
 */
import hermes from './hermes/verdicts';
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { THINK_CLOSE, THINK_OPEN, ParseOut, firstTruncated, freeText, modelKey, skipWs, trimRange } from './shared';
import { renderObjectCall } from './shared/json-object-call';
import { renderQwenTurn } from './qwen3/grammar';
import type { ModelFormat } from './shared/format';
import type { ParsedNative } from '../model';
import { CALL_CLOSE, CALL_OPEN, hermesBlock } from './reka';
import type { Family } from './types';

const IM_END = '<|im_end|>';
const ENDOFTEXT = '<|endoftext|>';
const ENDS = [IM_END, ENDOFTEXT];

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE, '<tool_response>', '</tool_response>'];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [CALL_CLOSE, IM_END, THINK_CLOSE, ENDOFTEXT, CALL_OPEN, THINK_OPEN, '<|im_start|>', '<tool_response>', '</tool_response>'];
const STOPS = [CALL_OPEN, THINK_CLOSE, ...ENDS];

/**
 * The turn: an optional reasoning block (opened by `<think>`, or by the prompt when a `</think>` comes before the end of
 * the turn), calls anywhere in it or after it, content after it.
 */
function parse(text: string): ParsedNative {
  const out = new ParseOut('trinity', text);
  const at = skipWs(text, 0);
  let pos = 0;
  // Where the reasoning opened (its `<think>`, or the start of the text) and where its text begins.
  let open: { at: number; from: number } | undefined;
  if (text.startsWith(THINK_OPEN, at)) {
    out.seg('marker', at, at + THINK_OPEN.length);
    pos = at + THINK_OPEN.length;
    open = { at, from: pos };
  } else {
    const close = out.find([THINK_CLOSE], 0);
    const end = out.find(ENDS, 0);
    if (close && (!end || close.start < end.start)) open = { at: 0, from: 0 };
  }
  let inReasoning = open !== undefined;
  while (pos <= text.length) {
    const next = out.find(inReasoning ? STOPS : [CALL_OPEN, ...ENDS], pos);
    let to = next ? next.start : text.length;
    // In reasoning that never closed, a `</think>` cut short ends it.
    const cut = inReasoning && !next ? firstTruncated(text, [THINK_CLOSE], pos, to) : undefined;
    if (cut) to = cut.start;
    freeText(out, inReasoning ? 'reasoning' : 'content', pos, to, MARKERS);
    if (cut) {
      unclosed(out, open!, pos, to);
      out.seg('marker', cut.start, cut.end);
      out.problem('marker-truncated', `${THINK_CLOSE} is cut short`, cut.start, cut.end, { marker: THINK_CLOSE });
      inReasoning = false;
      pos = cut.end;
      continue;
    }
    if (!next) break;
    if (next.marker === CALL_OPEN) {
      pos = Math.max(hermesBlock(out, next.start, next, inReasoning ? STOPS : [CALL_OPEN, ...ENDS], MARKERS), next.end);
    } else if (next.marker === THINK_CLOSE) {
      out.seg('marker', next.start, next.end);
      inReasoning = false;
      pos = next.end;
    } else {
      if (inReasoning) {
        unclosed(out, open!, pos, next.start);
        inReasoning = false;
      }
      out.seg('end', next.start, next.end);
      pos = next.end;
    }
  }
  if (inReasoning) unclosed(out, open!, pos, text.length);
  return out.finish();
}

/** Reasoning that never closed; its last piece of text runs from `pos` to `last`. */
function unclosed(out: ParseOut, open: { at: number; from: number }, pos: number, last: number): void {
  const [, expectedAt] = trimRange(out.text, pos, last);
  out.problem('reasoning-unclosed', `${THINK_CLOSE} never came`, open.at, last, {
    expectedAt: Math.max(expectedAt, open.from),
    marker: THINK_CLOSE,
  });
}

const format: ModelFormat = {
  id: 'trinity',
  displayName: 'Trinity (<tool_call> JSON, calls in <think>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // arcee-ai/Trinity-Mini and the other Trinity checkpoints; OpenRouter arcee-ai/trinity-large-thinking.
  matchesModel: (modelId) => /^trinity(?:-|$)/.test(modelKey(modelId)),
  // Its markup is Qwen3's Hermes form: nothing in the text is Trinity's own, so only the model id names it.
  detectText: () => 0,
  render: (m, opts) => renderQwenTurn(m, opts, (out, c, i, closed) => renderObjectCall(out, c, i, 'arguments', closed), IM_END),
  parse,
};

const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/trinity_detector.py';
const carried =
  'no Trinity parser: the grammar is Hermes <tool_call> JSON, served with the hermes parser, whose recorded verdicts these are';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const sglang: Record<string, EngineVerdict> = {
  '5.a': v(
    'dropped',
    'no call; a block counts only with its "\\n</tool_call>", and the content is the text before the first "<tool_call>\\n"',
  ),
  '5.b': v('content', 'no call; without "<tool_call>\\n" the whole output is content'),
  '5.c': v('dropped', 'no call; the cut block is dropped, the content is the text before it'),
  '5.d': v('partial', 'the closed blocks are delivered, the unterminated last one dropped'),
  '5.e': v('partial', 'the closed blocks are delivered, the cut one dropped'),
};

const verdicts: FamilyVerdicts = {
  family: 'trinity',
  engines: {
    vllm: { ...hermes.engines.vllm, parser: 'hermes (no Trinity parser)', note: carried },
    sglang: {
      release: 'main @ 2f4ea05f',
      parser: 'trinity',
      code: SGLANG,
      evidence: `${SGLANG} detect_and_parse @ 2f4ea05f, on python/sglang/srt/function_call/qwen25_detector.py detect_and_parse @ 44484b16`,
      note: 'read from the code: the Qwen25Detector reads only "<tool_call>\\n…\\n</tool_call>" (with both newlines), after <think>/</think> are removed',
    },
    dynamo: { ...hermes.engines.dynamo, parser: 'hermes (no Trinity parser)', note: carried },
  },
  cases: hermes.cases.map((c) => ({ ...c, verdicts: { ...c.verdicts, sglang: sglang[c.id] ?? c.verdicts.sglang } })),
};

export const trinity: Family<'trinity'> = {
  id: 'trinity',
  format,
  verdicts,
  tokenizer: { repo: 'arcee-ai/Trinity-Mini' },
  repair: {
    openers: [CALL_OPEN],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
