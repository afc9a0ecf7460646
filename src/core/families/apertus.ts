/**
 * Swiss AI Apertus ('apertus'): one JSON list of single-key objects between two special tokens:
 *
 *   <|inner_prefix|>REASONING<|inner_suffix|>CONTENT<|tools_prefix|>[{"NAME": {…}}, {"NAME2": {…}}]<|tools_suffix|><|assistant_end|>
 *
 * Each list element is `{"<tool name>": <arguments>}` (not `{"name": …, "arguments": …}`); the arguments are the raw
 * text of that member's value. Reasoning sits between `<|inner_prefix|>` and `<|inner_suffix|>` (the prompt may end with
 * `<|inner_prefix|>`), and a turn may hold more than one such block. Sources: SGLang
 * `python/sglang/srt/function_call/apertus2509_detector.py` (docstring, `_apertus_obj_to_call`: the first key is the
 * name), vLLM `vllm/frontend/processing/tool_parsers/apertus_tool_parser.py` and `vllm/reasoning/apertus_reasoning_parser.py`,
 * and their tests.
 */
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  callUnclosed,
  endsInMarker,
  jsonMembers,
  jsonValueEnd,
  modelKey,
  parseTurn,
  renderStart,
  scoreText,
  skipWs,
  stringEnd,
  thinkBlock,
  trimRange,
  truncatedAt,
  type MarkerHit,
  type ParseOut,
  type TurnGrammar,
} from './shared';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const PREFIX = '<|tools_prefix|>';
const SUFFIX = '<|tools_suffix|>';
const INNER = { open: '<|inner_prefix|>', close: '<|inner_suffix|>' };
const END = '<|assistant_end|>';
const ENDS = [END];

const TOOL_MARKERS = [PREFIX, SUFFIX];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [
  SUFFIX,
  INNER.close,
  END,
  PREFIX,
  INNER.open,
  '<|assistant_start|>',
  '<|user_start|>',
  '<|user_end|>',
  '<|system_start|>',
  '<|system_end|>',
  '<|developer_start|>',
  '<|developer_end|>',
];

/** One list element `{"NAME": ARGS}` in [from, to); `complete` when its `}` is there. Returns where it ends. */
function readCall(out: ParseOut, from: number, to: number, complete: boolean): number {
  const { text } = out;
  const members = jsonMembers(text, from, to) ?? [];
  const first = members[0];
  const end = complete ? to : trimRange(text, from, to)[1];
  const name = first?.key ?? '';
  const index = out.addCall(name, first ? text.slice(...first.valueRange) : complete ? '{}' : '');
  out.seg('call', from, end, index);
  if (first?.key) {
    // The name segment covers the key itself, so it only exists when JSON needs no escapes for it.
    const keyStart = skipWs(text, from + 1, to);
    const keyEnd = stringEnd(text, keyStart, to);
    if (keyEnd > keyStart && text.slice(keyStart + 1, keyEnd - 1) === name) out.seg('call-name', keyStart + 1, keyEnd - 1, index);
  }
  if (first) out.seg('arguments', first.valueRange[0], first.valueRange[1], index);
  if (!complete) callUnclosed(out, index, from, end, '}', end);
  else if (!first?.key)
    out.problem('malformed-call', `call ${index}: no tool name (an object with one key, the name)`, from, end, { callIndex: index });
  else if (members.length > 1)
    out.problem('malformed-call', `call ${index}: more than one key; the engines read the first as the name`, from, end, {
      callIndex: index,
    });
  return end;
}

/** `<|tools_prefix|>` from `start`: the list, then `<|tools_suffix|>`. */
function section(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const stop = out.find([SUFFIX, ...ENDS, PREFIX, INNER.open], hit.end);
  const to = stop ? stop.start : text.length;
  let pos = skipWs(text, hit.end, to);
  let lastEnd = hit.end;
  let cut = false;
  let listClosed = false;
  if (pos >= to && to === text.length) {
    // Cut off right after the opener.
    out.seg('section', start, hit.end);
    out.problem('section-unclosed', `${PREFIX} never followed by its calls`, start, hit.end, { expectedAt: hit.end, marker: SUFFIX });
    return hit.end;
  }
  const lone = text[pos] === '{';
  if (text[pos] !== '[' && !lone) {
    const end = stop?.marker === SUFFIX ? stop.end : to;
    const body = trimRange(text, pos, to);
    if (body[1] > body[0]) {
      const index = out.addCall('', text.slice(...body));
      out.seg('call', body[0], body[1], index);
    }
    out.seg('section', start, end);
    out.problem('malformed-call', `${PREFIX} is not followed by a JSON list of calls`, start, end);
    return Math.max(end, hit.end);
  }
  if (!lone) pos++;
  for (;;) {
    pos = skipWs(text, pos, to);
    if (pos >= to) break;
    if (!lone && text[pos] === ']') {
      listClosed = true;
      lastEnd = pos + 1;
      pos++;
      break;
    }
    if (text[pos] !== '{') break;
    const objEnd = jsonValueEnd(text, pos, to);
    if (objEnd < 0) {
      lastEnd = readCall(out, pos, to, false);
      cut = true;
      break;
    }
    lastEnd = readCall(out, pos, objEnd, true);
    pos = skipWs(text, objEnd, to);
    if (lone) {
      listClosed = true;
      break;
    }
    if (text[pos] === ',') pos++;
  }
  let end = lastEnd;
  const at = skipWs(text, cut ? lastEnd : pos, to);
  if (!cut && at < to && !endsInMarker(text, at, [SUFFIX]) && !truncatedAt(text, at, [SUFFIX])) {
    // Text where the list (or the suffix) belongs.
    const [js, je] = trimRange(text, at, to);
    out.problem('malformed-call', `text inside the ${PREFIX} list, outside any call`, js, je);
    end = lastEnd = je;
  }
  let unclosed = false;
  if (stop?.marker === SUFFIX) {
    end = stop.end;
    if (!listClosed && !cut) out.problem('malformed-call', `the ${PREFIX} list is not closed by ] before ${SUFFIX}`, start, end);
  } else {
    unclosed = true;
    if (!cut) {
      const after = skipWs(text, Math.max(end, pos), to);
      const broken = truncatedAt(text, after, [SUFFIX]);
      if (broken) {
        out.problem('marker-truncated', `${SUFFIX} is cut short`, broken.start, broken.end, { marker: SUFFIX });
        end = broken.end;
      } else if (endsInMarker(text, after, [SUFFIX])) end = text.length;
    }
  }
  out.seg('section', start, end);
  if (lone) out.problem('malformed-call', `${PREFIX} is followed by one call object, not a list`, start, end);
  if (unclosed) out.problem('section-unclosed', `${PREFIX} never closed by ${SUFFIX}`, start, end, { expectedAt: lastEnd, marker: SUFFIX });
  return Math.max(end, hit.end);
}

/** A reasoning block later in the turn (Apertus may think again between its answer and its calls). */
function innerBlock(out: ParseOut, start: number): number {
  return thinkBlock(out, start, {
    implicitOpen: false,
    stops: [PREFIX, ...ENDS],
    turnEnds: ENDS,
    markers: MARKERS,
    tags: INNER,
    toolMarkers: TOOL_MARKERS,
  });
}

const GRAMMAR: TurnGrammar = {
  family: 'apertus',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  think: INNER,
  ends: ENDS,
  starters: [
    { marker: PREFIX, parse: section },
    { marker: INNER.open, parse: (out, start) => innerBlock(out, start) },
  ],
};

const format: ModelFormat = {
  id: 'apertus',
  displayName: 'Apertus (<|tools_prefix|>[{NAME: ARGS}])',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // swiss-ai/Apertus-8B-Instruct-2509, swiss-ai/Apertus-70B-Instruct-2509; publicai/swiss-ai/apertus-8b-instruct.
  matchesModel: (modelId) => /(?:^|[^a-z])apertus/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [/<\|tools_prefix\|>\s*\[/, 12],
      [SUFFIX, 6],
      [INNER.close, 2],
    ]),
  render: (m, opts) => {
    const { out, close } = renderStart(m, opts, { newlines: false, tags: INNER });
    if (m.toolCalls.length) {
      out.wrap('section', () => {
        out.put(`${PREFIX}[`);
        m.toolCalls.forEach((c, i) => {
          if (i > 0) out.put(', ');
          out.wrap(
            'call',
            () => {
              const name = JSON.stringify(c.name);
              out.put('{"');
              if (name === `"${c.name}"` && c.name) out.put(c.name, 'call-name', i);
              else out.put(name.slice(1, -1));
              out.put('": ').put(c.arguments, 'arguments', i);
              if (close.call(i)) out.put('}');
            },
            i,
          );
        });
        if (close.turn) out.put(`]${SUFFIX}`);
      });
    }
    if (close.turn) out.put(END, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(GRAMMAR, text),
};

const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/apertus2509_detector.py';
const VLLM = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/apertus_tool_parser.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const sglangContent = v(
  'content',
  `no call; a block counts only once its JSON list parses and ${SUFFIX} follows it, so the rest of the output, markup included, is content`,
);
const dynamo = noParser('Dynamo lists no Apertus parser family');

const verdicts: FamilyVerdicts = {
  family: 'apertus',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'apertus',
      code: VLLM,
      evidence: `${VLLM} extract_tool_calls @ 055e47c2; tests/tool_parsers/test_apertus_tool_parser.py @ 266c3ccc (test_incomplete_tool_call, test_missing_tool_suffix)`,
      note: `read from the code and its tests: ${SUFFIX} is optional, and a list that does not parse is read with partial_json_loads (Allow.ALL)`,
    },
    sglang: {
      release: 'main @ 16739a60',
      parser: 'apertus2509',
      code: SGLANG,
      evidence: `${SGLANG} detect_and_parse @ 16739a60; test/registered/unit/function_call/test_apertus2509_detector.py @ 8d240b18`,
      note: 'read from the code: raw_decode of the list, then the suffix; anything short of both leaves the block as text',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no apertus)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${SUFFIX} missing after a complete list`,
      verdicts: { vllm: v('recovered', 'the complete call is delivered; the suffix is optional'), sglang: sglangContent, dynamo },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `a call list and ${SUFFIX} without ${PREFIX}`,
      verdicts: {
        vllm: v('content', 'no call; the text stays in content'),
        sglang: v('content', 'no call; the text stays in content'),
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: {
        vllm: v('cut-call-delivered', 'the cut call is delivered with what partial_json_loads completes of its arguments'),
        sglang: sglangContent,
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `] and ${SUFFIX} missing after several complete calls`,
      verdicts: {
        vllm: v('recovered', 'every complete call is delivered (partial_json_loads closes the list)'),
        sglang: sglangContent,
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: { vllm: v('cut-call-delivered', 'every call is delivered, the last with its cut value'), sglang: sglangContent, dynamo },
    },
  ],
};

export const apertus: Family<'apertus'> = {
  id: 'apertus',
  format,
  verdicts,
  tokenizer: { repo: 'swiss-ai/Apertus-8B-Instruct-2509' },
  repair: {
    openers: [PREFIX],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
