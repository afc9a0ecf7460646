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
 *
 * Spellings seen in the wild besides the canonical one (agent CLI issue threads: NousResearch/hermes-agent#15453
 * `< | DSML | tool_calls`, CJackHwang/ds2api#389 `<|DSML|invoke …>`, AgentFlocks/flocks#687 `<||DSML||tool_calls>`,
 * OmniRoute#14208 and ds2api tests `<｜｜DSML｜｜ calls>`): doubled bars, ASCII `|` bars, spaces around the bars, and a
 * block name of another DeepSeek version. No engine parser matches them: vLLM `parser/deepseek_v32.py` and
 * `parser/deepseek_v4.py` @ 761f1975 match the literal `｜DSML｜` terminals, SGLang `deepseekv32_detector.py`,
 * `deepseekv4_detector.py` @ 00a8f591 and `deepseekv41_detector.py` @ 03783c13 build their tags from `｜DSML｜` (V4.1: with
 * the one space), Dynamo `dsml/parser.rs` @ 1040ada8 from its configured full-width tokens. So such output is read into
 * the calls the model meant, and each of its sections is flagged `malformed-call`, naming the spelling: the serving
 * engine returned it as text.
 */
import type { FamilyId } from '../../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  attrHead,
  callUnclosed,
  expectClosers,
  invokeStarters,
  jsonValueEnd,
  modelKey,
  parseTurn,
  renderInvokes,
  scoreText,
  skipWs,
  xmlCall,
  type InvokeRender,
  type ParamGrammar,
  type ParseOut,
  type Starter,
  type TurnGrammar,
} from '../shared';
import type { ModelFormat } from '../shared/format';

const EOS = '<｜end▁of▁sentence｜>';

/** What the canonical spellings write between `<` (or `</`) and the tag name. */
const CORE = '｜DSML｜';
const CORE_V41 = '｜DSML｜ ';

/** One spelling of the DSML markup: the block name and what is written between `<` and each tag name (`core`). */
interface Spelling {
  block: string;
  core: string;
  begin: string;
  end: string;
  invokeOpen: string;
  invokeClose: string;
  paramOpen: string;
  paramClose: string;
  toolMarkers: string[];
}

function spelling(block: string, core = CORE): Spelling {
  const tag = (name: string) => `<${core}${name}`;
  const end = (name: string) => `</${core}${name}>`;
  const s = {
    begin: `${tag(block)}>`,
    end: end(block),
    invokeOpen: `${tag('invoke')} name="`,
    invokeClose: end('invoke'),
    paramOpen: `${tag('parameter')} name="`,
    paramClose: end('parameter'),
  };
  return { block, core, ...s, toolMarkers: [s.begin, s.end, s.invokeOpen, s.invokeClose, s.paramOpen, s.paramClose] };
}

/**
 * The JSON body an invoke may carry instead of parameters (SGLang `deepseekv32_detector.py` "Direct JSON", V4.1's JSON
 * body): the range of a whole JSON object that is all the body holds, or undefined.
 */
function jsonObjectBody(text: string, from: number, to: number): [number, number] | undefined {
  const at = skipWs(text, from, to);
  if (text[at] !== '{') return undefined;
  const end = jsonValueEnd(text, at, to);
  if (end < 0 || skipWs(text, end, to) !== to) return undefined;
  try {
    const v: unknown = JSON.parse(text.slice(at, end));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? [at, end] : undefined;
  } catch {
    return undefined;
  }
}

/** An invoke with a JSON body: its arguments are that object (compact), then the invoke's closer. */
function jsonInvoke(
  out: ParseOut,
  c: { start: number; name: [number, number]; json: [number, number]; closer: string; defects: string[] },
  markers: readonly string[],
): number {
  const { text } = out;
  const index = out.calls.length;
  out.addCall(text.slice(...c.name), JSON.stringify(JSON.parse(text.slice(...c.json))));
  const tail = expectClosers(out, c.json[1], [c.closer], markers, index);
  out.seg('call', c.start, tail.end, index);
  out.seg('call-name', c.name[0], c.name[1], index);
  out.seg('arguments', c.json[0], c.json[1], index);
  if (tail.missing) callUnclosed(out, index, c.start, tail.end, tail.missing, tail.expectedAt ?? tail.end);
  if (c.defects.length) out.problem('malformed-call', `call ${index}: ${c.defects.join('; ')}`, c.start, tail.end, { callIndex: index });
  return tail.end;
}

/** The section, call and parameter grammar of one spelling, inside a family whose markers are `markers`. */
function grammarOf(sp: Spelling, markers: readonly string[], variant = false): { starters: Starter[] } {
  const params: ParamGrammar = {
    headStart: sp.paramOpen,
    close: sp.paramClose,
    newlines: false,
    head: (out, pos, to) => {
      if (!out.text.startsWith(sp.paramOpen, pos)) return undefined;
      const h = attrHead(out, pos, sp.paramOpen, to);
      const typed = /string\s*=\s*"(true|false)"/.exec(h.attrs)?.[1];
      return {
        key: out.text.slice(...h.name),
        valueStart: h.closed ? h.end : to,
        type: typed === 'true' ? 'string' : typed === 'false' ? 'json' : undefined,
      };
    },
  };
  const bodyStops = [sp.invokeClose, sp.invokeOpen, sp.end, sp.begin, EOS];
  const call = (out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number => {
    const stop = out.find(bodyStops, start + sp.invokeOpen.length);
    const h = attrHead(out, start, sp.invokeOpen, stop ? stop.start : out.text.length);
    const defects = sectioned || variant ? [] : [`${sp.invokeOpen}…"> outside ${sp.begin}`];
    if (h.closed) {
      const json = jsonObjectBody(out.text, h.end, stop ? stop.start : out.text.length);
      if (json) return jsonInvoke(out, { start, name: h.name, json, closer: sp.invokeClose, defects }, markers);
    }
    return xmlCall(
      out,
      {
        start,
        nameRange: h.name,
        nameUnclosed: h.closed ? undefined : '">',
        bodyStart: h.end,
        stop,
        closers: [sp.invokeClose],
        // A variant spelling's flag already says its invokes went unparsed, block or not.
        defects,
      },
      params,
      markers,
    );
  };
  return {
    starters: invokeStarters(
      { sectionBegin: sp.begin, sectionEnd: sp.end, invokeOpen: sp.invokeOpen, invokeClose: sp.invokeClose },
      EOS,
      markers,
      call,
    ),
  };
}

const BLOCKS = ['function_calls', 'tool_calls', 'calls'] as const;
/** The version each block name belongs to. */
const BLOCK_VERSION: Record<string, string> = { function_calls: 'V3.2', tool_calls: 'V4', calls: 'V4.1' };

/**
 * Any DSML tag as written: `<` or `</`, then the bars and `DSML` (full-width or ASCII bars, one or more on each side,
 * spaces allowed around them; the `core`), then a tag name.
 */
const DSML_TAG = /<(\/?)((?:\s*[|｜]){1,3}\s*DSML(?:\s*[|｜]){1,3}\s?)(function_calls|tool_calls|calls|invoke|parameter)(?![A-Za-z_])/g;
/** The same, without the global flag (for `scoreText`), for one block name or for the invoke and parameter tags. */
const dsmlTag = (names: string) => new RegExp(`<\\/?(?:\\s*[|｜]){1,3}\\s*DSML(?:\\s*[|｜]){1,3}\\s?(?:${names})(?![A-Za-z_])`);
const ANY_DSML = /[|｜]\s*DSML\s*[|｜]/;

/** How a core differs from the canonical `｜DSML｜`, in words. */
function describeCore(core: string): string {
  const ways: string[] = [];
  if (/[|｜]\s*[|｜]\s*DSML|DSML\s*[|｜]\s*[|｜]/.test(core)) ways.push('doubled bars');
  if (core.includes('|')) ways.push('ASCII | bars instead of the full-width ｜ (U+FF5C)');
  if (/^\s|[|｜]\s+DSML|DSML\s+[|｜]/.test(core)) ways.push('spaces around the bars');
  return ways.join(', ');
}

/** A spelling found in the text that the family's parsers do not match, and what to tell the user about it. */
interface Variant {
  sp: Spelling;
  /** Why no engine reads it (without the tag, which the flag quotes as written). */
  why: string;
}

/**
 * A DSML family written in `own` spelling; `also` are spellings its models are served with too, read the same way
 * (a `deepseek-v4` model id is routed to V4.1 during its compatibility period, and Dynamo's `deepseek_v4` selector
 * accepts both: ai-dynamo/frontend-crates `parsers/v2/README.md`).
 */
function dsml(
  id: FamilyId,
  own: Spelling,
  displayName: string,
  parser: string,
  matches: (key: string) => boolean,
  also: Spelling[] = [],
): ModelFormat {
  const {
    begin: SECTION_BEGIN,
    end: SECTION_END,
    invokeOpen: INVOKE_OPEN,
    invokeClose: INVOKE_CLOSE,
    paramOpen: PARAM_OPEN,
    paramClose: PARAM_CLOSE,
  } = own;
  const TOOL_MARKERS = [...own.toolMarkers, ...also.flatMap((a) => a.toolMarkers)];
  const closers = (sp: Spelling) => [sp.end, sp.invokeClose, sp.paramClose];
  const openers = (sp: Spelling) => [sp.begin, sp.invokeOpen, sp.paramOpen];
  const MARKERS = [...closers(own), ...also.flatMap(closers), THINK_CLOSE, EOS, ...openers(own), ...also.flatMap(openers), THINK_OPEN];
  const accepted = [own, ...also];
  const acceptedCores = new Set(accepted.map((sp) => sp.core));
  // The canonical markers of the other versions: cut short or left over, they are DSML too.
  const others = [spelling('function_calls'), spelling('tool_calls'), spelling('calls', CORE_V41)].filter(
    (sp) => !accepted.some((a) => a.core === sp.core && a.block === sp.block),
  );
  const PARSE_MARKERS = [...MARKERS, ...others.flatMap(closers), ...others.flatMap(openers)];

  const grammar = (variants: Variant[]): TurnGrammar => {
    const markers = [...PARSE_MARKERS, ...variants.flatMap((v) => [...closers(v.sp), ...openers(v.sp)])];
    const flagged = variants.flatMap((v) =>
      grammarOf(v.sp, markers, true).starters.map(
        (s): Starter => ({
          ...s,
          parse: (out, start, hit) => {
            const end = s.parse(out, start, hit);
            const bare = hit.marker === v.sp.invokeOpen;
            const written = bare ? `${hit.marker.slice(0, -' name="'.length)} …>` : hit.marker;
            const block = bare ? ` (the invokes also stand outside a ${v.sp.begin} block)` : '';
            out.problem('malformed-call', `DSML written as ${written}${block}: ${v.why}`, start, Math.max(end, hit.end));
            return end;
          },
        }),
      ),
    );
    return {
      family: id,
      markers,
      toolMarkers: TOOL_MARKERS,
      implicitThink: true,
      ends: [EOS],
      starters: [...accepted.flatMap((sp) => grammarOf(sp, markers).starters), ...flagged],
    };
  };
  const plain = grammar([]);
  const cache = new Map<string, TurnGrammar>();

  /** The spellings in `text` this family's parsers do not match (none for the canonical output). */
  const variantsIn = (text: string): Variant[] => {
    if (!ANY_DSML.test(text)) return [];
    const seen = new Map<string, Variant>();
    for (const m of text.matchAll(DSML_TAG)) {
      const core = m[2];
      const name = m[3];
      const isBlock = (BLOCKS as readonly string[]).includes(name);
      if (isBlock ? accepted.some((a) => a.core === core && a.block === name) : acceptedCores.has(core)) continue;
      // Invokes and parameters of a foreign core are read inside a block of the same core named as this family names it.
      const block = isBlock ? name : own.block;
      const key = `${core}\u0000${block}`;
      if (seen.has(key)) continue;
      const canonicalCore = core === CORE || core === CORE_V41;
      const whose = isBlock ? BLOCK_VERSION[name] : core === CORE_V41 ? 'V4.1' : 'V3.2 / V4';
      const why = canonicalCore
        ? `that is DeepSeek ${whose}'s spelling; a server running ${parser} opens a section only on ${accepted.map((sp) => sp.begin).join(' or ')}, so it returns this markup as text and delivers no call`
        : `DSML with ${describeCore(core)}; vLLM, SGLang and Dynamo only match the full-width ${own.begin.slice(0, own.begin.indexOf(own.block))}… markers, so none turns this into tool calls and the agent gets the markup as text`;
      seen.set(key, { sp: spelling(block, core), why });
    }
    return [...seen.values()];
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

  const ownBlocks = accepted.map((sp) => sp.block);
  // A stream that stopped inside one of this family's tags (`<｜DSML｜function_ca`) still says whose markup it was.
  // The family's own spelling counts more than one it is also served with, so `<｜DSML｜ inv` is V4.1's.
  // Only a tag's length from the end can hold one cut short: a long text is not searched back to its start for a `<`.
  const longestTag = Math.max(...TOOL_MARKERS.map((t) => t.length));
  const cutTail = (text: string): number => {
    const from = Math.max(0, text.length - longestTag);
    const last = text.slice(from).lastIndexOf('<');
    const at = last < 0 ? -1 : from + last;
    if (at < 0 || text.length - at < '<｜DSML'.length) return 0;
    const tail = text.slice(at);
    const prefixOf = (sp: Spelling) => sp.toolMarkers.some((t) => t.length > tail.length && t.startsWith(tail));
    return prefixOf(own) ? 3 : also.some(prefixOf) ? 2 : 0;
  };

  return {
    id,
    displayName,
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    sectionEnd: SECTION_END,
    // Calls in another spelling (`<｜｜DSML｜｜ calls>`, `<|DSML|invoke …>`) and a tag cut short hold none of the canonical
    // markers, yet are this family's: detectText scores DSML sequences only, so prose never scores.
    markerless: true,
    matchesModel: (modelId) => matches(modelKey(modelId)),
    detectText: (text) =>
      scoreText(text, [
        [SECTION_BEGIN, 12],
        [SECTION_END, 9],
        [INVOKE_OPEN, 6],
        [PARAM_OPEN, 2],
        // Any spelling of this family's block name, of the invoke and parameter tags, and any DSML marker at all.
        [dsmlTag(ownBlocks.join('|')), 5],
        [dsmlTag('invoke|parameter'), 2],
        [ANY_DSML, 1],
        // V4.1's mark: a space between the marker and the tag name.
        [/[|｜] (?:calls|invoke|parameter)(?![A-Za-z_])/, also.length === 0 && own.core === CORE_V41 ? 1 : 0],
      ]) + cutTail(text),
    render: (m, opts) => renderInvokes(RENDER, m, opts),
    parse: (text) => {
      const variants = variantsIn(text);
      if (!variants.length) return parseTurn(plain, text);
      const key = variants.map((v) => `${v.sp.core}\u0000${v.sp.block}`).join('\u0001');
      let g = cache.get(key);
      if (!g) {
        g = grammar(variants);
        if (cache.size < 64) cache.set(key, g);
      }
      return parseTurn(g, text);
    },
  };
}

const V41 = spelling('calls', CORE_V41);

/**
 * Model ids: Hugging Face (`deepseek-ai/DeepSeek-V3.2`), OpenRouter (`deepseek/deepseek-v3.2-exp`) and Amazon Bedrock
 * (`deepseek.v3.2`, `deepseek.v3.2-v1:0`; Bedrock offers V3.2, V3.1 and R1: docs.aws.amazon.com bedrock/latest/userguide
 * model-cards-deepseek) spellings: the separator after `deepseek` is `-`, `.` or `_`.
 */
const DS = 'deepseek[-._](?:chat[-._])?';

export const deepseekV32 = dsml(
  'deepseek-v32',
  spelling('function_calls'),
  'DeepSeek V3.2 (DSML)',
  'the V3.2 parser (vLLM deepseek_v32, Dynamo deepseek_v3_2)',
  (key) => new RegExp(`${DS}v3\\.2`).test(key),
);
export const deepseekV4 = dsml(
  'deepseek-v4',
  spelling('tool_calls'),
  'DeepSeek V4 (DSML)',
  'the V4 parser (vLLM deepseek_v4)',
  (key) => new RegExp(`${DS}v4(?![.-]1(?!\\d))`).test(key),
  [V41],
);
export const deepseekV41 = dsml('deepseek-v41', V41, 'DeepSeek V4.1 (spaced DSML)', 'the V4.1 parser (SGLang deepseekv41)', (key) =>
  new RegExp(`${DS}v4[.-]1(?!\\d)`).test(key),
);
