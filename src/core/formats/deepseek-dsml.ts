/**
 * DeepSeek V3.2 ('deepseek-v32') and V4 ('deepseek-v4') DSML calls (`｜` is U+FF5C):
 *
 *   <think>REASONING</think>CONTENT\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="NAME">\n
 *   <｜DSML｜parameter name="K" string="true">V</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>
 *
 * V4 keeps the grammar and names the block `<｜DSML｜tool_calls>`. `string="true"` values are the text as written,
 * `string="false"` ones are JSON (the text when it is not). Sources: vLLM `vllm/tool_parsers/deepseekv32_tool_parser.py`
 * (class docstring, `_convert_params_with_schema`) and `deepseekv4_tool_parser.py` (`tool_call_start_token`); the
 * markers are not special tokens (vLLM `adjust_request` comment). An `<｜DSML｜invoke>` outside the block is read and
 * flagged (Dynamo recovers it, vLLM and SGLang leave it in content: conformance fixture 5.b/5.f/5.g).
 */
import type { AssistantMessage, FamilyId, NativeText } from '../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  modelKey,
  parseSection,
  parseTurn,
  renderParams,
  renderStart,
  scoreText,
  trimRange,
  xmlCall,
  type ParamGrammar,
  type ParseOut,
  type SectionGrammar,
  type TurnGrammar,
} from './base';
import type { ModelFormat, RenderOptions } from './types';

const INVOKE_OPEN = '<｜DSML｜invoke name="';
const INVOKE_CLOSE = '</｜DSML｜invoke>';
const PARAM_OPEN = '<｜DSML｜parameter name="';
const PARAM_CLOSE = '</｜DSML｜parameter>';
const EOS = '<｜end▁of▁sentence｜>';

/** `PREFIX` + quoted name + attributes + `>` at `pos`: the name range, the attributes, where the head ends. */
function head(out: ParseOut, pos: number, prefix: string, to: number): { name: [number, number]; attrs: string; end: number; closed: boolean } {
  const { text } = out;
  const nameStart = pos + prefix.length;
  const quote = out.find(['"', '\n', '<'], nameStart, to);
  if (quote?.marker !== '"') {
    const nameEnd = quote ? quote.start : to;
    return { name: trimRange(text, nameStart, nameEnd), attrs: '', end: nameEnd, closed: false };
  }
  const gt = out.find(['>', '\n', '<'], quote.end, to);
  if (gt?.marker !== '>') return { name: [nameStart, quote.start], attrs: '', end: gt ? gt.start : to, closed: false };
  return { name: [nameStart, quote.start], attrs: text.slice(quote.end, gt.start), end: gt.end, closed: true };
}

const PARAMS: ParamGrammar = {
  headStart: PARAM_OPEN,
  close: PARAM_CLOSE,
  newlines: false,
  head: (out, pos, to) => {
    if (!out.text.startsWith(PARAM_OPEN, pos)) return undefined;
    const h = head(out, pos, PARAM_OPEN, to);
    const typed = /string\s*=\s*"(true|false)"/.exec(h.attrs)?.[1];
    return { key: out.text.slice(...h.name), valueStart: h.closed ? h.end : to, type: typed === 'true' ? 'string' : typed === 'false' ? 'json' : undefined };
  },
};

function dsml(id: FamilyId, block: string, displayName: string, matches: (key: string) => boolean): ModelFormat {
  const SECTION_BEGIN = `<｜DSML｜${block}>`;
  const SECTION_END = `</｜DSML｜${block}>`;
  const TOOL_MARKERS = [SECTION_BEGIN, SECTION_END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE];
  const MARKERS = [SECTION_END, INVOKE_CLOSE, PARAM_CLOSE, THINK_CLOSE, EOS, SECTION_BEGIN, INVOKE_OPEN, PARAM_OPEN, THINK_OPEN];
  const BODY_STOPS = [INVOKE_CLOSE, INVOKE_OPEN, SECTION_END, SECTION_BEGIN, EOS];

  const call = (out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number => {
    const stop = out.find(BODY_STOPS, start + INVOKE_OPEN.length);
    const h = head(out, start, INVOKE_OPEN, stop ? stop.start : out.text.length);
    return xmlCall(
      out,
      {
        start,
        nameRange: h.name,
        nameUnclosed: h.closed ? undefined : '">',
        bodyStart: h.end,
        stop,
        closers: [INVOKE_CLOSE],
        defects: sectioned ? [] : [`${INVOKE_OPEN}…"> outside ${SECTION_BEGIN}`],
      },
      PARAMS,
      MARKERS,
    );
  };
  const SECTION: SectionGrammar = { ends: [SECTION_END], callBegin: INVOKE_OPEN, breaks: [EOS, SECTION_BEGIN], markers: MARKERS, call };
  const GRAMMAR: TurnGrammar = {
    family: id,
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    implicitThink: true,
    ends: [EOS],
    starters: [
      { marker: SECTION_BEGIN, parse: (out, start, hit) => parseSection(out, SECTION, start, hit) },
      { marker: INVOKE_OPEN, parse: (out, start) => parseSection(out, SECTION, start) },
    ],
  };

  const render = (m: AssistantMessage, opts?: RenderOptions): NativeText => {
    const { out, close, hasContent } = renderStart(m, opts, { newlines: false });
    if (m.toolCalls.length) {
      if (hasContent) out.put('\n\n');
      out.wrap('section', () => {
        out.put(`${SECTION_BEGIN}\n`);
        m.toolCalls.forEach((c, i) => {
          out.wrap(
            'call',
            () => {
              out.put(INVOKE_OPEN).put(c.name, 'call-name', i).put('">\n');
              renderParams(out, i, c.arguments, (k, v, isString) => `${PARAM_OPEN}${k}" string="${isString}">${v}${PARAM_CLOSE}`);
              if (close.call(i)) out.put(INVOKE_CLOSE);
            },
            i,
          );
          if (close.call(i)) out.put('\n');
        });
        if (close.turn) out.put(SECTION_END);
      });
    }
    if (close.turn) out.put(EOS, 'end');
    return out.done();
  };

  return {
    id,
    displayName,
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    sectionEnd: SECTION_END,
    matchesModel: (modelId) => matches(modelKey(modelId)),
    detectText: (text) =>
      scoreText(text, [
        [SECTION_BEGIN, 12],
        [SECTION_END, 9],
        [INVOKE_OPEN, 6],
        [PARAM_OPEN, 2],
      ]),
    render,
    parse: (text) => parseTurn(GRAMMAR, text),
  };
}

export const deepseekV32 = dsml('deepseek-v32', 'function_calls', 'DeepSeek V3.2 (DSML)', (key) => /deepseek-(?:chat-)?v3\.2/.test(key));
export const deepseekV4 = dsml('deepseek-v4', 'tool_calls', 'DeepSeek V4 (DSML)', (key) => /deepseek-(?:chat-)?v4/.test(key));
