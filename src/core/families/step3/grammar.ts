/**
 * Step-3 ('step3'): `steptml` XML calls inside fullwidth-bar section markers (`｜` is U+FF5C, words joined by `_`):
 *
 *   <think>\nREASONING\n</think>\n\nCONTENT<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f"><steptml:parameter name="k">v</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
 *
 *   …<|EOT|>
 *
 * SGLang `test_step3_detector.py`: a parameterless invoke is a call with `{}`. The turn ends with `<|EOT|>`: Step-3's chat
 * format wraps every turn in `<|BOT|>ROLE\n … <|EOT|>` and the generation prompt is `<|BOT|>assistant\n<think>\n`
 * (vLLM `examples/offline_inference/vision_language.py` `run_step3`, model `stepfun-ai/step3-fp8`, reasoning parser
 * `step3`), so the reasoning may start without its `<think>`. A server that strips the stop token leaves no `<|EOT|>`
 * in the text; the turn's end is then the wire's (`finish_reason`, the stream's end), as for every family whose end of
 * turn is a stop token. Arguments are canonical compact JSON; with the request's tools they are typed by the schema.
 */
import type { AssistantMessage, NativeText } from '../../model';
import {
  invokeGrammar,
  modelKey,
  parseTurn,
  quotedHead,
  quotedParams,
  renderParams,
  renderStart,
  scoreText,
  xmlCall,
  type ParseOut,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

const SECTION_BEGIN = '<｜tool_calls_begin｜>';
const SECTION_END = '<｜tool_calls_end｜>';
const CALL_BEGIN = '<｜tool_call_begin｜>';
const CALL_END = '<｜tool_call_end｜>';
const SEP = '<｜tool_sep｜>';
const INVOKE_OPEN = '<steptml:invoke name="';
const INVOKE_CLOSE = '</steptml:invoke>';
const PARAM_OPEN = '<steptml:parameter name="';
const PARAM_CLOSE = '</steptml:parameter>';
const HEAD = `function${SEP}${INVOKE_OPEN}`;
const EOT = '<|EOT|>';
const BOT = '<|BOT|>';

const TOOL_MARKERS = [SECTION_BEGIN, SECTION_END, CALL_BEGIN, CALL_END, SEP, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE];
const MARKERS = [...TOOL_MARKERS, '<think>', '</think>', EOT, BOT];
const BODY_STOPS = [INVOKE_CLOSE, CALL_END, CALL_BEGIN, SECTION_END, SECTION_BEGIN, EOT];

const PARAMS = quotedParams(PARAM_OPEN, PARAM_CLOSE);

/** A call begins at <｜tool_call_begin｜>: the section grammar of the invoke dialects with that as the call's start. */
const GRAMMAR = invokeGrammar(
  'step3',
  { sectionBegin: SECTION_BEGIN, sectionEnd: SECTION_END, invokeOpen: CALL_BEGIN, invokeClose: CALL_END },
  EOT,
  MARKERS,
  TOOL_MARKERS,
  call,
);

export const step3: ModelFormat = {
  id: 'step3',
  displayName: 'Step-3 (steptml)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: SECTION_END,
  matchesModel: (modelId) => /step-?3(?![.p]5)/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [SECTION_BEGIN, 10],
      [INVOKE_OPEN, 10],
      [PARAM_OPEN, 6],
    ]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: true });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(SECTION_BEGIN);
      m.toolCalls.forEach((c, i) => {
        out.wrap(
          'call',
          () => {
            out.put(`${CALL_BEGIN}${HEAD}`).put(c.name, 'call-name', i).put('">');
            renderParams(out, i, c.arguments, (k, v) => `${PARAM_OPEN}${k}">${v}${PARAM_CLOSE}`, '');
            if (close.call(i)) out.put(`${INVOKE_CLOSE}${CALL_END}`);
          },
          i,
        );
      });
      if (close.turn) out.put(SECTION_END);
    });
  }
  if (close.turn) out.put(EOT, 'end');
  return out.done();
}

function call(out: ParseOut, start: number, bodyStart: number, sectioned: boolean): number {
  const { text } = out;
  const defects = sectioned ? [] : [`${CALL_BEGIN} outside ${SECTION_BEGIN}`];
  const stop = out.find(BODY_STOPS, bodyStart);
  const to = stop ? stop.start : text.length;
  const hasHead = text.startsWith(HEAD, bodyStart);
  if (!hasHead && text.length - bodyStart >= HEAD.length) defects.push(`no ${HEAD}`);
  const nameStart = hasHead ? bodyStart + HEAD.length : Math.min(to, bodyStart + HEAD.length);
  const head = hasHead
    ? quotedHead(out, nameStart, '', to)
    : { name: [nameStart, nameStart] as [number, number], end: nameStart, closed: false };
  return xmlCall(
    out,
    {
      start,
      nameRange: head.name,
      nameUnclosed: head.closed ? undefined : '">',
      bodyStart: head.end,
      stop,
      closers: [INVOKE_CLOSE, CALL_END],
      defects,
    },
    PARAMS,
    MARKERS,
  );
}
