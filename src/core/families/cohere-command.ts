/**
 * Cohere Command ('cohere-command'): Command R7B and Command A (Cohere's "cmd3" format), Command A Plus, Reasoning and
 * Vision ("cmd4"). The two write tool calls alike and differ only in the wrapper of a plain reply:
 *
 *   <|START_THINKING|>PLAN<|END_THINKING|><|START_ACTION|>[
 *       {"tool_call_id": "0", "tool_name": "NAME", "parameters": {…}},
 *       {"tool_call_id": "1", "tool_name": "NAME", "parameters": {…}}
 *   ]<|END_ACTION|><|END_OF_TURN_TOKEN|>
 *   <|START_THINKING|>…<|END_THINKING|><|START_RESPONSE|>TEXT<|END_RESPONSE|><|END_OF_TURN_TOKEN|>   (cmd3)
 *   <|START_THINKING|>…<|END_THINKING|><|START_TEXT|>TEXT<|END_TEXT|><|END_OF_TURN_TOKEN|>           (cmd4)
 *
 * Sources: the Command R7B chat template (ggml-org/llama.cpp models/templates/CohereForAI-c4ai-command-r7b-12-2024-
 * tool_use.jinja @ 041462bd), SGLang `cohere_command4_detector.py` (the action block, `tool_name` → name,
 * `tool_call_id` dropped), vLLM `cohere_command_tool_parser.py` and Cohere's `cohere_melody` filter (the `cmd3` and
 * `cmd4` presets: `<|START_RESPONSE|>` / `<|START_TEXT|>` open the reply, `<|START_THINKING|>` the plan).
 * `tool_call_id` is the call's position as a string; the servers give the call an id of their own, so it is not read
 * as the call's id. The reply wrappers are markers a correct server removes, and so are the tags of a citation
 * (`<co>…</co: 0:[1]>`), whose words stay in the reply.
 */
import { noParser, noParserInfo, type EngineVerdict, type FamilyVerdicts } from './shared/verdicts';
import {
  closing,
  jsonCallStarters,
  modelKey,
  parseTurn,
  present,
  renderThink,
  scoreText,
  RenderOut,
  type JsonCallsGrammar,
  type ParseOut,
  type Starter,
  type TurnGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { AssistantMessage, NativeText } from '../model';
import type { Family } from './types';

const THINK = { open: '<|START_THINKING|>', close: '<|END_THINKING|>' };
const ACTION_OPEN = '<|START_ACTION|>';
const ACTION_CLOSE = '<|END_ACTION|>';
const RESPONSE_OPEN = '<|START_RESPONSE|>';
const RESPONSE_CLOSE = '<|END_RESPONSE|>';
const TEXT_OPEN = '<|START_TEXT|>';
const TEXT_CLOSE = '<|END_TEXT|>';
const END = '<|END_OF_TURN_TOKEN|>';

const TOOL_MARKERS = [ACTION_OPEN, ACTION_CLOSE, '<|START_TOOL_RESULT|>', '<|END_TOOL_RESULT|>'];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [
  ACTION_CLOSE,
  THINK.close,
  RESPONSE_CLOSE,
  TEXT_CLOSE,
  END,
  '<|END_TOOL_RESULT|>',
  ACTION_OPEN,
  THINK.open,
  RESPONSE_OPEN,
  TEXT_OPEN,
  '<|START_TOOL_RESULT|>',
  '<|START_OF_TURN_TOKEN|>',
  '<|CHATBOT_TOKEN|>',
  '<|USER_TOKEN|>',
  '<|SYSTEM_TOKEN|>',
];

const CALLS: JsonCallsGrammar = {
  family: 'cohere-command',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  open: ACTION_OPEN,
  close: ACTION_CLOSE,
  list: 'array',
  nameKey: 'tool_name',
  argKeys: ['parameters', 'arguments'],
  ends: [END],
  implicitThink: true,
  think: THINK,
};

/**
 * A citation's tags in the plan or the reply: `<co>` before the cited words, `</co: 0:[1,2],1:[3,4]>` after them (tool
 * call 0's results 1 and 2…). vLLM's Cohere parser (cohere_melody) moves them to the response's citations and leaves
 * the words: "foo <co>bar</co: 0:[1]>" is the content "foo bar" (tests/parser/cohere/test_tool_calls.py
 * citations_no_tool_calls, test_citations.py @ 756794a9).
 */
const CITATION = /<co>|<\/co:[^<>]*>/g;

/** A reply wrapper: a marker segment; the text between the two is the content. */
const wrapper = (marker: string): Starter => ({
  marker,
  parse: (out: ParseOut, _start, hit) => (out.seg('marker', hit.start, hit.end), hit.end),
});

const GRAMMAR: TurnGrammar = {
  family: 'cohere-command',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // A reasoning prompt may end with <|START_THINKING|>, so a completion can start inside the plan.
  implicitThink: true,
  think: THINK,
  ends: [END],
  starters: [...jsonCallStarters(CALLS).starters, ...[RESPONSE_OPEN, RESPONSE_CLOSE, TEXT_OPEN, TEXT_CLOSE].map(wrapper)],
  annotations: CITATION,
};

/** Command R7B, Command A and its Plus / Reasoning / Vision / Translate checkpoints; not Command R / R+ (2024), which write `Action: ```json`. */
const MODEL = /(?:^|[^a-z0-9])(?:c4ai-)?command-(?:r7b|a)(?:$|[^a-z0-9])/;

const format: ModelFormat = {
  id: 'cohere-command',
  displayName: 'Cohere Command (<|START_ACTION|>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: ACTION_CLOSE,
  matchesModel: (modelId) => MODEL.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [/<\|START_ACTION\|>\s*\[/, 12],
      [ACTION_CLOSE, 6],
      [/"tool_name"\s*:\s*"/, 3],
      [/<\|START_(?:THINKING|RESPONSE|TEXT)\|>/, 2],
    ]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const close = closing(m, opts);
  const out = new RenderOut();
  renderThink(out, m.reasoning, false, close.reasoning, THINK);
  if (present(m.content) !== undefined) {
    out.put(RESPONSE_OPEN, 'marker').put(m.content!, 'content');
    // A turn cut inside its reply stopped in the reply.
    if (close.turn || m.toolCalls.length) out.put(RESPONSE_CLOSE, 'marker');
  }
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(`${ACTION_OPEN}[\n`);
      m.toolCalls.forEach((c, i) => {
        if (i > 0) out.put(',\n');
        out.put('    ');
        out.wrap(
          'call',
          () => {
            const name = JSON.stringify(c.name);
            out.put(`{"tool_call_id": "${i}", "tool_name": "`);
            if (name === `"${c.name}"` && c.name) out.put(c.name, 'call-name', i);
            else out.put(name.slice(1, -1));
            out.put('", "parameters": ').put(c.arguments, 'arguments', i);
            if (close.call(i)) out.put('}');
          },
          i,
        );
      });
      if (close.turn) out.put(`\n]${ACTION_CLOSE}`);
    });
  }
  if (close.turn) out.put(END, 'end');
  return out.done();
}

// What the engines do, read from their non-streaming code (no conformance fixture covers Cohere).
const VLLM_CODE = 'vllm-project/vllm vllm/tool_parsers/cohere_command_tool_parser.py (cohere_melody filter)';
const MELODY = 'cohere-ai/melody src/parsing/action_filter.rs @ 333ae6a5';
const SGLANG_CODE = 'sgl-project/sglang python/sglang/srt/function_call/cohere_command4_detector.py';
const dynamo = noParser('Dynamo lists no Cohere Command parser family');
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });

const verdicts: FamilyVerdicts = {
  family: 'cohere-command',
  engines: {
    vllm: {
      release: 'main @ 761f1975',
      parser: 'cohere_command3 / cohere_command4',
      code: VLLM_CODE,
      evidence: `vllm-project/vllm vllm/frontend/processing/tool_parsers/cohere_command_tool_parser.py extract_tool_calls @ 761f1975; ${MELODY}`,
      note: "read from the code: vLLM hands the whole text to cohere_melody's filter (process_full_text), whose action filter emits a call's name at its closing quote and its parameters chunk by chunk as they arrive; nothing waits for <|END_ACTION|>; not measured",
    },
    sglang: {
      release: 'main @ 0ff0d3e3',
      parser: 'cohere_command4',
      code: SGLANG_CODE,
      evidence: `${SGLANG_CODE} detect_and_parse @ 0ff0d3e3; test/registered/unit/function_call/test_cohere_command4_detector.py @ 30a32393`,
      note: 'read from the code: a body without <|END_ACTION|> is read with a partial-JSON fallback; streaming waits for <|END_ACTION|> before emitting the calls (test_streaming_waits_for_end_token)',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe; ai-dynamo/dynamo lib/parsers/src/tool_calling/parsers.rs get_tool_parser_map @ 0436586e (no Cohere parser)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<|END_ACTION|> missing after a complete call list',
      verdicts: {
        vllm: v('recovered', 'the call is delivered; the filter never needed <|END_ACTION|>'),
        sglang: v('recovered', 'the list parses as JSON: the call is delivered'),
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call list and <|END_ACTION|> without <|START_ACTION|>',
      verdicts: {
        vllm: v('content', 'no call; the list is reply text'),
        sglang: v('content', 'no call; the detector needs <|START_ACTION|>, the whole text is content'),
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the parameters',
      verdicts: {
        vllm: v('cut-call-delivered', 'the call is delivered with the parameters text that arrived (not valid JSON)'),
        sglang: v(
          'cut-call-delivered',
          'the partial-JSON fallback delivers the call with what parsed of its parameters ({} when the cut fell in a key)',
        ),
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: '<|END_ACTION|> missing after several complete calls',
      verdicts: {
        vllm: v('recovered', 'every call is delivered'),
        sglang: v('recovered', 'every call is delivered'),
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: v('cut-call-delivered', 'every call is delivered, the last with the parameters text that arrived'),
        sglang: v('cut-call-delivered', 'every call is delivered, the last with its cut value ("New York")'),
        dynamo,
      },
    },
  ],
};

export const cohereCommand: Family<'cohere-command'> = {
  id: 'cohere-command',
  format,
  verdicts,
  tokenizer: { repo: 'CohereLabs/c4ai-command-r7b-12-2024' },
  repair: {
    openers: [ACTION_OPEN],
    stripped: [RESPONSE_OPEN, RESPONSE_CLOSE, TEXT_OPEN, TEXT_CLOSE],
    arguments: 'json',
    callIds: 'digest',
  },
};
