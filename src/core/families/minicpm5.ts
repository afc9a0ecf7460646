/**
 * MiniCPM 4 (XML) and MiniCPM 5 ('minicpm5'): bare `<function>` blocks, one per call, among the text.
 *
 *   <think>\nREASONING\n</think>\n\nCONTENT\n<function name="NAME"><param name="K">V</param>…</function><|im_end|>
 *
 * One grammar for both: SGLang `minicpm4_xml_detector.py` (MiniCPM4XmlFormatDetector, "MiniCPM-4 models (V3 schema)
 * adapted to the new chat template") and `minicpm5_detector.py` (MiniCPM5Detector) share the docstring and the code
 * (`bot_token` `<function`, blocks `<function.*?</function>`, values optionally `<![CDATA[…]]>`, the name in
 * `name="…"` or `name='…'`); vLLM `minicpm5xml_tool_parser.py` reads the same blocks. Several calls sit on their own
 * lines, with text between them. A CDATA value is the text inside it. Values come back as canonical compact JSON
 * (`42` a number, `abc` a string), typed by the request's schema elsewhere. Reasoning is `<think>…</think>` (vLLM
 * `_strip_thinking_content`); a turn ends with `<|im_end|>`. No call ids.
 *
 * vLLM also reads two decoding artifacts, `<functionname="…">` / `<paramname="…">` (the space collapsed) and the
 * byte-level `Ġ` (U+0120) for the space (`_normalize_model_output`); SGLang's detectors do not. They are read here
 * too, and flagged.
 *
 * What the engines do with broken outputs, read from their code and tests (no conformance fixtures exist):
 * - vLLM `MiniCPM5XMLToolParser.extract_tool_calls`: only complete `<function…</function>` blocks are calls; when at
 *   least one is, `content` is None, so an unclosed last call and all narration are dropped; with none, the whole
 *   text is content. A block for a tool the request lacks, or missing a required parameter, stays text.
 * - SGLang `MiniCPM5Detector.detect_and_parse`: the same blocks; everything else, an unclosed block included, stays
 *   in the normal text.
 * - Dynamo: no MiniCPM parser.
 */
import { noParser, noParserInfo, unclosedCases, type FamilyVerdicts } from './shared/verdicts';
import {
  ParseOut,
  THINK_CLOSE,
  THINK_OPEN,
  keepParamTexts,
  modelKey,
  paramsToJson,
  parseTurn,
  renderParams,
  renderStart,
  scoreText,
  xmlCall,
  xmlParams,
  type MarkerHit,
  type ParamGrammar,
  type ParamType,
  type Starter,
  type TurnGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { AssistantMessage, NativeText } from '../model';
import type { Family } from './types';

const FUNC = '<function name=';
const FUNC_CLOSE = '</function>';
const PARAM = '<param name=';
const PARAM_CLOSE = '</param>';
const IM_END = '<|im_end|>';
const CDATA_OPEN = '<![CDATA[';
const CDATA_CLOSE = ']]>';

/** The decoding artifacts vLLM repairs (`_normalize_model_output`): the space collapsed, or written as `Ġ` (U+0120). */
const FUNC_ARTIFACTS = ['<functionname=', '<function\u0120name='];
const PARAM_HEADS = [PARAM, '<paramname=', '<param\u0120name='];

const TOOL_MARKERS = [FUNC, FUNC_CLOSE, PARAM, PARAM_CLOSE];
const MARKERS = [FUNC_CLOSE, PARAM_CLOSE, THINK_CLOSE, IM_END, FUNC, PARAM, THINK_OPEN, '<|im_start|>'];
const BODY_STOPS = [FUNC_CLOSE, FUNC, ...FUNC_ARTIFACTS, IM_END];

/** `"NAME"` or `'NAME'` then anything up to `>`, from `pos` (right after `name=`): the name range and where the head ends. */
function quoted(out: ParseOut, pos: number, to: number): { name: [number, number]; end: number; closed: boolean } {
  const { text } = out;
  const q = text[pos];
  if (q !== '"' && q !== "'") {
    const stop = out.find(['>', '\n', '<'], pos, to);
    return { name: [pos, pos], end: stop ? stop.start : to, closed: false };
  }
  const close = out.find([q, '>', '\n', '<'], pos + 1, to);
  if (close?.marker !== q) return { name: [pos + 1, close ? close.start : to], end: close ? close.start : to, closed: false };
  const gt = out.find(['>', '\n', '<'], close.end, to);
  if (gt?.marker !== '>') return { name: [pos + 1, close.start], end: gt ? gt.start : to, closed: false };
  return { name: [pos + 1, close.start], end: gt.end, closed: true };
}

const PARAMS: ParamGrammar = {
  headStart: '<param',
  close: PARAM_CLOSE,
  newlines: false,
  // vLLM refuses a call that writes a key twice (test_duplicate_param_names_invalid).
  duplicates: 'reject',
  head: (out, pos, to) => {
    const head = PARAM_HEADS.find((h) => out.text.startsWith(h, pos));
    if (!head) return undefined;
    const h = quoted(out, pos + head.length, to);
    return { key: out.text.slice(...h.name).trim(), valueStart: h.closed ? h.end : to };
  },
};

/** A CDATA section around the whole value, or undefined. */
function cdata(value: string): string | undefined {
  return value.startsWith(CDATA_OPEN) && value.endsWith(CDATA_CLOSE) ? value.slice(CDATA_OPEN.length, -CDATA_CLOSE.length) : undefined;
}

/** One `<function name="NAME">…</function>` from its head (`hit`); the artifacts are read the same way and flagged. */
function call(out: ParseOut, start: number, hit: MarkerHit): number {
  const { text } = out;
  const index = out.calls.length;
  const stop = out.find(BODY_STOPS, hit.end);
  const to = stop ? stop.start : text.length;
  const h = quoted(out, hit.end, to);
  const defects: string[] = [];
  const artifacts = [
    ...(hit.marker === FUNC ? [] : [hit.marker]),
    ...PARAM_HEADS.slice(1).filter((a) => text.slice(h.end, to).includes(a)),
  ];
  if (artifacts.length) {
    const shown = artifacts.map((a) => `'${a.replace('\u0120', 'Ġ')}…'`).join(', ');
    defects.push(
      `written ${shown}, a decoding artifact of '<function name=' / '<param name=': vLLM's minicpm5 parser repairs it, SGLang's minicpm5 detector does not and returns the block as text`,
    );
  }
  const end = xmlCall(
    out,
    {
      start,
      nameRange: h.name,
      nameUnclosed: h.closed ? undefined : '">',
      bodyStart: h.closed ? h.end : to,
      stop,
      closers: [FUNC_CLOSE],
      defects,
    },
    PARAMS,
    MARKERS,
  );
  // A CDATA value is the text inside it: read the parameters again and rebuild the arguments from them.
  if (h.closed && text.slice(h.end, end).includes(CDATA_OPEN)) {
    const { params } = xmlParams(new ParseOut(out.family, text), h.end, to, PARAMS, MARKERS);
    const read = params.map(([k, v, t]): [string, string, ParamType?] => {
      const inner = cdata(v);
      return inner === undefined ? (t ? [k, v, t] : [k, v]) : [k, inner, 'string'];
    });
    out.calls[index].arguments = paramsToJson(read);
    keepParamTexts(out.calls[index], read);
  }
  return end;
}

const STARTERS: Starter[] = [FUNC, ...FUNC_ARTIFACTS].map((marker) => ({ marker, parse: call }));

const GRAMMAR: TurnGrammar = {
  family: 'minicpm5',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  implicitThink: true,
  ends: [IM_END],
  starters: STARTERS,
};

/** A string value the grammar would not give back as written goes in CDATA (unless it holds `]]>` itself). */
function paramText(value: string, isString: boolean): string {
  if (!isString || value.includes(CDATA_CLOSE)) return value;
  const plain = !/[<&]/.test(value) && value.trim() === value && (JSON.parse(paramsToJson([['v', value]])) as { v: unknown }).v === value;
  return plain ? value : `${CDATA_OPEN}${value}${CDATA_CLOSE}`;
}

/** Reasoning, content, then one `<function>` block per line, then `<|im_end|>`. */
function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close, hasContent } = renderStart(m, opts, { newlines: true });
  m.toolCalls.forEach((c, i) => {
    if (hasContent || i > 0) out.put('\n');
    out.wrap(
      'call',
      () => {
        out.put(`${FUNC}"`).put(c.name, 'call-name', i).put('">');
        renderParams(out, i, c.arguments, (k, v, isString) => `${PARAM}"${k}">${paramText(v, isString)}${PARAM_CLOSE}`, '');
        if (close.call(i)) out.put(FUNC_CLOSE);
      },
      i,
    );
  });
  if (close.turn) out.put(IM_END, 'end');
  return out.done();
}

const format: ModelFormat = {
  id: 'minicpm5',
  displayName: 'MiniCPM 4 / 5 (<function name=…>)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // openbmb/MiniCPM4-8B, MiniCPM4-0.5B, MiniCPM4.1-8B, MiniCPM4-MCP, openbmb/MiniCPM5-1B, MiniCPM-5…; not MiniCPM-V /
  // MiniCPM-o (vision and omni models on other bases), nor MiniCPM3 and earlier (their own `<|tool_call|>` format).
  matchesModel: (modelId) => /(?:^|[^a-z])minicpm[-_]?[45](?![\d])/.test(modelKey(modelId)),
  // `<function name="…">` with a `<param name=` or `</function>` after it: Qwen3-Coder and Llama 3.1 write `<function=…>`.
  detectText: (text) =>
    scoreText(text, [
      [/<function(?: |\u0120)?name=["'][^"'<>\n]+["']\s*>/, 10],
      [/<param(?: |\u0120)?name=["'][^"'<>\n]+["']\s*>/, 6],
    ]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

const VLLM = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/minicpm5xml_tool_parser.py';
const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/minicpm5_detector.py';
const NO_DYNAMO = 'Dynamo lists no MiniCPM parser';

const verdicts: FamilyVerdicts = {
  family: 'minicpm5',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'minicpm5',
      code: VLLM,
      evidence: `${VLLM} (extract_tool_calls, _parse_function_block) @ 055e47c28003; tests/tool_parsers/test_minicpm5xml_tool_parser.py @ 08eaf4cf001a (test_incomplete_missing_function_end)`,
      note: 'read from the code, not from a recorded run; a call is kept only when its tool is in the request and its required parameters are there',
    },
    sglang: {
      release: 'main @ 042de61b',
      parser: 'minicpm5',
      code: SGLANG,
      evidence: `${SGLANG} (detect_and_parse) @ c060bc6b999959c3d06a2160d9a4cc0377749c3e; parser_names.py @ 042de61b; test/registered/unit/function_call/test_minicpm5_detector.py @ 032cfb6f206222145c6d0b377a90b89d05a3c170`,
      note: 'read from the code; older releases also register "minicpm4_xml" (minicpm4_xml_detector.py, function_call_parser.py @ b844e97b), the same code. Streamed, a block cut off at the end of the output is dropped at finish() rather than kept as text (test/registered/unit/function_call/test_minicpm5_detector_finish.py test_truncated_call_at_end_drops_protocol_block @ f140590e)',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/dynamo lib/parsers/src/tool_calling/parsers.rs get_tool_parser_map @ 0436586e; ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe47d0 (no MiniCPM)',
    ),
  },
  cases: unclosedCases(
    { dynamo: noParser(NO_DYNAMO) },
    {
      '5.a': {
        what: '</function> missing after a complete last parameter',
        verdicts: {
          vllm: { outcome: 'content', text: 'no call; with no complete <function…</function> block the whole text is content' },
          sglang: { outcome: 'content', text: 'no call; the unclosed block stays in the normal text' },
        },
      },
      '5.c': {
        what: 'output stopped inside a parameter value',
        verdicts: {
          vllm: { outcome: 'content', text: 'no call; the whole text is content' },
          sglang: { outcome: 'content', text: 'no call; the cut block stays in the normal text' },
        },
      },
      '5.d': {
        what: 'the last of several calls lacks only </function>',
        verdicts: {
          vllm: {
            outcome: 'partial',
            text: 'the closed calls are delivered; the unclosed last one and all the narration are dropped (content is None once a call is found)',
          },
          sglang: { outcome: 'mixed', text: 'the closed calls are delivered; the unclosed last block stays in the normal text as markup' },
        },
      },
      '5.e': {
        what: 'the last of several calls cut off mid-value',
        verdicts: {
          vllm: { outcome: 'partial', text: 'the closed calls are delivered; the cut one and all the narration are dropped' },
          sglang: { outcome: 'mixed', text: 'the closed calls are delivered; the cut block stays in the normal text as markup' },
        },
      },
    },
  ),
};

export const minicpm5: Family<'minicpm5'> = {
  id: 'minicpm5',
  format,
  verdicts,
  tokenizer: { repo: 'openbmb/MiniCPM5-1B' },
  repair: {
    openers: [FUNC, ...FUNC_ARTIFACTS, PARAM],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
