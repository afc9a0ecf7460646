/**
 * Tencent Hunyuan HY-v4 ('hunyuan') and HY-v3 ('hunyuan-v3'): GLM-style tags inside a `<tool_calls>` section, every
 * structural token carrying the checkpoint's suffix.
 *
 *   REASONING</think:S>CONTENT<tool_calls:S>\n<tool_call:S>NAME<arg_key:S>K</arg_key:S><arg_value:S>V</arg_value:S></tool_call:S>\n</tool_calls:S><｜hy_eos:S｜>
 *   REASONING</think:S>CONTENT<tool_calls:S>\n<tool_call:S>NAME<tool_sep:S>\n<arg_key:S>K</arg_key:S>\n<arg_value:S>V</arg_value:S>\n</tool_call:S>\n</tool_calls:S><｜hy_eos:S｜>
 *
 * The first line is HY-v4 (tencent/Hy4-preview: no whitespace inside a call, no `<tool_sep>`), the second HY-v3
 * (tencent/Hy3, Hy3-preview: one part per line, `<tool_sep>` after the name); vLLM
 * tests/tool_parsers/test_hy_truncated_stream.py mirrors both checkpoints' tokens, SGLang `hunyuan_detector.py` gives
 * the HY-v3 layout. The suffix (`:opensource` on Hy4-preview and on the released Hy3 tokenizer, `:6124c78e` in vLLM's
 * docstring, none on the Hy3 preview tokenizer) is the same on every token of a checkpoint, closers included
 * (`</tool_call:S>`): vLLM `detect_token_suffix` reads it from the vocab as `(:[^\s>]+)?` and SGLang
 * `resolve_hunyuan_tokens` as `(?::[^>]+)?`, and both then know that one spelling only. Tokenscope cannot see the vocab,
 * so it reads the suffix from the output (the `<tool_calls…>` that opens the calls, else the first structural tag, else
 * the end of turn) and flags tags of the call markup spelled with another suffix (`malformed-call`): the engines would
 * read them as text. `<think:S>` ends the prompt, so the output usually starts inside the reasoning and shows only
 * `</think:S>`. Render writes the `:opensource` tokens, and `<｜hy_eos:S｜>` (fullwidth bars) ends the turn.
 *
 * Values are data: a `<tool_call…>` inside a value its `</arg_value…>` closes does not end the call. Arguments come back
 * as canonical compact JSON (values typed by the request's schema elsewhere, as vLLM's `_parse_value` does).
 *
 * What the engines do with broken outputs, read from their code:
 * - vLLM `hy_v4` (HYV4ToolParser, built `strict=True`): the section must open and close and every `<tool_call>` be
 *   closed, or the whole output, complete calls included, comes back as content.
 * - vLLM `hy_v3` (HYV3ToolParser): complete calls, plus one unterminated call after the last `</tool_call>`, whose
 *   complete `<arg_key>`/`<arg_value>` pairs are kept and whose cut pair is lost.
 * - SGLang `hunyuan` (HunyuanDetector): complete `<tool_call>…</tool_call>` spans only; an unterminated call is dropped,
 *   and the content is the text before `<tool_calls>`.
 * - Dynamo: no Hunyuan family in its parser list.
 */
import type { AssistantMessage, FamilyId, NativeText, ParsedNative } from '../model';
import { noParser, noParserInfo, type FamilyVerdicts } from './shared/verdicts';
import {
  endsInMarker,
  jsonToParams,
  modelKey,
  parseSection,
  parseTurn,
  renderParams,
  renderStart,
  scoreText,
  skipWs,
  trimRange,
  xmlCall,
  type MarkerHit,
  type ParamGrammar,
  type ParseOut,
  type SectionGrammar,
  type TurnGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { Family } from './types';

/** The suffix the released tokenizers carry on their structural tokens (Hy4-preview: vLLM test_hy_v4_tool_parser.py `SUFFIX`; Hy3: SGLang `resolve_hunyuan_tokens`). */
const HY4_SUFFIX = ':opensource';

/** A structural tag of either version, with its suffix: `<tool_call:6124c78e>`, `</arg_value>`. */
const TAG = /<\/?(tool_calls|tool_call|tool_sep|arg_key|arg_value|think)(:[^\s<>]*)?>/g;
/** The end of the turn, with its suffix. */
const EOS = /<｜hy_eos(:[^\s<>｜]*)?｜>/;
/** A structural tag cut off by the end of the output. */
const CUT_TAG = /<\/?(?:tool_calls|tool_call|tool_sep|arg_key|arg_value|think)(:[^\s<>]*)?$/;

/** The markers of one checkpoint suffix. */
interface Tags {
  suffix: string;
  sectionOpen: string;
  sectionClose: string;
  callOpen: string;
  callClose: string;
  sep: string;
  keyOpen: string;
  keyClose: string;
  valueOpen: string;
  valueClose: string;
  thinkOpen: string;
  thinkClose: string;
  /** The end of the turn, `<｜hy_eos:S｜>`. */
  end: string;
  markers: string[];
  toolMarkers: string[];
}

function tags(suffix: string): Tags {
  const t = (name: string) => `<${name}${suffix}>`;
  const c = (name: string) => `</${name}${suffix}>`;
  const toolMarkers = [
    t('tool_calls'),
    c('tool_calls'),
    t('tool_call'),
    c('tool_call'),
    t('tool_sep'),
    t('arg_key'),
    c('arg_key'),
    t('arg_value'),
    c('arg_value'),
  ];
  // Closers first, so a cut fragment reads as the closer it most likely is.
  const end = `<｜hy_eos${suffix}｜>`;
  const markers = [
    c('tool_calls'),
    c('tool_call'),
    c('arg_value'),
    c('arg_key'),
    c('think'),
    end,
    t('tool_calls'),
    t('tool_call'),
    t('tool_sep'),
    t('arg_key'),
    t('arg_value'),
    t('think'),
  ];
  return {
    suffix,
    sectionOpen: t('tool_calls'),
    sectionClose: c('tool_calls'),
    callOpen: t('tool_call'),
    callClose: c('tool_call'),
    sep: t('tool_sep'),
    keyOpen: t('arg_key'),
    keyClose: c('arg_key'),
    valueOpen: t('arg_value'),
    valueClose: c('arg_value'),
    thinkOpen: t('think'),
    thinkClose: c('think'),
    end,
    markers,
    toolMarkers,
  };
}

/** Which version: HY-v3 writes `<tool_sep>` after the name, HY-v4 does not. */
interface Version {
  family: FamilyId;
  displayName: string;
  sep: boolean;
  /** The suffix render writes. */
  renderSuffix: string;
}

/**
 * The checkpoint suffix as the output shows it: that of the `<tool_calls…>` opening the calls, else of the first
 * structural tag, else of the end of the turn (a tag cut off at the end counts: its suffix so far).
 */
function suffixOf(text: string): string {
  let first: string | undefined;
  TAG.lastIndex = 0;
  for (let m = TAG.exec(text); m; m = TAG.exec(text)) {
    const suffix = m[2] ?? '';
    if (m[1] === 'tool_calls' && !m[0].startsWith('</') && /^\s*<tool_call[:>]/.test(text.slice(TAG.lastIndex, TAG.lastIndex + 64)))
      return suffix;
    first ??= suffix;
  }
  if (first !== undefined) return first;
  const eos = EOS.exec(text);
  if (eos) return eos[1] ?? '';
  return CUT_TAG.exec(text)?.[1] ?? '';
}

function makeFormat(
  v: Version,
  matches: (key: string) => boolean,
  signatures: readonly (readonly [string | RegExp, number])[],
): ModelFormat {
  const cache = new Map<string, { t: Tags; grammar: TurnGrammar }>();
  const forSuffix = (suffix: string) => {
    let hit = cache.get(suffix);
    if (!hit) {
      if (cache.size > 16) cache.clear();
      const t = tags(suffix);
      hit = { t, grammar: turnGrammar(v, t) };
      cache.set(suffix, hit);
    }
    return hit;
  };
  // The markers the checks look for: the unsuffixed tokens and the Hy4-preview ones.
  const plain = tags('');
  const hy4 = tags(HY4_SUFFIX);
  return {
    id: v.family,
    displayName: v.displayName,
    // Each checkpoint spells its tags with its own suffix (`<tool_call:6124c78e>`): no fixed marker list holds them
    // all, so detection rests on the suffixed shapes `detectText` scores.
    markerless: true,
    markers: [...new Set([...hy4.markers, ...plain.markers])],
    toolMarkers: [...new Set([...hy4.toolMarkers, ...plain.toolMarkers])],
    sectionEnd: hy4.sectionClose,
    matchesModel: (modelId) => matches(modelKey(modelId)),
    detectText: (text) => scoreText(text, signatures),
    render: (m, opts) => render(v, tags(v.renderSuffix), m, opts),
    parse: (text) => {
      const { t, grammar } = forSuffix(suffixOf(text));
      return otherSuffixes(parseTurn(grammar, text), t);
    },
  };
}

function turnGrammar(v: Version, t: Tags): TurnGrammar {
  const section: SectionGrammar = {
    ends: [t.sectionClose],
    callBegin: t.callOpen,
    breaks: [t.sectionOpen, t.end],
    markers: t.markers,
    call: (out, start, _bodyStart, sectioned) => call(out, start, sectioned, v, t),
  };
  return {
    family: v.family,
    markers: t.markers,
    toolMarkers: t.toolMarkers,
    implicitThink: true,
    think: { open: t.thinkOpen, close: t.thinkClose },
    ends: [t.end],
    starters: [
      { marker: t.sectionOpen, parse: (out, start, hit) => parseSection(out, section, start, hit) },
      { marker: t.callOpen, parse: (out, start) => parseSection(out, section, start) },
    ],
  };
}

function params(t: Tags): ParamGrammar {
  return {
    headStart: t.keyOpen,
    close: t.valueClose,
    newlines: false,
    head: (out, pos, to) => {
      const { text } = out;
      if (!text.startsWith(t.keyOpen, pos)) return undefined;
      const keyStart = pos + t.keyOpen.length;
      const keyEnd = out.find([t.keyClose], keyStart, to)?.start;
      // A key cut off (or never closed) leaves no value: it ends the body.
      if (keyEnd === undefined) return { key: text.slice(keyStart, to).trim(), valueStart: to };
      const at = skipWs(text, keyEnd + t.keyClose.length, to);
      const valueStart = text.startsWith(t.valueOpen, at) ? at + t.valueOpen.length : at;
      return { key: text.slice(keyStart, keyEnd).trim(), valueStart };
    },
  };
}

const PARAMS = new WeakMap<Tags, ParamGrammar>();

/** One `<tool_call…>` from `start`; `sectioned` is false when no `<tool_calls…>` opened. */
function call(out: ParseOut, start: number, sectioned: boolean, v: Version, t: Tags): number {
  const { text } = out;
  const stop = bodyStop(out, start + t.callOpen.length, t);
  const to = stop ? stop.start : text.length;
  const nameStart = start + t.callOpen.length;
  const nameStop = out.find(['\n', '<'], nameStart, to);
  const nameRange = trimRange(text, nameStart, nameStop ? nameStop.start : to);
  const defects: string[] = [];
  if (!sectioned) defects.push(`${t.callOpen} outside ${t.sectionOpen}: vLLM and SGLang read calls only after ${t.sectionOpen}`);
  let bodyStart = skipWs(text, nameRange[1], to);
  const sep = [t.sep, '<tool_sep>', ...(t.suffix ? [] : [`<tool_sep${HY4_SUFFIX}>`])].find((s) => text.startsWith(s, bodyStart));
  if (sep) {
    bodyStart += sep.length;
    if (!v.sep) defects.push(`${sep} after the name: HY-v4 writes none, and vLLM's hy_v4 parser reads it as part of the name`);
  } else if (v.sep && nameRange[1] > nameRange[0] && (stop || (bodyStart < to && !endsInMarker(text, bodyStart, [t.sep])))) {
    defects.push(`no ${t.sep} after the name: vLLM's hy_v3 parser reads no call without it`);
  }
  if (nameRange[1] === nameRange[0] && stop) defects.push('no function name');
  let grammar = PARAMS.get(t);
  if (!grammar) PARAMS.set(t, (grammar = params(t)));
  return xmlCall(out, { start, nameRange, bodyStart, stop, closers: [t.callClose], defects }, grammar, t.markers);
}

/**
 * What ends a call's body: its closer, the next call, the section's end or another section. Inside a value that its
 * close ends, those are text (the model writing about the format); a value whose close never comes before other
 * markup ends at the first of them.
 */
function bodyStop(out: ParseOut, from: number, t: Tags): MarkerHit | undefined {
  const stops = [t.callClose, t.callOpen, t.sectionClose, t.sectionOpen];
  let pos = from;
  for (;;) {
    const hit = out.find([...stops, t.valueOpen], pos);
    if (!hit || hit.marker !== t.valueOpen) return hit;
    const close = out.find([t.valueClose], hit.end);
    const markup = out.find([t.callClose, t.sectionClose, t.keyOpen, t.keyClose, t.valueOpen], hit.end);
    if (!close || (markup && markup.start < close.start)) return out.find(stops, hit.end);
    pos = close.end;
  }
}

/**
 * Structural tags of the call markup spelled with another suffix than the checkpoint's: in a call section outside the
 * values, or a suffixed `<tool_calls…>` anywhere outside the reasoning. The engines, which know one spelling, read them
 * as text.
 */
function otherSuffixes(parsed: ParsedNative, t: Tags): ParsedNative {
  const { text } = parsed;
  const sections = parsed.segments.filter((s) => s.kind === 'section');
  const reasoning = parsed.segments.filter((s) => s.kind === 'reasoning');
  const values = valueSpans(text, t);
  const inside = (spans: readonly { start: number; end: number }[], at: number) => spans.some((s) => at >= s.start && at < s.end);
  const odd: { tag: string; start: number; end: number }[] = [];
  TAG.lastIndex = 0;
  for (let m = TAG.exec(text); m; m = TAG.exec(text)) {
    const suffix = m[2] ?? '';
    if (suffix === t.suffix || m[1] === 'think') continue;
    const at = m.index;
    const inSection = inside(sections, at) && !inside(values, at);
    const strayOpener = m[1] === 'tool_calls' && suffix !== '' && !inside(reasoning, at) && !inside(values, at);
    if (inSection || strayOpener) odd.push({ tag: m[0], start: at, end: at + m[0].length });
  }
  if (!odd.length) return parsed;
  const tagsSeen = [...new Set(odd.map((o) => o.tag))];
  const shown = tagsSeen.length > 3 ? `${tagsSeen.slice(0, 3).join(', ')} and ${tagsSeen.length - 3} more` : tagsSeen.join(', ');
  const spelled = t.suffix ? `the suffix ${t.suffix}` : 'no suffix';
  parsed.problems.push({
    code: 'malformed-call',
    message: `${shown} where the other tool-call tags carry ${spelled}: vLLM and SGLang know one spelling of each token (the tokenizer's) and read these as text`,
    start: odd[0].start,
    end: odd[odd.length - 1].end,
    marker: odd[0].tag,
  });
  parsed.problems.sort((a, b) => a.start - b.start);
  return parsed;
}

/** The spans of the values `<arg_value…>`…`</arg_value…>` written with the checkpoint's suffix. */
function valueSpans(text: string, t: Tags): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let pos = 0;
  for (;;) {
    const open = text.indexOf(t.valueOpen, pos);
    if (open < 0) return spans;
    const close = text.indexOf(t.valueClose, open + t.valueOpen.length);
    const end = close < 0 ? text.length : close;
    spans.push({ start: open + t.valueOpen.length, end });
    if (close < 0) return spans;
    pos = close + t.valueClose.length;
  }
}

/** The chat template's layout: HY-v4 writes a call without whitespace, HY-v3 one part per line. */
function render(v: Version, t: Tags, m: AssistantMessage, opts: RenderOptions | undefined): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false, tags: { open: t.thinkOpen, close: t.thinkClose } });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(`${t.sectionOpen}\n`);
      m.toolCalls.forEach((c, i) => {
        out.wrap(
          'call',
          () => {
            out.put(t.callOpen).put(c.name, 'call-name', i);
            if (v.sep) {
              out.put(`${t.sep}\n`);
              renderParams(out, i, c.arguments, (k, val) => `${t.keyOpen}${k}${t.keyClose}\n${t.valueOpen}${val}${t.valueClose}`);
            } else {
              // Arguments that are not parameters go on their own line, so the name still ends.
              if (c.arguments.trim() && !jsonToParams(c.arguments)) out.put('\n');
              renderParams(out, i, c.arguments, (k, val) => `${t.keyOpen}${k}${t.keyClose}${t.valueOpen}${val}${t.valueClose}`, '');
            }
            if (close.call(i)) out.put(t.callClose);
          },
          i,
        );
        if (close.call(i)) out.put('\n');
      });
      if (close.turn) out.put(t.sectionClose);
    });
  }
  if (close.turn) out.put(t.end, 'end');
  return out.done();
}

const SECTION_THEN_CALL = /<tool_calls(?::[^\s<>]+)?>\s*<tool_call(?::[^\s<>]+)?>/;

const hy4 = makeFormat(
  { family: 'hunyuan', displayName: 'Hunyuan HY-v4', sep: false, renderSuffix: HY4_SUFFIX },
  // tencent/Hy4-preview, Hy4-preview-FP8, OpenRouter tencent/hy4-preview; not HY-3D (3D generation) nor Hunyuan-A13B.
  (key) => /(?:^|[^a-z0-9])(?:hy|hunyuan)-?v?4(?![0-9a-z])/.test(key),
  [
    [SECTION_THEN_CALL, 25],
    [/<tool_calls:[^\s<>]+>/, 10],
    [/<arg_key:[^\s<>]+>/, 5],
  ],
);

const hy3 = makeFormat(
  { family: 'hunyuan-v3', displayName: 'Hunyuan HY-v3', sep: true, renderSuffix: HY4_SUFFIX },
  // tencent/Hy3, Hy3-preview, Hy3-FP8, OpenRouter tencent/hy3-preview(:free); not HY-3D nor Hunyuan-A13B.
  (key) => /(?:^|[^a-z0-9])(?:hy|hunyuan)-?v?3(?![0-9a-z])/.test(key),
  [
    [/<tool_sep(?::[^\s<>]+)?>/, 30],
    [SECTION_THEN_CALL, 25],
  ],
);

const DYNAMO = noParserInfo('3.0.0', 'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe47d0 (no Hunyuan family)');
const NO_DYNAMO = noParser('Dynamo lists no Hunyuan parser');
const SGLANG_CODE = 'sgl-project/sglang python/sglang/srt/function_call/hunyuan_detector.py';
const SGLANG_EVIDENCE = `${SGLANG_CODE} @ 03fee1168fd7 (HunyuanDetector.detect_and_parse: tool_call_regex findall, normal_text = the text before <tool_calls>)`;

const v4Verdicts: FamilyVerdicts = {
  family: 'hunyuan',
  engines: {
    vllm: {
      release: 'main @ f1bf7bd0',
      parser: 'hy_v4',
      code: 'vllm-project/vllm vllm/tool_parsers/hy_v4_tool_parser.py',
      evidence:
        'vllm-project/vllm vllm/tool_parsers/hy_v4_tool_parser.py @ f1bf7bd07a11 (HYV4ToolParser builds its extractor strict=True; _extract_tool_calls_strict); tests/tool_parsers/test_hy_v4_tool_parser.py @ ec305d0260b9 (MALFORMED: missing_tool_calls_end, unbalanced_tool_call → raw content)',
      note: 'read from the code and its tests, not from a recorded run; non-streaming requests',
    },
    sglang: {
      release: 'main @ 03fee116',
      parser: 'hunyuan',
      code: SGLANG_CODE,
      evidence: `${SGLANG_EVIDENCE}; test/registered/unit/function_call/test_hunyuan_detector.py @ 0ff9c986c7d2 (test_hy4_format_without_tool_separator)`,
      note: 'inferred: the detector read (03fee116) still wants <tool_sep> after the name; its later test reads the HY-v4 form without it, and the verdicts assume the later version keeps reading complete <tool_call>…</tool_call> spans only',
    },
    dynamo: DYNAMO,
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</tool_call:S> and </tool_calls:S> missing after a complete <arg_value:S>',
      verdicts: {
        vllm: {
          outcome: 'content',
          text: 'no call; the whole output, markup included, is content (the strict parser wants </tool_calls> and every </tool_call>)',
        },
        sglang: { outcome: 'dropped', text: 'no call; content is only the text before <tool_calls>' },
        dynamo: NO_DYNAMO,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside <arg_value:S>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole output, markup included, is content' },
        sglang: { outcome: 'dropped', text: 'no call; content is only the text before <tool_calls>' },
        dynamo: NO_DYNAMO,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only its closers',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all: the whole output, the complete first call included, is content' },
        sglang: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        dynamo: NO_DYNAMO,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all: the whole output, the complete first call included, is content' },
        sglang: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        dynamo: NO_DYNAMO,
      },
    },
  ],
};

const V3_CODE = 'vllm-project/vllm vllm/frontend/processing/tool_parsers/hy_v3_tool_parser.py';

const v3Verdicts: FamilyVerdicts = {
  family: 'hunyuan-v3',
  engines: {
    vllm: {
      release: 'main @ 055e47c2',
      parser: 'hy_v3',
      code: V3_CODE,
      evidence: `${V3_CODE} @ 055e47c28003 (HYV3ToolParser._extract_tool_calls: tool_call_regex, then tool_call_portion_regex on the text after the last </tool_call>)`,
      note: 'read from the code, not from a recorded run; non-streaming requests',
    },
    sglang: {
      release: 'main @ 03fee116',
      parser: 'hunyuan',
      code: SGLANG_CODE,
      evidence: SGLANG_EVIDENCE,
      note: 'read from the code, not from a recorded run',
    },
    dynamo: DYNAMO,
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '</tool_call> and </tool_calls> missing after a complete <arg_value>',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the call is delivered (read up to the end of the output)' },
        sglang: { outcome: 'dropped', text: 'no call; content is only the text before <tool_calls>' },
        dynamo: NO_DYNAMO,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside <arg_value>',
      verdicts: {
        vllm: { outcome: 'cut-call-delivered', text: 'the call is delivered without its cut argument (here with {})' },
        sglang: { outcome: 'dropped', text: 'no call; content is only the text before <tool_calls>' },
        dynamo: NO_DYNAMO,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only its closers',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'both calls are delivered' },
        sglang: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        dynamo: NO_DYNAMO,
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'cut-call-delivered', text: 'both calls are delivered, the cut one without its cut argument' },
        sglang: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
        dynamo: NO_DYNAMO,
      },
    },
  ],
};

export const hunyuan: Family<'hunyuan'> = {
  id: 'hunyuan',
  format: hy4,
  verdicts: v4Verdicts,
  tokenizer: { repo: 'tencent/Hy4-preview' },
  repair: { openers: ['<tool_calls', '<tool_call'], stripped: [], arguments: 'tagged', callIds: 'digest' },
};

export const hunyuanV3: Family<'hunyuan-v3'> = {
  id: 'hunyuan-v3',
  format: hy3,
  verdicts: v3Verdicts,
  tokenizer: { repo: 'tencent/Hy3-preview' },
  repair: { openers: ['<tool_calls', '<tool_call'], stripped: [], arguments: 'tagged', callIds: 'digest' },
};
