/**
 * Kimi K3 ('kimi-k3'), the channel grammar built from `<|open|>`, `<|close|>` and `<|sep|>` (not K2's format):
 *
 *   <|open|>think<|sep|>REASONING<|close|>think<|sep|><|open|>response<|sep|>CONTENT<|close|>response<|sep|>
 *   <|open|>tools<|sep|><|open|>call tool="NAME" index="0"<|sep|><|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>
 *
 * (written here on two lines; the model writes no line breaks). vLLM `kimi_k3_tool_parser.py`, SGLang `kimik3_format.py`:
 * a `type="string"` value is the text as written, any other type is JSON-decoded and falls back to the text. Render
 * writes `type="string"` for strings and the JSON type name for the rest, so arguments round-trip exactly.
 */
import type { AssistantMessage, NativeText } from '../../model';
import {
  closing,
  modelKey,
  parseSection,
  parseTurn,
  present,
  renderParams,
  renderThink,
  scoreText,
  xmlCall,
  RenderOut,
  type ParamGrammar,
  type ParamType,
  type ParseOut,
  type SectionGrammar,
  type TurnGrammar,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

const open = (name: string) => `<|open|>${name}<|sep|>`;
const shut = (name: string) => `<|close|>${name}<|sep|>`;
// `<|close|>think` with no `<|sep|>` is a close no parser takes: vLLM's kimi_k3 reasoning parser then keeps the rest of
// the turn (the answer, the calls) as reasoning; SGLang's KimiK3Detector ends the reasoning at the next channel and
// strips the fragment (`strip_partial_marker_suffix`). The parse ends the reasoning there and reports it.
const THINK = { open: open('think'), close: shut('think'), partial: ['<|close|>think'] };
const RESPONSE_OPEN = open('response');
const RESPONSE_CLOSE = shut('response');
const TOOLS_OPEN = open('tools');
const TOOLS_CLOSE = shut('tools');
const CALL_OPEN = '<|open|>call tool="';
const CALL_CLOSE = shut('call');
const ARG_OPEN = '<|open|>argument key="';
const ARG_CLOSE = shut('argument');
const END = '<|end_of_msg|>';
// The assistant message closes with `<|close|>message<|sep|>` before `<|end_of_msg|>` (the Kimi-K3 chat template; llama.cpp
// common/parsers/kimi-k3.cpp `MSG_END`, tests/test-chat.cpp "Kimi-K3"); a server that stops on the close keeps only it.
const MSG_END = shut('message');

const TOOL_MARKERS = [TOOLS_OPEN, TOOLS_CLOSE, CALL_OPEN, CALL_CLOSE, ARG_OPEN, ARG_CLOSE];
const MARKERS = [...TOOL_MARKERS, THINK.open, THINK.close, RESPONSE_OPEN, RESPONSE_CLOSE, MSG_END, END];
const BODY_STOPS = [CALL_CLOSE, CALL_OPEN, TOOLS_CLOSE, TOOLS_OPEN, MSG_END, END];

const unescapeAttr = (s: string) => s.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** `key="K" type="T"<|sep|>` at `pos`: the key, its type and where the value starts. */
const PARAMS: ParamGrammar = {
  headStart: ARG_OPEN,
  close: ARG_CLOSE,
  newlines: false,
  head: (out, pos, to) => {
    if (!out.text.startsWith(ARG_OPEN, pos)) return undefined;
    const sep = out.text.indexOf('<|sep|>', pos + ARG_OPEN.length);
    if (sep < 0 || sep >= to) return { key: unescapeAttr(out.text.slice(pos + ARG_OPEN.length, to).split('"')[0]), valueStart: to };
    const head = out.text.slice(pos + ARG_OPEN.length, sep);
    const key = unescapeAttr(head.split('"')[0]);
    const type: ParamType = /type="string"/.test(head) ? 'string' : 'json';
    return { key, valueStart: sep + '<|sep|>'.length, type };
  },
};

const SECTION: SectionGrammar = { ends: [TOOLS_CLOSE], callBegin: CALL_OPEN, breaks: [MSG_END, END, TOOLS_OPEN], markers: MARKERS, call };

/** A response channel marker: a marker segment; the text between them is the content. */
const channel = (marker: string) => ({
  marker,
  parse: (out: ParseOut, _start: number, hit: { start: number; end: number }) => (out.seg('marker', hit.start, hit.end), hit.end),
});

const GRAMMAR: TurnGrammar = {
  family: 'kimi-k3',
  toolMarkers: TOOL_MARKERS,
  markers: MARKERS,
  // In thinking mode the prompt may end with `<|open|>think<|sep|>` (vLLM and SGLang kimi_k3 reasoning parsers), so a
  // completion can start inside the reasoning: text before a close is reasoning.
  implicitThink: true,
  think: THINK,
  ends: [MSG_END, END],
  starters: [
    { marker: TOOLS_OPEN, parse: (out, start, hit) => parseSection(out, SECTION, start, hit) },
    { marker: CALL_OPEN, parse: (out, start) => parseSection(out, SECTION, start) },
    channel(RESPONSE_OPEN),
    channel(RESPONSE_CLOSE),
  ],
};

export const kimiK3: ModelFormat = {
  id: 'kimi-k3',
  displayName: 'Kimi K3 (<|open|>…<|sep|> channels)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  sectionEnd: TOOLS_CLOSE,
  matchesModel: (modelId) => /kimi-k3/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [TOOLS_OPEN, 12],
      [CALL_OPEN, 10],
      [ARG_OPEN, 8],
      ['<|sep|>', 4],
    ]),
  render,
  parse: (text) => parseTurn(GRAMMAR, text),
};

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const close = closing(m, opts);
  const out = new RenderOut();
  renderThink(out, m.reasoning, false, close.reasoning, THINK);
  if (present(m.content) !== undefined) {
    out.put(RESPONSE_OPEN, 'marker').put(m.content!, 'content');
    // A turn cut inside its reply stopped in the response channel.
    if (close.turn || m.toolCalls.length) out.put(RESPONSE_CLOSE, 'marker');
  }
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(TOOLS_OPEN);
      m.toolCalls.forEach((c, i) => {
        out.wrap(
          'call',
          () => {
            out.put(CALL_OPEN).put(c.name, 'call-name', i).put(`" index="${i}"<|sep|>`);
            let types: Record<string, unknown> = {};
            try {
              types = JSON.parse(c.arguments) as Record<string, unknown>;
            } catch {
              // Raw arguments are written as they are.
            }
            renderParams(
              out,
              i,
              c.arguments,
              (k, v) => `${ARG_OPEN}${escapeAttr(k)}" type="${jsonType(types[k])}"<|sep|>${v}${ARG_CLOSE}`,
              '',
            );
            if (close.call(i)) out.put(CALL_CLOSE);
          },
          i,
        );
      });
      if (close.turn) out.put(TOOLS_CLOSE);
    });
  }
  if (close.turn) out.put(MSG_END, 'end').put(END, 'end');
  return out.done();
}

/** One `<|open|>call tool="…" …<|sep|>` from `start`. */
function call(out: ParseOut, start: number, _bodyStart: number, sectioned: boolean): number {
  const { text } = out;
  const stop = out.find(BODY_STOPS, start + CALL_OPEN.length);
  const to = stop ? stop.start : text.length;
  const nameStart = start + CALL_OPEN.length;
  const quote = text.indexOf('"', nameStart);
  const sep = text.indexOf('<|sep|>', nameStart);
  const headOk = quote >= 0 && sep >= 0 && quote < sep && sep < to;
  const nameEnd = quote >= 0 && quote < to ? quote : to;
  return xmlCall(
    out,
    {
      start,
      nameRange: [nameStart, nameEnd],
      nameUnclosed: headOk ? undefined : '<|sep|>',
      bodyStart: headOk ? sep + '<|sep|>'.length : to,
      stop,
      closers: [CALL_CLOSE],
      defects: sectioned ? [] : [`${CALL_OPEN}…<|sep|> outside ${TOOLS_OPEN}`],
    },
    PARAMS,
    MARKERS,
  );
}
