/**
 * Reka ('reka': Reka Flash 3 / 3.1, Reka Edge): Hermes `<tool_call>` JSON, one block per call, after the reasoning:
 *
 *   <reasoning>\nREASONING\n</reasoning>\n\nCONTENT\n<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call><sep>
 *
 * Reka Flash 3 reasons in `<reasoning>…</reasoning>` (its model card); Reka Edge in `<think>…</think>`,
 * which the prompt may already have opened (llama.cpp's Reka Edge tests). Both are read; render writes Flash's tags.
 * `<sep>` ends a turn (a stop string, so servers usually drop it). Each call is its own `<tool_call>` block (llama.cpp
 * PR #21616: "the Reka template loops and emits a separate <tool_call>…</tool_call> per call").
 *
 * The reasoning is taken out before any tool parser runs (llama.cpp extracts it first; vLLM's and SGLang's reasoning
 * parsers do the same), so a call written inside the reasoning, such as an example of the format the model quotes
 * while it thinks before making the real call, is reasoning text: it is not returned as a call.
 *
 * No engine registers a Reka parser: vLLM, SGLang and Dynamo serve the grammar with their hermes parsers, whose
 * recorded verdicts these are. Sources: llama.cpp `tests/test-chat.cpp` ("Reka Edge", template `Reka-Edge.jinja`).
 */
import hermes from './hermes/verdicts';
import type { FamilyVerdicts } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  type MarkerHit,
  type ParseOut,
  type ThinkTags,
  type TurnGrammar,
} from './shared';
import { jsonObjectCall, renderObjectCall } from './shared/json-object-call';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

export const CALL_OPEN = '<tool_call>';
export const CALL_CLOSE = '</tool_call>';
const REASONING: ThinkTags = { open: '<reasoning>', close: '</reasoning>' };
const THINK: ThinkTags = { open: THINK_OPEN, close: THINK_CLOSE };
const SEP = '<sep>';
const ENDOFTEXT = '<|endoftext|>';
const ENDS = [SEP, ENDOFTEXT];

const TOOL_MARKERS = [CALL_OPEN, CALL_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [CALL_CLOSE, REASONING.close, THINK_CLOSE, SEP, ENDOFTEXT, CALL_OPEN, REASONING.open, THINK_OPEN];

/** One `<tool_call>` block holding one Hermes JSON call object (shared with families/trinity.ts). */
export function hermesBlock(out: ParseOut, start: number, hit: MarkerHit, stops: readonly string[], markers: readonly string[]): number {
  return jsonObjectCall(out, { start, bodyFrom: hit.end, close: CALL_CLOSE, stops, markers, argKeys: ['arguments', 'parameters'] });
}

const STOPS = [CALL_OPEN, ...ENDS];

function grammar(think: ThinkTags): TurnGrammar {
  return {
    family: 'reka',
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    implicitThink: true,
    think,
    ends: ENDS,
    starters: [{ marker: CALL_OPEN, parse: (out, start, hit) => hermesBlock(out, start, hit, STOPS, MARKERS) }],
  };
}

const WITH_REASONING = grammar(REASONING);
const WITH_THINK = grammar(THINK);

/** The reasoning tags of a turn: whichever pair shows first (Flash's `<reasoning>` when neither does). */
function tagsOf(text: string): TurnGrammar {
  const r = text.search(/<\/?reasoning>/);
  const t = text.search(/<\/?think>/);
  return t >= 0 && (r < 0 || t < r) ? WITH_THINK : WITH_REASONING;
}

const format: ModelFormat = {
  id: 'reka',
  displayName: 'Reka (<tool_call> JSON, <reasoning>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // RekaAI/reka-flash-3, reka-flash-3.1 (and its rekaquant GGUF repos), Reka Edge (rekaai/reka-edge, RekaAI/reka-edge-2603).
  matchesModel: (modelId) => /^reka-(?:flash|edge)(?![a-z])/.test(modelKey(modelId)),
  // The Hermes block alone is Qwen3's and Hermes'; Reka's own is that block after a `</reasoning>`, or before `<sep>`.
  detectText: (text) =>
    scoreText(text, [
      [/<\/reasoning>[^]*?<tool_call>\s*\{/, 20],
      [/<\/tool_call>\s*<sep>/, 20],
    ]),
  render: (m, opts) => {
    const { out, close, hasContent } = renderStart(m, opts, { newlines: true, tags: REASONING });
    m.toolCalls.forEach((c, i) => {
      if (hasContent || i > 0) out.put('\n');
      out.wrap(
        'call',
        () => {
          out.put(`${CALL_OPEN}\n`);
          renderObjectCall(out, c, i, 'arguments', close.call(i));
          if (close.call(i)) out.put(`\n${CALL_CLOSE}`);
        },
        i,
      );
    });
    if (close.turn) out.put(SEP, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(tagsOf(text), text),
};

const carried = 'no Reka parser: the grammar is Hermes <tool_call> JSON, served with the hermes parser, whose recorded verdicts these are';

const verdicts: FamilyVerdicts = {
  ...hermes,
  family: 'reka',
  engines: {
    vllm: { ...hermes.engines.vllm, parser: 'hermes (no Reka parser)', note: carried },
    sglang: { ...hermes.engines.sglang, parser: 'hermes (no Reka parser)', note: carried },
    dynamo: { ...hermes.engines.dynamo, parser: 'hermes (no Reka parser)', note: carried },
  },
};

export const reka: Family<'reka'> = {
  id: 'reka',
  format,
  verdicts,
  tokenizer: { repo: 'RekaAI/reka-flash-3.1' },
  repair: {
    openers: [CALL_OPEN],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
