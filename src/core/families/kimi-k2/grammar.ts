/**
 * Kimi K2 family (K2, K2-0905, K2 Thinking, K2.5, K2.6):
 *
 *   <think>REASONING</think>CONTENT<|tool_calls_section_begin|>
 *     <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{JSON}<|tool_call_end|>…
 *   <|tool_calls_section_end|><|im_end|>
 *
 * Reasoning convention: `render` writes the opening `<think>` (the turn as the chat template shows it in
 * history; K2 Thinking emits it itself). `parse` also accepts a text that starts inside the block with
 * no `<think>` (K2.5/K2.6 prompts end with `<think>`, so the completion begins with reasoning): text
 * before a `</think>` that comes ahead of any tool markup is reasoning.
 *
 * Ids: `functions.NAME:IDX`; the name is read from the id (`call-name` nests inside `call-id`). `render`
 * keeps a message's id when it is a Kimi id for that name, canonical or bare (`weather:0`, as Moonshot AI
 * returns it), so a reconstruction shows the id the provider sent; any other id is written as
 * `functions.NAME:INDEX`, and findings about it carry no range (the text does not hold it).
 *
 * Tolerance: the singular `<|tool_call_section_begin|>`/`_end|>` variant is accepted. The Fireworks leak
 * `channel_reply:0<|tool_call_argument_begin|>{…}<|tool_calls_section_end|>` (no section or call begin,
 * no `functions.` prefix) is recovered as a call and flagged `malformed-call`. Arguments end at the
 * `<|tool_call_end|>` after their balanced JSON, so markers quoted inside JSON strings (OpenCode #37297)
 * stay in the arguments. A provider that decodes with `skip_special_tokens` leaves calls as `functions.NAME:IDX{…}`
 * (`parseStrippedKimi` reads them back; the markup-in-content rule reports them, checks/markerless-leak.ts).
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  renderStart,
  callUnclosed,
  findTruncated,
  jsonBody,
  modelKey,
  parseSection,
  parseTurn,
  withPlaceholders,
  jsonValueEnd,
  scoreText,
  trimRange,
  ParseOut,
  type MarkerHit,
  type SectionGrammar,
  type TurnGrammar,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

export const SECTION_BEGIN = '<|tool_calls_section_begin|>';
export const SECTION_END = '<|tool_calls_section_end|>';
const SECTION_BEGIN_SINGULAR = '<|tool_call_section_begin|>';
const SECTION_END_SINGULAR = '<|tool_call_section_end|>';
export const CALL_BEGIN = '<|tool_call_begin|>';
export const ARG_BEGIN = '<|tool_call_argument_begin|>';
export const CALL_END = '<|tool_call_end|>';
export const IM_END = '<|im_end|>';

const SECTION_BEGINS = [SECTION_BEGIN, SECTION_BEGIN_SINGULAR];
const SECTION_ENDS = [SECTION_END, SECTION_END_SINGULAR];
const TOOL_MARKERS = [SECTION_BEGIN, SECTION_BEGIN_SINGULAR, CALL_BEGIN, ARG_BEGIN, CALL_END, SECTION_END, SECTION_END_SINGULAR];
/** Ordered so a cut-short fragment is read as the marker most often cut: the section end first. */
const MARKERS = [
  SECTION_END,
  CALL_END,
  IM_END,
  THINK_CLOSE,
  SECTION_BEGIN,
  CALL_BEGIN,
  ARG_BEGIN,
  SECTION_BEGIN_SINGULAR,
  SECTION_END_SINGULAR,
  THINK_OPEN,
  '<|im_user|>',
  '<|im_assistant|>',
  '<|im_system|>',
  '<|im_middle|>',
];
const FN_PREFIX = 'functions.';

/** Kimi K2's marker ids (`tokenizer_config.json` `added_tokens_decoder` of moonshotai/Kimi-K2-Instruct). */
const KIMI_IDS: Readonly<Record<number, string>> = {
  163586: IM_END,
  163595: SECTION_BEGIN,
  163596: SECTION_END,
  163597: CALL_BEGIN,
  163598: ARG_BEGIN,
  163599: CALL_END,
  163601: '<|im_middle|>',
  163606: THINK_OPEN,
  163607: THINK_CLOSE,
};

export const kimi: ModelFormat = {
  id: 'kimi-k2',
  displayName: 'Kimi K2',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: SECTION_END,
  matchesModel: (modelId) => /(?:^|[^a-z])kimi-k2/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [SECTION_BEGIN, 10],
      [SECTION_BEGIN_SINGULAR, 10],
      [CALL_BEGIN, 10],
      [ARG_BEGIN, 10],
      // `<|tool_call_end|>` is also LFM2's closer: alone, without any Kimi opener, it is barely a sign of Kimi.
      [CALL_END, [...SECTION_BEGINS, CALL_BEGIN, ARG_BEGIN].some((m) => text.includes(m)) ? 8 : 2],
      [SECTION_END, 8],
      [/functions\.[\w.-]+:\d+/, 3],
      [IM_END, 1],
      [/<\|reserved_token_1635(?:9[5-9])\|>/, 10],
    ]),
  markerIds: KIMI_IDS,
  render,
  parse: withPlaceholders(parse, KIMI_IDS),
};

/**
 * Shapes of Kimi K2 tool-call ids. Moonshot's format is `functions.NAME:IDX` with IDX a counter over the whole
 * conversation; SGLang's kimi_k2 parser accepts `(functions.)?NAME:IDX`, and real healthy traffic carries bare
 * `NAME:IDX` (OpenRouter / Moonshot AI: `weather:0`). Anything else is either an off-distribution model id
 * (`functions_read_1`, `functionsexec5`: parsers drop the call) or a foreign id (`call_…`) that pushes K2
 * off-distribution once echoed back in history (MoonshotAI/Kimi-K2#128, K2 Vendor Verifier README).
 */
export type KimiIdShape =
  | { kind: 'canonical'; name: string; index: number }
  | { kind: 'bare'; name: string; index: number }
  | { kind: 'malformed' }
  | { kind: 'foreign' };

const CANONICAL = /^functions\.([^\s:]+):(\d+)$/;
const BARE = /^([^\s:]+):(\d+)$/;

export function kimiIdShape(id: string): KimiIdShape {
  let m = CANONICAL.exec(id);
  if (m) return { kind: 'canonical', name: m[1], index: Number(m[2]) };
  m = BARE.exec(id);
  if (m) return { kind: 'bare', name: m[1], index: Number(m[2]) };
  // The model's own broken attempts at the format start with `functions` or carry a `:`; other ids come from servers.
  if (/^functions/.test(id) || id.includes(':') || /\s|<\|/.test(id)) return { kind: 'malformed' };
  return { kind: 'foreign' };
}

/**
 * The id written for a call: the message's own when it is a Kimi id for this call (canonical, or bare as Moonshot
 * AI returns it), so a reconstruction shows the id that came back. Any other id (a server's `call_…`, an id naming
 * another tool, the model's broken attempts) cannot sit in the markup without changing the call's name: it is
 * written as `functions.NAME:INDEX`.
 */
function kimiId(name: string, index: number, id?: string): { prefix: string; suffix: string } {
  const shape = id === undefined ? undefined : kimiIdShape(id);
  if ((shape?.kind === 'canonical' || shape?.kind === 'bare') && shape.name === name) {
    const prefix = shape.kind === 'canonical' ? FN_PREFIX : '';
    return { prefix, suffix: id!.slice(prefix.length + name.length) };
  }
  return { prefix: FN_PREFIX, suffix: `:${index}` };
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(SECTION_BEGIN);
      m.toolCalls.forEach((c, i) => {
        out.wrap(
          'call',
          () => {
            const { prefix, suffix } = kimiId(c.name, c.index, c.id);
            out.put(CALL_BEGIN);
            out.wrap('call-id', () => out.put(prefix).put(c.name, 'call-name', i).put(suffix), i);
            out.put(ARG_BEGIN).put(c.arguments, 'arguments', i);
            if (close.call(i)) out.put(CALL_END);
          },
          i,
        );
      });
      if (close.turn) out.put(SECTION_END);
    });
  }
  if (close.turn) out.put(IM_END, 'end');
  return out.done();
}

const CALL_STOPS = [ARG_BEGIN, CALL_BEGIN, CALL_END, ...SECTION_ENDS, IM_END, ...SECTION_BEGINS];
const ARG_STOPS = [CALL_END, CALL_BEGIN, ...SECTION_ENDS, IM_END];

const SECTION: SectionGrammar = {
  ends: SECTION_ENDS,
  callBegin: CALL_BEGIN,
  breaks: [IM_END, ...SECTION_BEGINS],
  markers: MARKERS,
  call: (out, start, bodyStart, sectioned) => call(out, start, bodyStart, sectioned ? [] : ['no tool-call section begin']),
  // Arguments with no call begin before them (the Fireworks leak): the id is the text just before.
  loose: (out, pos, sectioned) => {
    const next = out.find(CALL_STOPS, pos);
    if (next?.marker !== ARG_BEGIN) return undefined;
    return call(out, pos, pos, [...(sectioned ? [] : ['no tool-call section begin']), `no ${CALL_BEGIN}`]);
  },
};

const GRAMMAR: TurnGrammar = {
  family: 'kimi-k2',
  toolMarkers: TOOL_MARKERS,
  markers: MARKERS,
  implicitThink: true,
  ends: [IM_END],
  // K2 Thinking may open its section without closing `</think>`: vLLM's kimi_k2 reasoning parser and SGLang's
  // KimiK2Detector (`tool_start_token`) both end the reasoning at the section begin, so those calls still run.
  reasoningEnds: SECTION_BEGINS,
  starters: [
    ...SECTION_BEGINS.map((marker) => ({
      marker,
      parse: (out: ParseOut, start: number, hit: MarkerHit) => parseSection(out, SECTION, start, hit),
    })),
    { marker: CALL_BEGIN, parse: (out, start) => parseSection(out, SECTION, start) },
    { marker: ARG_BEGIN, lead: orphanIdStart, parse: (out, start) => parseSection(out, SECTION, start) },
  ],
};

function parse(text: string): ParsedNative {
  return parseTurn(GRAMMAR, text);
}

/** Start of the id-like word that ends at `argBegin` (not before `from`). */
function orphanIdStart(text: string, from: number, argBegin: number): number {
  let i = argBegin;
  while (i > from && /[^\s<>|]/.test(text[i - 1])) i--;
  return i;
}

/**
 * One call: `start` is where it begins (its `<|tool_call_begin|>`, or the id when that marker is missing),
 * `idStart` where the id begins. `missing` lists the markup absent before the id (then the call is
 * `malformed-call` and its other defects join that one problem). Returns where the call ends.
 */
function call(out: ParseOut, start: number, idStart: number, missing: string[]): number {
  const { text } = out;
  const index = out.calls.length;
  const defects = [...missing];
  const stop = out.find(CALL_STOPS, idStart);
  let idEnd = stop ? stop.start : text.length;
  // A marker cut short right after the id: the call's own argument marker, or one the section reports.
  const idCut = findTruncated(text, [ARG_BEGIN, ...MARKERS], idStart, idEnd).find((c) => c.end === idEnd);
  const ownCut = idCut && (idCut.marker === ARG_BEGIN || stop?.marker === ARG_BEGIN) ? idCut : undefined;
  if (idCut) idEnd = idCut.start;
  if (ownCut)
    out.problem('marker-truncated', `${ownCut.marker} is cut short`, ownCut.start, ownCut.end, { marker: ownCut.marker, callIndex: index });
  const [is, ie] = trimRange(text, idStart, idEnd);
  const id = text.slice(is, ie);
  const nameStart = is + (id.startsWith(FN_PREFIX) ? FN_PREFIX.length : 0);
  const suffix = /:\d*$/.exec(id);
  const nameEnd = Math.max(nameStart, suffix ? is + suffix.index : ie);
  if (missing.length && !id.startsWith(FN_PREFIX)) defects.push(`id '${id}' lacks the ${FN_PREFIX} prefix`);

  let args = '';
  let argRange: [number, number] | undefined;
  let end: number;
  let closed = false;
  let expectedAt: number;
  if (stop?.marker === ARG_BEGIN) {
    const body = jsonBody(out, stop.end, ARG_STOPS, [CALL_END, ...MARKERS]);
    argRange = body.range;
    args = text.slice(...argRange);
    end = expectedAt = argRange[1];
    if (body.stop?.marker === CALL_END) {
      end = body.stop.end;
      closed = true;
    } else if (body.cut?.marker === CALL_END) {
      // Another cut-short marker is left to the section, which reports it.
      out.problem('marker-truncated', `${CALL_END} is cut short`, body.cut.start, body.cut.end, { marker: CALL_END, callIndex: index });
      end = body.cut.end;
      expectedAt = body.cut.start;
    }
  } else if (stop?.marker === CALL_END) {
    defects.push(`no ${ARG_BEGIN}`);
    end = stop.end;
    closed = true;
    expectedAt = ie;
  } else {
    end = ownCut ? ownCut.end : ie;
    expectedAt = ie;
  }
  end = Math.max(end, ie);

  out.addCall(text.slice(nameStart, nameEnd), args, id);
  out.seg('call', start, end, index);
  out.seg('call-id', is, ie, index);
  out.seg('call-name', nameStart, nameEnd, index);
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed && !missing.length) callUnclosed(out, index, start, end, CALL_END, expectedAt);
  else if (!closed) defects.push(`no ${CALL_END}`);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, end, { callIndex: index });
  return end;
}

/**
 * A call as it reads once a provider decoded with `skip_special_tokens` (SGLang's default): every marker of the
 * section is a special token, so only the id and the arguments stay, `functions.write:0{"path": "a"}` (with spaces
 * where the markers were when `spaces_between_special_tokens` is on: ` functions.read:0 {"path":"x"} `).
 */
const STRIPPED_CALL = /(?<!\w)functions\.([\w.-]+):(\d+)\s*(?=\{)/g;

/**
 * The calls of a text with Kimi K2's special tokens stripped, as `parse` would read them had the markers been kept;
 * the text around them is content. Used on content that carries no call markers (checks/markerless-leak.ts).
 */
export function parseStrippedKimi(text: string): ParsedNative {
  const out = new ParseOut('kimi-k2', text);
  let pos = 0;
  STRIPPED_CALL.lastIndex = 0;
  for (let m = STRIPPED_CALL.exec(text); m; m = STRIPPED_CALL.exec(text)) {
    const brace = m.index + m[0].length;
    const jsonEnd = jsonValueEnd(text, brace);
    const end = jsonEnd < 0 ? text.length : jsonEnd;
    const content = trimRange(text, pos, m.index);
    out.addContent(text.slice(...content));
    out.seg('content', ...content);
    const idEnd = m.index + FN_PREFIX.length + m[1].length + 1 + m[2].length;
    const index = out.addCall(m[1], text.slice(brace, end).trim(), text.slice(m.index, idEnd));
    out.seg('call', m.index, end, index);
    out.seg('call-id', m.index, idEnd, index);
    out.seg('call-name', m.index + FN_PREFIX.length, m.index + FN_PREFIX.length + m[1].length, index);
    out.seg('arguments', ...trimRange(text, brace, end), index);
    pos = end;
    STRIPPED_CALL.lastIndex = end;
  }
  const rest = trimRange(text, pos, text.length);
  out.addContent(text.slice(...rest));
  out.seg('content', ...rest);
  return out.finish();
}
