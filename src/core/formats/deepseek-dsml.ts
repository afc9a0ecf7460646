/**
 * DeepSeek V3.2 ('deepseek-v32') and V4 ('deepseek-v4') DSML calls (`｜` is U+FF5C):
 *
 *   <think>REASONING</think>CONTENT\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="NAME">\n
 *   <｜DSML｜parameter name="K" string="true">V</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>
 *
 * V4 keeps the grammar and names the block `<｜DSML｜tool_calls>`. V4.1 ('deepseek-v41') writes a space after `<｜DSML｜`
 * and names the block `calls`: `<｜DSML｜ calls>`, `<｜DSML｜ invoke name="…">`, `<｜DSML｜ parameter name="…" string="…">`,
 * `</｜DSML｜ parameter>` (formats-2026.md "DeepSeek V4 and V4.1"; SGLang registers it as `deepseekv41`). `string="true"` values are the text as written,
 * `string="false"` ones are JSON (the text when it is not). Sources: vLLM `vllm/tool_parsers/deepseekv32_tool_parser.py`
 * (class docstring, `_convert_params_with_schema`) and `deepseekv4_tool_parser.py` (`tool_call_start_token`); the
 * markers are not special tokens (vLLM `adjust_request` comment). An `<｜DSML｜invoke>` outside the block is read and
 * flagged (Dynamo recovers it, vLLM and SGLang leave it in content: conformance fixture 5.b/5.f/5.g).
 */
import type { FamilyId } from '../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  invokeStarters,
  modelKey,
  parseTurn,
  renderInvokes,
  scoreText,
  trimRange,
  xmlCall,
  type InvokeRender,
  type ParamGrammar,
  type ParseOut,
  type Starter,
  type TurnGrammar,
} from './base';
import type { ModelFormat } from './types';

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

/** One spelling of the DSML markup: the block name and what follows `<｜DSML｜` (nothing, or V4.1's space). */
interface Spelling {
  begin: string;
  end: string;
  invokeOpen: string;
  invokeClose: string;
  paramOpen: string;
  paramClose: string;
  toolMarkers: string[];
}

function spelling(block: string, space: '' | ' '): Spelling {
  const tag = (name: string) => `<｜DSML｜${space}${name}`;
  const end = (name: string) => `</｜DSML｜${space}${name}>`;
  const s = { begin: `${tag(block)}>`, end: end(block), invokeOpen: `${tag('invoke')} name="`, invokeClose: end('invoke'), paramOpen: `${tag('parameter')} name="`, paramClose: end('parameter') };
  return { ...s, toolMarkers: [s.begin, s.end, s.invokeOpen, s.invokeClose, s.paramOpen, s.paramClose] };
}

/** The section, call and parameter grammar of one spelling, inside a family whose markers are `markers`. */
function grammarOf(sp: Spelling, markers: readonly string[]): { starters: Starter[] } {
  const params: ParamGrammar = {
    headStart: sp.paramOpen,
    close: sp.paramClose,
    newlines: false,
    head: (out, pos, to) => {
      if (!out.text.startsWith(sp.paramOpen, pos)) return undefined;
      const h = head(out, pos, sp.paramOpen, to);
      const typed = /string\s*=\s*"(true|false)"/.exec(h.attrs)?.[1];
      return { key: out.text.slice(...h.name), valueStart: h.closed ? h.end : to, type: typed === 'true' ? 'string' : typed === 'false' ? 'json' : undefined };
    },
  };
  const bodyStops = [sp.invokeClose, sp.invokeOpen, sp.end, sp.begin, EOS];
  const call = (out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number => {
    const stop = out.find(bodyStops, start + sp.invokeOpen.length);
    const h = head(out, start, sp.invokeOpen, stop ? stop.start : out.text.length);
    return xmlCall(
      out,
      {
        start,
        nameRange: h.name,
        nameUnclosed: h.closed ? undefined : '">',
        bodyStart: h.end,
        stop,
        closers: [sp.invokeClose],
        defects: sectioned ? [] : [`${sp.invokeOpen}…"> outside ${sp.begin}`],
      },
      params,
      markers,
    );
  };
  return { starters: invokeStarters({ sectionBegin: sp.begin, sectionEnd: sp.end, invokeOpen: sp.invokeOpen, invokeClose: sp.invokeClose }, EOS, markers, call) };
}

/**
 * A DSML family written in `own` spelling; `also` are spellings its models are served with too, read the same way
 * (a `deepseek-v4` model id is routed to V4.1 during its compatibility period, and Dynamo's `deepseek_v4` selector
 * accepts both: ai-dynamo/frontend-crates `parsers/v2/README.md`).
 */
function dsml(id: FamilyId, own: Spelling, displayName: string, matches: (key: string) => boolean, also: Spelling[] = []): ModelFormat {
  const { begin: SECTION_BEGIN, end: SECTION_END, invokeOpen: INVOKE_OPEN, invokeClose: INVOKE_CLOSE, paramOpen: PARAM_OPEN, paramClose: PARAM_CLOSE } = own;
  const TOOL_MARKERS = [...own.toolMarkers, ...also.flatMap((a) => a.toolMarkers)];
  const closers = (sp: Spelling) => [sp.end, sp.invokeClose, sp.paramClose];
  const openers = (sp: Spelling) => [sp.begin, sp.invokeOpen, sp.paramOpen];
  const MARKERS = [...closers(own), ...also.flatMap(closers), THINK_CLOSE, EOS, ...openers(own), ...also.flatMap(openers), THINK_OPEN];
  const GRAMMAR: TurnGrammar = {
    family: id,
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    implicitThink: true,
    ends: [EOS],
    starters: [own, ...also].flatMap((sp) => grammarOf(sp, MARKERS).starters),
  };

  const RENDER: InvokeRender = {
    sectionBegin: SECTION_BEGIN,
    sectionEnd: SECTION_END,
    invokeOpen: INVOKE_OPEN,
    invokeClose: INVOKE_CLOSE,
    end: EOS,
    thinkNewlines: false,
    beforeSection: '\n\n',
    param: (k, v, isString) => `${PARAM_OPEN}${k}" string="${isString}">${v}${PARAM_CLOSE}`,
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
    render: (m, opts) => renderInvokes(RENDER, m, opts),
    parse: (text) => parseTurn(GRAMMAR, text),
  };
}

const V41 = spelling('calls', ' ');

export const deepseekV32 = dsml('deepseek-v32', spelling('function_calls', ''), 'DeepSeek V3.2 (DSML)', (key) => /deepseek-(?:chat-)?v3\.2/.test(key));
export const deepseekV4 = dsml('deepseek-v4', spelling('tool_calls', ''), 'DeepSeek V4 (DSML)', (key) => /deepseek-(?:chat-)?v4(?![.-]1)/.test(key), [V41]);
export const deepseekV41 = dsml('deepseek-v41', V41, 'DeepSeek V4.1 (spaced DSML)', (key) => /deepseek-(?:chat-)?v4[.-]1/.test(key));
