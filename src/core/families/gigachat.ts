/**
 * GigaChat by Sber (ai-sage): two dialects.
 *
 * GigaChat 3 and 3.1 ('gigachat3') write the call as a message of its own role, `function call`, after the reply:
 *
 *   CONTENT<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "NAME", "arguments": {…}}</s>
 *   CONTENT<|function_call|>{"name": "NAME", "arguments": {…}}</s>                              (GigaChat 3.1)
 *
 * One call per turn (the chat template writes `tool_calls[0]` only); the object's own `}` ends it. vLLM
 * `gigachat3_tool_parser.py` and SGLang `gigachat3_detector.py` read everything after the first header as one JSON
 * object, `arguments` an object, after dropping a trailing `</s>`. Sources: ggml-org/llama.cpp
 * models/templates/GigaChat3-10B-A1.8B.jinja @ 6f9ffbd9; the parsers' tests.
 *
 * GigaChat 3.5 ('gigachat35') writes GCML, DeepSeek's DSML with `GCML` in its markers (`｜` is U+FF5C):
 *
 *   <think>REASONING</think>\n\nCONTENT\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name="NAME">\n
 *   <｜GCML｜parameter name="K" string="true">V</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls></s>
 *
 * `string="true"` values are the text as written, `string="false"` ones JSON (the text when it is not; vLLM reads a
 * parameter without the attribute as a string). Sources: ggml-org/llama.cpp models/templates/GigaChat3.5.jinja
 * @ 44cfbebb (`render_gcml_tool_calls`), vLLM `gigachat35_tool_parser.py`, SGLang `gigachat35_detector.py`.
 */
import { noParser, noParserInfo, type EngineVerdict, type FamilyVerdicts, type VerdictCase } from './shared/verdicts';
import {
  THINK_CLOSE,
  THINK_OPEN,
  attrHead,
  invokeCall,
  modelKey,
  parseSection,
  parseTurn,
  renderInvokes,
  renderStart,
  scoreText,
  trimRange,
  type InvokeRender,
  type MarkerHit,
  type ParamGrammar,
  type ParseOut,
  type SectionGrammar,
  type TurnGrammar,
} from './shared';
import { header, jsonObjectCall, renderObjectCall } from './shared/json-object-call';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const MSG_SEP = '<|message_sep|>';
const ROLE_SEP = '<|role_sep|>';
const EOS = '</s>';

/** `gigachat3`, `gigachat-3.1`… with the minor version, when the id names one. */
function version(modelId: string): { minor: number } | undefined {
  const m = /(?:^|[^a-z0-9])gigachat-?3(?:\.(\d))?(?![\d])/.exec(modelKey(modelId));
  return m ? { minor: m[1] ? Number(m[1]) : 0 } : undefined;
}

const DYNAMO_NONE =
  'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe; ai-dynamo/dynamo lib/parsers/src/tool_calling/parsers.rs get_tool_parser_map @ 0436586e (no GigaChat parser)';
const dynamo = noParser('Dynamo lists no GigaChat parser family');
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });

// ---------------------------------------------------------------------------------------------------------------
// GigaChat 3 / 3.1

const HEADER = 'function call';
const FC_INLINE = '<|function_call|>';
const G3_TOOL_MARKERS = [FC_INLINE];
const G3_MARKERS = [ROLE_SEP, MSG_SEP, EOS, THINK_CLOSE, FC_INLINE, THINK_OPEN, '<|file|>', '<|/file|>'];
const G3_STOPS = [MSG_SEP, FC_INLINE, EOS];

const call3 = (out: ParseOut, start: number, bodyFrom: number): number =>
  jsonObjectCall(out, { start, bodyFrom, stops: G3_STOPS, markers: G3_MARKERS, argKeys: ['arguments'] });

/**
 * `<|message_sep|>` ends the reply. Followed by `function call<|role_sep|>` it opens the call message; the text ending
 * in the middle of that header (or right after the separator: a reply ends with `</s>`, not with it) is a call cut
 * short before its object.
 */
function messageSep(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const h = header(out, hit.end, [HEADER, ROLE_SEP]);
  if (h.missing) {
    out.seg('end', hit.start, hit.end);
    return hit.end;
  }
  if (h.cut) {
    const [, e] = trimRange(text, start, text.length);
    out.seg('marker', start, e);
    out.problem('marker-truncated', `the ${HEADER}${ROLE_SEP} header is cut short`, start, e, {
      marker: `${HEADER}${ROLE_SEP}`,
      expectedAt: h.cut.start,
    });
    return text.length;
  }
  return call3(out, start, h.end);
}

const G3_GRAMMAR: TurnGrammar = {
  family: 'gigachat3',
  markers: G3_MARKERS,
  toolMarkers: G3_TOOL_MARKERS,
  implicitThink: false,
  ends: [EOS],
  starters: [
    { marker: MSG_SEP, parse: messageSep },
    { marker: FC_INLINE, parse: (out, start, hit) => call3(out, start, hit.end) },
  ],
};

const gigachat3Format: ModelFormat = {
  id: 'gigachat3',
  displayName: 'GigaChat 3 (function call<|role_sep|>)',
  markers: G3_MARKERS,
  toolMarkers: G3_TOOL_MARKERS,
  matchesModel: (modelId) => {
    const ver = version(modelId);
    return ver !== undefined && ver.minor < 5;
  },
  detectText: (text) =>
    scoreText(text, [
      [/function call<\|role_sep\|>\s*\{/, 12],
      [/<\|function_call\|>\s*\{/, 12],
      [MSG_SEP, 2],
    ]),
  render: (m, opts) => {
    const { out, close } = renderStart(m, opts, { newlines: false });
    m.toolCalls.forEach((c, i) => {
      out.wrap(
        'call',
        () => {
          out.put(`${MSG_SEP}\n\n${HEADER}${ROLE_SEP}\n`);
          renderObjectCall(out, c, i, 'arguments', close.call(i));
        },
        i,
      );
    });
    if (close.turn) out.put(EOS, 'end');
    return out.done();
  },
  parse: (text) => parseTurn(G3_GRAMMAR, text),
};

const G3_VLLM = 'vllm-project/vllm vllm/tool_parsers/gigachat3_tool_parser.py';
const G3_SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/gigachat3_detector.py';
const oneJson =
  'no call; everything after the header is read as one JSON object and does not parse, so the whole output, markup included, is content';
const gigachat3Verdicts: FamilyVerdicts = {
  family: 'gigachat3',
  engines: {
    vllm: {
      release: 'main @ 0487d5c2',
      parser: 'gigachat3',
      code: G3_VLLM,
      evidence: `${G3_VLLM} extract_tool_calls @ 0487d5c2; tests/tool_parsers/test_gigachat3_tool_parser.py @ 102ebe11`,
      note: 'read from the code; one call per turn: a second call in the same turn leaves both engines with no call',
    },
    sglang: {
      release: 'main @ 41bcc1ce',
      parser: 'gigachat3',
      code: G3_SGLANG,
      evidence: `${G3_SGLANG} detect_and_parse @ 41bcc1ce`,
      note: 'read from the code; the same reading as vLLM',
    },
    dynamo: noParserInfo('3.0.0', DYNAMO_NONE),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: "the call object's closing } missing, its arguments complete",
      verdicts: { vllm: v('content', oneJson), sglang: v('content', oneJson), dynamo },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: { vllm: v('content', oneJson), sglang: v('content', oneJson), dynamo },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'several calls, the last lacking only its closing }',
      verdicts: {
        vllm: v(
          'content',
          'no call at all; the text after the first header holds every call and is no one JSON object, so the whole output is content',
        ),
        sglang: v(
          'content',
          'no call at all; the text after the first header holds every call and is no one JSON object, so the whole output is content',
        ),
        dynamo,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: v('content', 'no call at all; the whole output, complete call included, is content'),
        sglang: v('content', 'no call at all; the whole output, complete call included, is content'),
        dynamo,
      },
    },
  ],
};

export const gigachat3: Family<'gigachat3'> = {
  id: 'gigachat3',
  format: gigachat3Format,
  verdicts: gigachat3Verdicts,
  tokenizer: { repo: 'ai-sage/GigaChat3-10B-A1.8B' },
  repair: {
    openers: [MSG_SEP, FC_INLINE],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

// ---------------------------------------------------------------------------------------------------------------
// GigaChat 3.5 (GCML)

const tag = (name: string) => `<｜GCML｜${name}`;
const shut = (name: string) => `</｜GCML｜${name}>`;
const BEGIN = `${tag('tool_calls')}>`;
const END = shut('tool_calls');
const INVOKE_OPEN = `${tag('invoke')} name="`;
const INVOKE_CLOSE = shut('invoke');
const PARAM_OPEN = `${tag('parameter')} name="`;
const PARAM_CLOSE = shut('parameter');

const G35_TOOL_MARKERS = [BEGIN, END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE];
const G35_MARKERS = [END, INVOKE_CLOSE, PARAM_CLOSE, THINK_CLOSE, EOS, BEGIN, INVOKE_OPEN, PARAM_OPEN, THINK_OPEN, MSG_SEP, ROLE_SEP];
const G35_ENDS = [EOS, MSG_SEP];

const PARAMS: ParamGrammar = {
  headStart: PARAM_OPEN,
  close: PARAM_CLOSE,
  newlines: false,
  head: (out, pos, to) => {
    if (!out.text.startsWith(PARAM_OPEN, pos)) return undefined;
    const h = attrHead(out, pos, PARAM_OPEN, to);
    // vLLM reads a parameter without `string="…"` as a string.
    const typed = /string\s*=\s*"(true|false)"/i.exec(h.attrs)?.[1]?.toLowerCase();
    return { key: out.text.slice(...h.name), valueStart: h.closed ? h.end : to, type: typed === 'false' ? 'json' : 'string' };
  },
};

const BODY_STOPS = [INVOKE_CLOSE, INVOKE_OPEN, END, BEGIN, ...G35_ENDS];

function invoke(out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number {
  return invokeCall(out, start, sectioned, {
    invokeOpen: INVOKE_OPEN,
    invokeClose: INVOKE_CLOSE,
    sectionBegin: BEGIN,
    bodyStops: BODY_STOPS,
    markers: G35_MARKERS,
    params: PARAMS,
    head: attrHead,
  });
}

const SECTION: SectionGrammar = { ends: [END], callBegin: INVOKE_OPEN, breaks: [...G35_ENDS, BEGIN], markers: G35_MARKERS, call: invoke };

const G35_GRAMMAR: TurnGrammar = {
  family: 'gigachat35',
  markers: G35_MARKERS,
  toolMarkers: G35_TOOL_MARKERS,
  // With reasoning on, the generation prompt ends with <think>.
  implicitThink: true,
  ends: G35_ENDS,
  starters: [
    { marker: BEGIN, parse: (out, start, hit) => parseSection(out, SECTION, start, hit) },
    { marker: INVOKE_OPEN, parse: (out, start) => parseSection(out, SECTION, start) },
  ],
};

const G35_RENDER: InvokeRender = {
  sectionBegin: BEGIN,
  sectionEnd: END,
  invokeOpen: INVOKE_OPEN,
  invokeClose: INVOKE_CLOSE,
  end: EOS,
  thinkNewlines: false,
  beforeSection: '\n\n',
  param: (k, val, isString) => `${PARAM_OPEN}${k}" string="${isString}">${val}${PARAM_CLOSE}`,
};

const gigachat35Format: ModelFormat = {
  id: 'gigachat35',
  displayName: 'GigaChat 3.5 (GCML)',
  markers: G35_MARKERS,
  toolMarkers: G35_TOOL_MARKERS,
  sectionEnd: END,
  matchesModel: (modelId) => {
    const ver = version(modelId);
    return ver !== undefined && ver.minor >= 5;
  },
  detectText: (text) =>
    scoreText(text, [
      [BEGIN, 12],
      [END, 9],
      [INVOKE_OPEN, 6],
      [PARAM_OPEN, 2],
    ]),
  render: (m, opts) => renderInvokes(G35_RENDER, m, opts),
  parse: (text) => parseTurn(G35_GRAMMAR, text),
};

const G35_VLLM = 'vllm-project/vllm vllm/tool_parsers/gigachat35_tool_parser.py';
const G35_SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/gigachat35_detector.py';
const g35Cases: VerdictCase[] = [
  {
    id: '5.a',
    class: 'unclosed-complete',
    calls: 'single',
    what: `${END} missing after a complete invoke`,
    verdicts: {
      vllm: v('recovered', 'the closed invoke is delivered; the block may run to the end of the text'),
      sglang: v('recovered', 'the closed invoke is delivered; the block may run to the end of the text'),
      dynamo,
    },
  },
  {
    id: '5.b',
    class: 'orphan-close',
    calls: 'single',
    what: `invokes and ${END} without ${BEGIN}`,
    verdicts: {
      vllm: v('content', `no call; without ${BEGIN} the whole output is content`),
      sglang: v('content', `no call; without ${BEGIN} the whole output is content`),
      dynamo,
    },
  },
  {
    id: '5.c',
    class: 'unclosed-truncated',
    calls: 'single',
    what: 'output stopped inside a parameter value',
    verdicts: {
      vllm: v('content', `no call; an invoke counts only with its ${INVOKE_CLOSE}, so the whole output, markup included, is content`),
      sglang: v('content', `no call; an invoke counts only with its ${INVOKE_CLOSE}, so the whole output, markup included, is content`),
      dynamo,
    },
  },
  {
    id: '5.d',
    class: 'unclosed-complete',
    calls: 'multi',
    what: `the last of several invokes lacks its ${INVOKE_CLOSE}`,
    verdicts: {
      vllm: v('partial', 'the closed invokes are delivered, the last one dropped; content is the text before the block'),
      sglang: v('partial', 'the closed invokes are delivered, the last one dropped; content is the text before the block'),
      dynamo,
    },
  },
  {
    id: '5.e',
    class: 'unclosed-truncated',
    calls: 'multi',
    what: 'the last of several invokes cut off mid-value',
    verdicts: {
      vllm: v('partial', 'the closed invokes are delivered, the cut one dropped'),
      sglang: v('partial', 'the closed invokes are delivered, the cut one dropped'),
      dynamo,
    },
  },
];

const gigachat35Verdicts: FamilyVerdicts = {
  family: 'gigachat35',
  engines: {
    vllm: {
      release: 'main @ 053521db',
      parser: 'gigachat35',
      code: G35_VLLM,
      evidence: `${G35_VLLM} extract_tool_calls, _parse_invocations @ 053521db; tests/tool_parsers/test_gigachat35_tool_parser.py @ 053521db`,
      note: 'read from the code; not measured',
    },
    sglang: {
      release: 'main @ 166b30d4',
      parser: 'gigachat35',
      code: G35_SGLANG,
      evidence: `${G35_SGLANG} detect_and_parse @ 166b30d4`,
      note: 'read from the code; SGLang drops a parameter that has no string="true|false" attribute',
    },
    dynamo: noParserInfo('3.0.0', DYNAMO_NONE),
  },
  cases: g35Cases,
};

export const gigachat35: Family<'gigachat35'> = {
  id: 'gigachat35',
  format: gigachat35Format,
  verdicts: gigachat35Verdicts,
  tokenizer: { repo: 'ai-sage/GigaChat3.5-432B-A28B' },
  repair: {
    openers: [BEGIN, INVOKE_OPEN, PARAM_OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
