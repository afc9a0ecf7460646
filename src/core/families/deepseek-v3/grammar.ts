/**
 * DeepSeek V3 / R1 / R1-0528 ('deepseek-v3') and V3.1 / V3.1-Terminus ('deepseek-v31'). The markers use the
 * full-width bar ｜ (U+FF5C) and ▁ (U+2581).
 *
 *   V3:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>
 *         (calls separated by \n) <｜tool▁calls▁end｜><｜end▁of▁sentence｜>
 *   V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>…<｜tool▁calls▁end｜><｜end▁of▁sentence｜>
 *
 * Reasoning is `<think>…</think>`; `render` writes both markers, `parse` also accepts a completion that
 * starts inside the block (R1 may omit `<think>`, V3.1 thinking prompts end with it). V3.2's DSML
 * format is a different grammar and is not handled here. No call ids in the format.
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../../model';
import {
  THINK_CLOSE,
  THINK_OPEN,
  renderStart,
  callUnclosed,
  endsInMarker,
  expectClosers,
  jsonBody,
  modelKey,
  parseSection,
  parseTurn,
  scoreText,
  skipWs,
  trimRange,
  type BodyEnd,
  type MarkerHit,
  type ParseOut,
  type SectionGrammar,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

export const SECTION_BEGIN = '<｜tool▁calls▁begin｜>';
export const SECTION_END = '<｜tool▁calls▁end｜>';
export const CALL_BEGIN = '<｜tool▁call▁begin｜>';
export const CALL_END = '<｜tool▁call▁end｜>';
export const SEP = '<｜tool▁sep｜>';
export const EOS = '<｜end▁of▁sentence｜>';
const FENCE_OPEN = '```json';
const FENCE_CLOSE = '```';

const TOOL_MARKERS = [SECTION_BEGIN, CALL_BEGIN, SEP, CALL_END, SECTION_END];
/** Ordered so a cut-short fragment is read as the marker most often cut: the section end first. */
const MARKERS = [
  SECTION_END,
  CALL_END,
  EOS,
  THINK_CLOSE,
  SECTION_BEGIN,
  CALL_BEGIN,
  SEP,
  THINK_OPEN,
  '<｜tool▁outputs▁begin｜>',
  '<｜tool▁output▁begin｜>',
  '<｜tool▁output▁end｜>',
  '<｜tool▁outputs▁end｜>',
  '<｜begin▁of▁sentence｜>',
  '<｜User｜>',
  '<｜Assistant｜>',
];
const BODY_STOPS = [CALL_END, CALL_BEGIN, SECTION_END, EOS];

type Variant = 'v3' | 'v31';

function format(variant: Variant): ModelFormat {
  const section: SectionGrammar = {
    ends: [SECTION_END],
    callBegin: CALL_BEGIN,
    breaks: [EOS, SECTION_BEGIN],
    markers: MARKERS,
    call: (out, start, bodyStart, sectioned) => call(variant, out, start, bodyStart, sectioned),
  };
  const grammar = {
    family: variant === 'v3' ? ('deepseek-v3' as const) : ('deepseek-v31' as const),
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    implicitThink: true,
    ends: [EOS],
    starters: [
      { marker: SECTION_BEGIN, parse: (out: ParseOut, start: number, hit: MarkerHit) => parseSection(out, section, start, hit) },
      { marker: CALL_BEGIN, parse: (out: ParseOut, start: number) => parseSection(out, section, start) },
    ],
  };
  return {
    id: grammar.family,
    displayName: variant === 'v3' ? 'DeepSeek V3 / R1' : 'DeepSeek V3.1',
    markers: MARKERS,
    toolMarkers: TOOL_MARKERS,
    sectionEnd: SECTION_END,
    matchesModel: variant === 'v3' ? isV3 : isV31,
    detectText: (text) =>
      scoreText(text, [
        [SECTION_BEGIN, 10],
        [CALL_BEGIN, 10],
        [SEP, 10],
        [SECTION_END, 8],
        [CALL_END, 8],
        [EOS, 2],
        // The two grammars differ right after the call begin.
        variant === 'v3' ? [`${CALL_BEGIN}function${SEP}`, 5] : [new RegExp(`${CALL_BEGIN}(?!function${SEP})[^<]*${SEP}`), 5],
      ]),
    render: (m, opts) => render(variant, m, opts),
    parse: (text): ParsedNative => parseTurn(grammar, text),
  };
}

/**
 * Model ids as Hugging Face, OpenRouter and Amazon Bedrock spell them: the separator after `deepseek` is `-`, `.` or
 * `_` (`deepseek-ai/DeepSeek-V3-0324`, `deepseek/deepseek-chat-v3.1`, Bedrock `deepseek.r1-v1:0`, `us.deepseek.r1-v1:0`).
 * Bedrock's `deepseek.v3-v1:0` is DeepSeek-V3.1: Bedrock offers R1, V3.1 and V3.2 only (docs.aws.amazon.com
 * bedrock/latest/userguide/model-parameters-deepseek.html: "DeepSeek's R1 and V3.1 models"; model-cards-deepseek).
 */
const DS = /deepseek[-._](?:chat[-._])?/.source;
const BEDROCK_V31 = /(?:^|[.])deepseek\.v3-v\d/;

/**
 * Deep Cogito's DeepSeek-V3-based checkpoints write these calls (Ollama's `cogito` parser, model/parsers/cogito.go):
 * `deepcogito/cogito-v2.1-671B` (OpenRouter `deepcogito/cogito-v2.1-671b`, Ollama `cogito-2.1:671b`) and
 * `deepcogito/cogito-v2-preview-deepseek-671B-MoE`. The other Cogito checkpoints are Llama or Qwen models.
 */
const COGITO_DEEPSEEK = /(?:^|[^a-z])cogito-(?:v?2\.1(?![\d])|v2-preview-deepseek)/;

/** DeepSeek V3 (-0324), `deepseek-chat`, the R1 line and Cogito's DeepSeek models, but not V3.1+ (own grammar) nor V3.2 (DSML). */
function isV3(modelId: string): boolean {
  const key = modelKey(modelId);
  if (BEDROCK_V31.test(key)) return false;
  if (COGITO_DEEPSEEK.test(key)) return true;
  return key === 'deepseek-chat' || new RegExp(`${DS}v3(?![.\\d])`).test(key) || new RegExp(`${DS}r1(?![.\\d])`).test(key);
}

/** DeepSeek V3.1 and V3.1-Terminus, and Bedrock's `deepseek.v3-v1:0`. */
function isV31(modelId: string): boolean {
  const key = modelKey(modelId);
  return BEDROCK_V31.test(key) || new RegExp(`${DS}v3\\.1`).test(key);
}

function render(variant: Variant, m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(SECTION_BEGIN);
      m.toolCalls.forEach((c, i) => {
        if (i > 0 && variant === 'v3') out.put('\n');
        out.wrap(
          'call',
          () => {
            out.put(CALL_BEGIN);
            if (variant === 'v3') {
              out.put(`function${SEP}`).put(c.name, 'call-name', i).put(`\n${FENCE_OPEN}\n`).put(c.arguments, 'arguments', i);
              if (close.call(i)) out.put(`\n${FENCE_CLOSE}`);
            } else {
              out.put(c.name, 'call-name', i).put(SEP).put(c.arguments, 'arguments', i);
            }
            if (close.call(i)) out.put(CALL_END);
          },
          i,
        );
      });
      if (close.turn) out.put(SECTION_END);
    });
  }
  if (close.turn) out.put(EOS, 'end');
  return out.done();
}

/** One call from its begin marker (`start`); the type/name part starts at `bodyStart`. */
function call(variant: Variant, out: ParseOut, start: number, bodyStart: number, sectioned: boolean): number {
  const { text } = out;
  const index = out.calls.length;
  const defects = sectioned ? [] : ['call outside a tool-call section'];
  const sep = out.find([SEP, ...BODY_STOPS], bodyStart);
  let nameRange: [number, number];
  let body: BodyEnd | undefined;
  let fenced = false;
  let missing = CALL_END;
  if (sep?.marker !== SEP) {
    // No separator: whatever arrived is the name (V3.1) or the type (V3).
    nameRange = trimRange(text, bodyStart, sep ? sep.start : text.length);
    if (sep) defects.push(`no ${SEP}`);
  } else if (variant === 'v31') {
    nameRange = trimRange(text, bodyStart, sep.start);
    body = jsonBody(out, sep.end, BODY_STOPS, [CALL_END, ...MARKERS]);
  } else {
    const type = text.slice(bodyStart, sep.start).trim();
    if (type !== 'function') defects.push(`type '${type}' where 'function' belongs before ${SEP}`);
    const lineEnd = out.find(['\n', FENCE_CLOSE, ...BODY_STOPS], sep.end);
    nameRange = trimRange(text, sep.end, lineEnd ? lineEnd.start : text.length);
    const fenceAt = skipWs(text, nameRange[1]);
    fenced = text.startsWith(FENCE_OPEN, fenceAt);
    // Cut off before or inside the opening fence: the arguments never began.
    const cutBeforeArgs = !fenced && (fenceAt === text.length || endsInMarker(text, fenceAt, [FENCE_OPEN]));
    if (!fenced && !cutBeforeArgs) defects.push(`no ${FENCE_OPEN} fence`);
    if (cutBeforeArgs) missing = FENCE_OPEN;
    else
      body = jsonBody(
        out,
        fenced ? fenceAt + FENCE_OPEN.length : nameRange[1],
        [FENCE_CLOSE, ...BODY_STOPS],
        [FENCE_CLOSE, CALL_END, ...MARKERS],
      );
  }
  const name = text.slice(...nameRange);
  let end = nameRange[1];
  let closed = false;
  let expectedAt = end;
  // A fence cut short belongs to this call.
  if (missing === FENCE_OPEN) end = text.length;
  if (body) {
    end = expectedAt = body.range[1];
    let stop = body.stop;
    if (stop?.marker === FENCE_CLOSE) {
      if (!fenced) defects.push(`${FENCE_CLOSE} without ${FENCE_OPEN}`);
      const tail = expectClosers(out, stop.end, [CALL_END], MARKERS, index);
      end = tail.end;
      closed = !tail.missing;
      expectedAt = tail.expectedAt ?? end;
      stop = undefined;
    } else if (fenced) {
      // V3 arguments must close their fence before the call ends.
      if (stop?.marker === CALL_END) defects.push(`no closing ${FENCE_CLOSE}`);
      else missing = FENCE_CLOSE;
    }
    if (stop?.marker === CALL_END) {
      end = stop.end;
      closed = true;
    } else if (body.cut && (body.cut.marker === CALL_END || body.cut.marker === FENCE_CLOSE)) {
      // Another cut-short marker is left to the section, which reports it.
      out.problem('marker-truncated', `${body.cut.marker} is cut short`, body.cut.start, body.cut.end, {
        marker: body.cut.marker,
        callIndex: index,
      });
      end = body.cut.end;
      expectedAt = body.cut.start;
    }
  } else if (sep?.marker === CALL_END) {
    end = sep.end;
    closed = true;
  }
  out.addCall(name, body ? text.slice(...body.range) : '');
  out.seg('call', start, end, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  if (body) out.seg('arguments', body.range[0], body.range[1], index);
  if (!closed) callUnclosed(out, index, start, end, missing, expectedAt);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, end, { callIndex: index });
  return end;
}

export const deepseekV3 = format('v3');
export const deepseekV31 = format('v31');
