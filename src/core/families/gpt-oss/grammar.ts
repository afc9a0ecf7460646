/**
 * gpt-oss (OpenAI Harmony). A turn is a run of messages, each `<|start|>ROLE<|channel|>CHANNEL<|message|>BODY`
 * ended by `<|end|>`, `<|call|>` (a tool call) or `<|return|>` (the final answer):
 *
 *   <|start|>assistant<|channel|>analysis<|message|>REASONING<|end|>
 *   <|start|>assistant<|channel|>final<|message|>CONTENT<|return|>
 *   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{ARGS}<|call|>
 *
 * `render` writes every header in full (the first `<|start|>assistant` is really the prompt's; `parse` also
 * reads a completion that starts at `<|channel|>`). Content that comes with calls is written as a
 * commentary preamble (`<|end|>`), content alone as `final` (`<|return|>`). The recipient may sit in the
 * role or the channel part of the header and `<|constrain|>json` is optional. A whole header is one
 * `marker` segment. A recipient outside `functions.` (other than the built-in `python`, `browser.*`,
 * `container.*` tools) is `malformed-call`: the Kilo leak `<|channel|>commentary to=read_file …`.
 * No call ids, no section.
 *
 * A provider that decodes with `skip_special_tokens` leaves a call as text: `commentary to=functions.x json{…}`
 * (`parseStrippedHarmony` reads it back; the markup-in-content rule reports it, checks/markerless-leak.ts).
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../../model';
import {
  ParseOut,
  RenderOut,
  closing,
  bodyUntil,
  callUnclosed,
  findTruncated,
  freeText,
  jsonBody,
  modelKey,
  jsonValueEnd,
  present,
  scoreText,
  trimRange,
  type BodyEnd,
} from '../shared';
import type { ModelFormat, RenderOptions } from '../shared/format';

export const START = '<|start|>';
export const CHANNEL = '<|channel|>';
export const MESSAGE = '<|message|>';
export const END = '<|end|>';
export const CALL = '<|call|>';
export const RETURN = '<|return|>';
export const CONSTRAIN = '<|constrain|>';

const TOOL_MARKERS = [START, CHANNEL, MESSAGE, CONSTRAIN, CALL];
/** Ordered so a cut-short fragment is read as the marker most often cut: the terminators first. */
const MARKERS = [CALL, RETURN, END, MESSAGE, CHANNEL, CONSTRAIN, START, '<|endoftext|>', '<|startoftext|>'];
const HEADER_STARTS = [START, CHANNEL];
const BODY_STOPS = [END, CALL, RETURN, START, CHANNEL];
const FN_PREFIX = 'functions.';
const BUILTIN = /^(?:python|browser\.|container\.)/;

export const harmony: ModelFormat = {
  id: 'gpt-oss',
  displayName: 'gpt-oss (Harmony)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  matchesModel: (modelId) => /gpt-oss/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [CHANNEL, 10],
      [MESSAGE, 6],
      [CONSTRAIN, 6],
      [/to=functions\.[\w.-]+/, 5],
      [`${START}assistant`, 4],
      [CALL, 3],
      [RETURN, 3],
    ]),
  generationPrompt: `${START}assistant`,
  render,
  parse,
};

function header(out: RenderOut, channel: string): void {
  out.put(`${START}assistant${CHANNEL}${channel}${MESSAGE}`, 'marker');
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const close = closing(m, opts);
  const out = new RenderOut();
  if (present(m.reasoning)) {
    header(out, 'analysis');
    out.put(m.reasoning!, 'reasoning');
    if (close.reasoning) out.put(END, 'marker');
  }
  if (present(m.content)) {
    const preamble = m.toolCalls.length > 0;
    header(out, preamble ? 'commentary' : 'final');
    out.put(m.content!, 'content');
    // A preamble's `<|end|>` is proven by the calls after it; the final message's `<|return|>` ends the turn.
    if (preamble) out.put(END, 'marker');
    else if (close.turn) out.put(RETURN, 'end');
  }
  m.toolCalls.forEach((c, i) => {
    out.wrap(
      'call',
      () => {
        out.put(`${START}assistant${CHANNEL}commentary to=${FN_PREFIX}`).put(c.name, 'call-name', i);
        out.put(` ${CONSTRAIN}json${MESSAGE}`).put(c.arguments, 'arguments', i);
        if (close.call(i)) out.put(CALL);
      },
      i,
    );
  });
  return out.done();
}

/**
 * The rest of a first header whose `<|start|>assistant` was the prompt's: a call as the completion's first message begins
 * with its recipient, ` to=functions.NAME<|channel|>commentary json<|message|>{…}` (ggml-org/llama.cpp
 * tests/test-chat.cpp "Tool call with recipient in role header"; Ollama harmony/harmonyparser_test.go reads
 * `to=functions.get_weather<|channel|>analysis` as a header whose role the recipient replaced).
 */
const LEAD_RECIPIENT = /^\s*(?:assistant[ \t]*)?to=[^\s<]+[^<\n]*(?=<\|(?:channel|constrain|message)\|>)/;

function parse(text: string): ParsedNative {
  const out = new ParseOut('gpt-oss', text);
  let pos = 0;
  const lead = LEAD_RECIPIENT.exec(text);
  if (lead) {
    const start = text.length - text.trimStart().length;
    pos = Math.max(message(out, start, start), start + 1);
  }
  while (pos < text.length) {
    const head = out.find(HEADER_STARTS, pos);
    // Text outside any message (before the first header, between messages): content as the agent sees it.
    looseText(out, pos, head ? head.start : text.length);
    if (!head) break;
    pos = Math.max(message(out, head.start, head.end), head.end);
  }
  return out.finish();
}

/** One message from its header start; returns where it ends. */
function message(out: ParseOut, start: number, afterFirst: number): number {
  const { text } = out;
  const msg = out.find([MESSAGE, START, END, CALL, RETURN], afterFirst);
  const headEnd = msg?.marker === MESSAGE ? msg.end : msg ? msg.start : text.length;
  const head = text.slice(start, headEnd);
  const to = /\bto=([^\s<]+)/.exec(head);
  if (msg?.marker !== MESSAGE) {
    // The header never reached `<|message|>`: cut off, or broken by other markup.
    const cut = findTruncated(text, MARKERS, start, headEnd).at(-1);
    if (!to) out.seg('marker', start, headEnd);
    if (cut && cut.end === text.length) {
      out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker });
    } else if (!msg && !to) {
      // The text ends inside a header: the turn was cut before the message began.
      out.problem('marker-truncated', `message header cut off before ${MESSAGE}`, start, headEnd, { marker: MESSAGE, expectedAt: headEnd });
    } else if (msg) {
      out.problem(to ? 'malformed-call' : 'stray-marker', `message header without ${MESSAGE}`, start, headEnd, { marker: MESSAGE });
    }
    if (to) {
      // A call cut off in its header: the name is known, the arguments never came.
      const nameRange = recipientName(start, to);
      const index = out.addCall(text.slice(...nameRange), '');
      out.seg('call', start, headEnd, index);
      out.seg('call-name', nameRange[0], nameRange[1], index);
      if (!msg) callUnclosed(out, index, start, headEnd, CALL, cut ? cut.start : headEnd);
    }
    return headEnd;
  }
  if (to) return call(out, start, msg.end, to);
  const channel = /<\|channel\|>\s*([\w-]+)/.exec(head)?.[1];
  const kind = channel === 'analysis' ? 'reasoning' : 'content';
  out.seg('marker', start, msg.end);
  const body = bodyUntil(out, msg.end, msg.end, BODY_STOPS, MARKERS);
  const bodyEnd = body.cut ? body.cut.start : body.stop ? body.stop.start : text.length;
  freeText(out, kind, msg.end, bodyEnd, MARKERS);
  if (body.cut) {
    out.seg('marker', body.cut.start, body.cut.end);
    out.problem('marker-truncated', `${body.cut.marker} is cut short`, body.cut.start, body.cut.end, { marker: body.cut.marker });
  }
  const stop = body.stop;
  if (stop?.marker === END) out.seg('marker', stop.start, stop.end);
  else if (stop?.marker === RETURN) out.seg('end', stop.start, stop.end);
  else if (stop?.marker === CALL) {
    out.seg('marker', stop.start, stop.end);
    out.problem('stray-marker', `${CALL} ends a message that calls no tool`, stop.start, stop.end, { marker: CALL });
  } else if (kind === 'reasoning') {
    out.problem('reasoning-unclosed', `analysis message never closed by ${END}`, start, body.cut?.end ?? bodyEnd, {
      expectedAt: body.cut?.start ?? body.range[1],
      marker: END,
    });
  }
  const closesHere = stop && (stop.marker === END || stop.marker === RETURN || stop.marker === CALL);
  return closesHere ? stop.end : (body.cut?.end ?? bodyEnd);
}

/** Range of the function name in a header at `start` whose recipient match is `to` (`functions.` dropped). */
function recipientName(start: number, to: RegExpExecArray): [number, number] {
  const end = start + to.index + to[0].length;
  return [end - to[1].length + (to[1].startsWith(FN_PREFIX) ? FN_PREFIX.length : 0), end];
}

/** A call message: header `start`…`bodyStart`, recipient `to` found in the header. */
function call(out: ParseOut, start: number, bodyStart: number, to: RegExpExecArray): number {
  const { text } = out;
  const index = out.calls.length;
  const recipient = to[1];
  const nameRange = recipientName(start, to);
  const defects: string[] = [];
  if (!recipient.startsWith(FN_PREFIX) && !BUILTIN.test(recipient))
    defects.push(`recipient '${recipient}' is not in the ${FN_PREFIX} namespace`);
  const body: BodyEnd = jsonBody(out, bodyStart, BODY_STOPS, MARKERS);
  let end = body.range[1];
  let closed = false;
  let expectedAt = end;
  if (body.stop?.marker === CALL) {
    end = body.stop.end;
    closed = true;
  } else if (body.stop?.marker === END || body.stop?.marker === RETURN) {
    defects.push(`ended by ${body.stop.marker} instead of ${CALL}`);
    end = body.stop.end;
    closed = true;
  } else if (body.cut) {
    out.problem('marker-truncated', `${body.cut.marker} is cut short`, body.cut.start, body.cut.end, {
      marker: body.cut.marker,
      callIndex: index,
    });
    end = body.cut.end;
    expectedAt = body.cut.start;
  }
  out.addCall(text.slice(...nameRange), text.slice(...body.range));
  out.seg('call', start, end, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  out.seg('arguments', body.range[0], body.range[1], index);
  if (!closed) callUnclosed(out, index, start, end, CALL, expectedAt);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, end, { callIndex: index });
  return end;
}

// ---------------------------------------------------------------------------------------------------------------
// Calls with their special tokens stripped

/**
 * A call message as it reads once a provider decoded with `skip_special_tokens` (every Harmony marker is a special
 * token, so `<|start|>`, `<|channel|>`, `<|constrain|>`, `<|message|>` and `<|call|>` vanish or, on some paths, a
 * few stay): `commentary to=functions.get_weather json{"location":"SF"}`,
 * `assistantcommentary to=functions.x <|constrain|>json<|message|>{…}`. The name is followed by the JSON arguments.
 */
const STRIPPED_CALL =
  /(?:(?:assistant)?(?:<\|channel\|>)?[ \t]*(?:commentary|analysis)[ \t]*)?to=functions\.([\w.-]+?)\s*(?:<\|constrain\|>\s*)?(?:json\s*)?(?:<\|message\|>\s*)?(?=\{)/g;

/** Whether [from, to) holds a stripped call (a `to=functions.NAME` recipient followed by its JSON). */
function holdsStrippedCall(text: string, from: number, to: number): boolean {
  const at = text.indexOf('to=functions.', from);
  if (at < 0 || at >= to) return false;
  STRIPPED_CALL.lastIndex = Math.max(from, at - 40);
  const m = STRIPPED_CALL.exec(text);
  return m !== null && m.index < to;
}

/**
 * Free text outside any message. One that holds a stripped call is kept whole as content (the agent received it so),
 * markers and all: the markup-in-content rule reports it with the call it holds (checks/markerless-leak.ts).
 */
function looseText(out: ParseOut, from: number, to: number): void {
  if (!holdsStrippedCall(out.text, from, to)) return freeText(out, 'content', from, to, MARKERS);
  out.addContent(out.text.slice(from, to));
  const [s, e] = trimRange(out.text, from, to);
  out.seg('content', s, e);
}

/**
 * The calls of a text with Harmony's special tokens stripped, as `parse` would read them had the markers been kept;
 * the text around them is content. Used on content that carries no call markers (checks/markerless-leak.ts).
 */
export function parseStrippedHarmony(text: string): ParsedNative {
  const out = new ParseOut('gpt-oss', text);
  let pos = 0;
  STRIPPED_CALL.lastIndex = 0;
  for (let m = STRIPPED_CALL.exec(text); m; m = STRIPPED_CALL.exec(text)) {
    const brace = m.index + m[0].length;
    const jsonEnd = jsonValueEnd(text, brace);
    const end = jsonEnd < 0 ? text.length : jsonEnd;
    const start = trimRange(text, m.index, brace)[0];
    const content = trimRange(text, pos, start);
    out.addContent(text.slice(...content));
    out.seg('content', ...content);
    const nameStart = m.index + m[0].indexOf(`to=${FN_PREFIX}`) + `to=${FN_PREFIX}`.length;
    const index = out.addCall(m[1], text.slice(brace, end).trim());
    out.seg('call', start, end, index);
    out.seg('call-name', nameStart, nameStart + m[1].length, index);
    out.seg('arguments', ...trimRange(text, brace, end), index);
    pos = end;
    STRIPPED_CALL.lastIndex = end;
  }
  const rest = trimRange(text, pos, text.length);
  out.addContent(text.slice(...rest));
  out.seg('content', ...rest);
  return out.finish();
}
