/**
 * Meta Muse Glimmer ('muse-glimmer'; vLLM `muse_glimmer`, SGLang `muse`, llama.cpp `muse_glimmer`, Ollama `glimmer`):
 * a turn is a run of recipient-routed messages, each `<|start|>assistant to=RECIPIENT<|message|>BODY` ended by
 * `<|eom|>` (more messages follow) or `<|eot|>` (end of turn). The recipient routes the body:
 *
 *   <|start|>assistant to=self<|message|>REASONING<|eom|>
 *   <|start|>assistant to=user<|message|>CONTENT<|eom|>
 *   <|start|>assistant to=NAME<|message|><atem:function_calls>
 *   <atem:invoke name="NAME">
 *   <atem:parameter name="K">V</atem:parameter>
 *   </atem:invoke>
 *   </atem:function_calls><|eot|>
 *
 * The generation prompt ends with `<|start|>assistant`, so a completion starts at ` to=self<|message|>` (`render`
 * writes the first header in full, `generationPrompt` says what the prompt already holds). A header without a
 * recipient (`<|message|>` alone) is content. A body that runs into the next message's header with its
 * `<|eom|><|start|>assistant` left out (`… to=weather.get<|message|>`) ends at that header, as vLLM `_iter_messages` reads
 * it, and is flagged: SGLang reads on to the next `<|eom|>`. Values are written raw (strings as they are, other values as JSON) and
 * the arguments come back as canonical compact JSON, typed by the request's schema where known. The chat template
 * advertises a bare tool `NAME` as `NAME.*`, so the model writes `NAME.NAME`: that doubled name is read as `NAME`, as
 * the engines resolve it. ATEM markup inside a `to=self` or `to=user` body is text there (a quoted example), never a
 * call. Sources: vLLM `vllm/tool_parsers/muse_glimmer_tool_parser.py` (module docstring, `_iter_messages`,
 * `_parse_tool_calls`); SGLang `python/sglang/srt/function_call/muse_glimmer_detector.py`, `muse_glimmer_format.py`
 * and `test/registered/unit/function_call/test_muse_glimmer_detector.py`; llama.cpp `common/parsers/muse-glimmer.cpp`;
 * Ollama `model/parsers/glimmer.go`, `glimmer_test.go` and `model/renderers/testdata/glimmer_chat_template.jinja`.
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../model';
import type { EngineVerdict, FamilyVerdicts } from './shared/verdicts';
import { noParser, noParserInfo } from './shared/verdicts';
import {
  ParseOut,
  RenderOut,
  closing,
  callUnclosed,
  endsInMarker,
  firstTruncated,
  freeText,
  modelKey,
  parseSection,
  present,
  quotedHead,
  quotedParams,
  renderParams,
  scoreText,
  skipWs,
  trimRange,
  truncatedAt,
  xmlCall,
  type SectionGrammar,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { Family } from './types';

const START = '<|start|>';
const MESSAGE = '<|message|>';
const EOM = '<|eom|>';
const EOT = '<|eot|>';
const CALLS_OPEN = '<atem:function_calls>';
const CALLS_CLOSE = '</atem:function_calls>';
const INVOKE_OPEN = '<atem:invoke name="';
const INVOKE_CLOSE = '</atem:invoke>';
const PARAM_OPEN = '<atem:parameter name="';
const PARAM_CLOSE = '</atem:parameter>';
const ROLE = 'assistant';
const SELF = 'self';
const USER = 'user';

const TOOL_MARKERS = [CALLS_OPEN, CALLS_CLOSE, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [EOM, EOT, CALLS_CLOSE, INVOKE_CLOSE, PARAM_CLOSE, MESSAGE, START, CALLS_OPEN, INVOKE_OPEN, PARAM_OPEN];
/** What ends a reasoning or content body. */
const BODY_ENDS = [EOM, EOT, START];
/** Outside tool bodies, ATEM markup is text the engines keep (a quoted example), left for the markup rules. */
const TEXT_MARKERS = MARKERS.filter((m) => !TOOL_MARKERS.includes(m));
/** A recipient as the engines read it (vLLM `_MSG_HEADER_RE`, SGLang `RECIPIENT_RE`). */
const RECIPIENT = /\bto=([^\s<]+)/;
/** A header without its `<|start|>assistant` (vLLM `_MSG_HEADER_RE`): ` to=NAME<|message|>` or a bare `<|message|>`. */
const BARE_HEADER = /^[^\S\n]*(?:to=[A-Za-z0-9_.-]+)?<\|message\|>/;
/** The same, ending where a body reaches it. */
const HEADER_BEFORE = /[^\S\n]*(?:to=[A-Za-z0-9_.-]+)?$/;
/** The first header of a completion, whose `<|start|>assistant` is the prompt's. */
const FIRST_HEADER = /^[^\S\n]*(?:to=([^\s<]+))?<\|message\|>/;

/** `NAME.NAME` (a bare tool addressed through its namespace, as the template advertises it) → the range of `NAME`. */
function resolved(text: string, range: [number, number]): [number, number] {
  const name = text.slice(...range);
  const dot = name.indexOf('.');
  if (dot > 0 && name.lastIndexOf('.') === dot && name.slice(0, dot) === name.slice(dot + 1)) return [range[0] + dot + 1, range[1]];
  return range;
}

const resolvedName = (name: string): string => {
  const dot = name.indexOf('.');
  return dot > 0 && name.lastIndexOf('.') === dot && name.slice(0, dot) === name.slice(dot + 1) ? name.slice(dot + 1) : name;
};

const PARAMS = quotedParams(PARAM_OPEN, PARAM_CLOSE);

/**
 * The section grammar of one tool message. `recipient` is the header's (undefined for an ATEM block outside any
 * message); each invoke is checked against it.
 */
function sectionGrammar(recipient: string | undefined): SectionGrammar {
  return {
    ends: [CALLS_CLOSE],
    callBegin: INVOKE_OPEN,
    breaks: [EOM, EOT, START, MESSAGE, CALLS_OPEN],
    markers: MARKERS,
    call: (out, start) => invoke(out, start, recipient),
  };
}

/** One `<atem:invoke name="…">` from `start`. */
function invoke(out: ParseOut, start: number, recipient: string | undefined): number {
  const { text } = out;
  // A value may hold any text but `</atem:parameter>` (Ollama TestGlimmerParserATEMValueMayContainControlTokenText):
  // the invoke runs to its close, and only without one to the next structure.
  const stop =
    out.find([INVOKE_CLOSE], start + INVOKE_OPEN.length) ??
    out.find([INVOKE_OPEN, CALLS_CLOSE, ...BODY_ENDS, MESSAGE], start + INVOKE_OPEN.length);
  const head = quotedHead(out, start, INVOKE_OPEN, stop ? stop.start : text.length);
  const nameRange = resolved(text, head.name);
  const defects: string[] = [];
  if (recipient === undefined) defects.push(`an ATEM block without its opening to=NAME${MESSAGE} header`);
  else if (head.closed && resolvedName(recipient) !== text.slice(...nameRange))
    defects.push(`the header is addressed to ${recipient}, the invoke names ${text.slice(...head.name)}`);
  return xmlCall(
    out,
    { start, nameRange, nameUnclosed: head.closed ? undefined : '">', bodyStart: head.end, stop, closers: [INVOKE_CLOSE], defects },
    PARAMS,
    MARKERS,
  );
}

/** A message header: where it starts, and whether it opens with `<|start|>`. */
interface Header {
  start: number;
  /** `<|start|>` form; false for the completion's first header (` to=…<|message|>`). */
  started: boolean;
}

function parse(text: string): ParsedNative {
  const out = new ParseOut('muse-glimmer', text);
  let pos = 0;
  const first = FIRST_HEADER.exec(text);
  if (first) pos = message(out, { start: 0, started: false });
  while (pos < text.length) {
    // A body cut short by the next message's header (its `<|start|>assistant` missing): that message, from its header.
    if (BARE_HEADER.test(text.slice(pos, pos + 320))) {
      pos = Math.max(message(out, { start: pos, started: false }), pos + 1);
      continue;
    }
    const next = out.find([START], pos);
    const to = next ? next.start : text.length;
    const reached = loose(out, pos, to);
    // An ATEM block outside any message ran past the header: go on after it.
    if (reached > to) {
      pos = reached;
      continue;
    }
    if (!next) break;
    pos = Math.max(message(out, { start: next.start, started: true }), next.end);
  }
  return out.finish();
}

/**
 * Text outside any message: content as the engines keep it. An ATEM block there has no recipient: vLLM still reads it
 * (it scans an output with no framing at all), SGLang leaves it content; it is read and flagged. Returns where the
 * text outside messages ends (past `to` when such a block ran over the next header).
 */
function loose(out: ParseOut, from: number, to: number): number {
  const { text } = out;
  let pos = from;
  while (pos < to) {
    const atem = out.find([CALLS_OPEN, INVOKE_OPEN], pos, to);
    if (!atem) break;
    freeText(out, 'content', pos, atem.start, TEXT_MARKERS);
    const g = sectionGrammar(undefined);
    pos = Math.max(atem.marker === CALLS_OPEN ? parseSection(out, g, atem.start, atem) : parseSection(out, g, atem.start), atem.end);
    pos = Math.min(pos, text.length);
  }
  if (to > pos) freeText(out, 'content', pos, to, TEXT_MARKERS);
  return Math.max(pos, to);
}

/** One message from its header; returns where it ends (past its terminator when it has one). */
function message(out: ParseOut, h: Header): number {
  const { text } = out;
  const headStart = h.started ? h.start + START.length : h.start;
  const msg = out.find([MESSAGE, START, EOM, EOT], headStart);
  const headEnd = msg ? msg.start : text.length;
  const head = text.slice(headStart, headEnd);
  const recipient = RECIPIENT.exec(head)?.[1];
  const tool = recipient !== undefined && recipient !== SELF && recipient !== USER;
  // A tool header cut off before `<|message|>` is the start of its call; any other `<|start|>` is a marker.
  if (h.started && !(tool && !msg)) out.seg('marker', h.start, headStart);
  if (msg?.marker !== MESSAGE) {
    // The header never reached `<|message|>`: cut off, or broken by other markup.
    const cut = firstTruncated(text, MARKERS, headStart, headEnd);
    if (cut && cut.end === text.length)
      out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker });
    else if (!msg)
      out.problem('marker-truncated', `message header cut off before ${MESSAGE}`, h.start, headEnd, {
        marker: MESSAGE,
        expectedAt: headEnd,
      });
    else out.problem('stray-marker', `message header without ${MESSAGE}`, h.start, headEnd, { marker: MESSAGE });
    if (tool && !msg) {
      // A call cut off in its header: the recipient names it, the body never came.
      const at = headStart + head.indexOf(`to=${recipient}`) + 3;
      const index = out.addCall(resolvedName(recipient), '');
      out.seg('call', h.start, Math.max(cut && cut.end === text.length ? cut.start : headEnd, headStart), index);
      out.seg('call-name', ...resolved(text, [at, at + recipient.length]), index);
      callUnclosed(out, index, h.start, headEnd, CALLS_CLOSE, cut ? cut.start : headEnd);
    }
    return cut && cut.end === text.length ? cut.end : headEnd;
  }
  out.seg('marker', msg.start, msg.end);
  const bodyStart = msg.end;
  if (!tool) return textBody(out, bodyStart, recipient === SELF ? 'reasoning' : 'content', h.start);
  return toolBody(out, bodyStart, recipient);
}

/** A `to=self` (reasoning) or `to=user` (content) body, to its terminator. */
function textBody(out: ParseOut, bodyStart: number, kind: 'reasoning' | 'content', headerStart: number): number {
  const { text } = out;
  let stop = out.find([...BODY_ENDS, MESSAGE], bodyStart);
  let bodyEnd = stop ? stop.start : text.length;
  if (stop?.marker === MESSAGE) {
    // The next message's header with its `<|start|>assistant` left out (a known model slip: `to=self` reasoning that
    // writes `to=weather.get<|message|>` instead of `<|eom|><|start|>assistant to=…`). vLLM ends the body there and
    // reads the message; SGLang's reasoning channel runs on to the next `<|eom|>`. The body ends at the header.
    const head = HEADER_BEFORE.exec(text.slice(Math.max(bodyStart, stop.start - 300), stop.start));
    bodyEnd = stop.start - (head ? head[0].length : 0);
    stop = { marker: MESSAGE, start: bodyEnd, end: stop.end };
  }
  const cut = stop ? undefined : firstTruncated(text, [EOM, EOT, START], bodyStart, bodyEnd);
  if (cut && cut.end === text.length) bodyEnd = cut.start;
  freeText(out, kind, bodyStart, bodyEnd, TEXT_MARKERS);
  if (cut && cut.end === text.length) {
    out.seg('marker', cut.start, cut.end);
    out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker });
  }
  if (stop?.marker === EOM) {
    out.seg('marker', stop.start, stop.end);
    return stop.end;
  }
  if (stop?.marker === EOT) {
    out.seg('end', stop.start, stop.end);
    return stop.end;
  }
  const expectedAt = trimRange(text, bodyStart, bodyEnd)[1];
  if (stop?.marker === MESSAGE) {
    const next =
      kind === 'reasoning'
        ? 'vLLM ends the reasoning there and reads that message, SGLang keeps it (a call included) in the reasoning'
        : 'vLLM ends the answer there';
    out.problem(
      'malformed-call',
      `to=${kind === 'reasoning' ? SELF : USER} message not closed by ${EOM}${START}${ROLE} before the next header: ${next}`,
      bodyEnd,
      stop.end,
      { marker: EOM, expectedAt },
    );
  } else if (kind === 'reasoning') {
    // SGLang's reasoning channel runs to the next `<|eom|>`: a message that follows without one is swallowed.
    out.problem('reasoning-unclosed', `to=self message never closed by ${EOM}`, headerStart, cut ? cut.end : bodyEnd, {
      expectedAt,
      marker: EOM,
    });
  } else if (stop) {
    out.problem('stray-marker', `${START} before ${EOM} ended the previous message`, stop.start, stop.end, { marker: START, expectedAt });
  }
  return cut && cut.end === text.length ? cut.end : bodyEnd;
}

/** A tool message: the ATEM block, then its terminator. */
function toolBody(out: ParseOut, bodyStart: number, recipient: string): number {
  const { text } = out;
  const at = skipWs(text, bodyStart);
  let end: number;
  const g = sectionGrammar(recipient);
  if (text.startsWith(CALLS_OPEN, at)) end = parseSection(out, g, at, { marker: CALLS_OPEN, start: at, end: at + CALLS_OPEN.length });
  else if (text.startsWith(INVOKE_OPEN, at)) {
    end = parseSection(out, g, at);
    out.problem('section-unclosed', `the invokes are not wrapped in ${CALLS_OPEN}…${CALLS_CLOSE}`, at, end, {
      marker: CALLS_OPEN,
      expectedAt: at,
    });
  } else {
    // No ATEM block: cut right after the header, or a body that is not one (JSON written into the tool channel).
    const stop = out.find([EOM, EOT, START], at);
    const bodyEnd = stop ? stop.start : text.length;
    const body = trimRange(text, at, bodyEnd);
    const cutShort = !stop && (at >= text.length || endsInMarker(text, at, [CALLS_OPEN, INVOKE_OPEN]));
    const index = out.addCall(resolvedName(recipient), cutShort ? '' : text.slice(...body));
    const callEnd = Math.max(cutShort ? text.length : body[1], at);
    out.seg('call', at, callEnd, index);
    if (!cutShort && body[1] > body[0]) out.seg('arguments', body[0], body[1], index);
    if (stop)
      out.problem('malformed-call', `call ${index}: the message to ${recipient} holds no ${INVOKE_OPEN}…${INVOKE_CLOSE}`, at, callEnd, {
        callIndex: index,
      });
    else callUnclosed(out, index, at, callEnd, CALLS_CLOSE, cutShort ? at : body[1]);
    end = cutShort ? text.length : bodyEnd;
  }
  return terminator(out, end);
}

/** After a tool message's ATEM block: its `<|eom|>` / `<|eot|>`, the next header, or the end of the text. */
function terminator(out: ParseOut, from: number): number {
  const { text } = out;
  const at = skipWs(text, from);
  if (at >= text.length) return text.length;
  if (text.startsWith(EOM, at)) {
    out.seg('marker', at, at + EOM.length);
    return at + EOM.length;
  }
  if (text.startsWith(EOT, at)) {
    out.seg('end', at, at + EOT.length);
    return at + EOT.length;
  }
  if (text.startsWith(START, at)) {
    out.problem('stray-marker', `${START} before ${EOM} ended the tool message`, at, at + START.length, {
      marker: START,
      expectedAt: from,
    });
    return at;
  }
  const cut = truncatedAt(text, at, [EOM, EOT, START]);
  if (cut && cut.end === text.length) {
    out.seg('marker', cut.start, cut.end);
    out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker });
    return cut.end;
  }
  if (endsInMarker(text, at, [EOM, EOT, START])) return text.length;
  // Text after the ATEM block, inside the tool message.
  const stop = out.find([EOM, EOT, START], at);
  const junkEnd = stop ? stop.start : text.length;
  const [js, je] = trimRange(text, at, junkEnd);
  const index = out.calls.length ? out.calls.length - 1 : undefined;
  out.problem(
    'malformed-call',
    'text after the ATEM block, inside the tool message',
    js,
    je,
    index === undefined ? {} : { callIndex: index },
  );
  return junkEnd;
}

function header(out: RenderOut, recipient: string): void {
  out.put(START, 'marker').put(`${ROLE} to=${recipient}`).put(MESSAGE, 'marker');
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const close = closing(m, opts);
  const out = new RenderOut();
  if (present(m.reasoning)) {
    header(out, SELF);
    out.put(m.reasoning!, 'reasoning');
    if (close.reasoning) out.put(EOM, 'marker');
  }
  if (present(m.content)) {
    header(out, USER);
    out.put(m.content!, 'content');
    // A preamble's `<|eom|>` is proven by the calls after it; an answer alone ends the turn.
    if (m.toolCalls.length) out.put(EOM, 'marker');
    else if (close.turn) out.put(EOT, 'end');
  }
  const last = m.toolCalls.length - 1;
  m.toolCalls.forEach((c, i) => {
    header(out, c.name);
    out.wrap('section', () => {
      out.put(`${CALLS_OPEN}\n`);
      out.wrap(
        'call',
        () => {
          out.put(INVOKE_OPEN).put(c.name, 'call-name', i).put('">\n');
          renderParams(out, i, c.arguments, (k, v) => `${PARAM_OPEN}${k}">${v}${PARAM_CLOSE}`);
          if (close.call(i)) out.put(INVOKE_CLOSE);
        },
        i,
      );
      if (close.call(i)) out.put(`\n${CALLS_CLOSE}`);
    });
    if (i < last) out.put(EOM, 'marker');
    else if (close.turn) out.put(EOT, 'end');
  });
  return out.done();
}

const format: ModelFormat = {
  id: 'muse-glimmer',
  displayName: 'Muse Glimmer (ATEM, to=… messages)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // meta-models/Muse-Glimmer-30B, unsloth/Muse-Glimmer-30B-GGUF, mlx-community/Muse-Glimmer-30B-4bit, muse-glimmer-30b.
  matchesModel: (modelId) => /muse[-_ ]?glimmer/.test(modelKey(modelId)),
  // The ATEM tags are Muse Glimmer's own; `<|start|>` and `<|message|>` are Harmony's too, so only a recipient written
  // right before `<|message|>` (Harmony puts its channel there) counts beside them.
  detectText: (text) =>
    scoreText(text, [
      [CALLS_OPEN, 12],
      [INVOKE_OPEN, 8],
      [/to=[^\s<]+<\|message\|>/, 6],
      [EOM, 3],
      [EOT, 3],
    ]),
  generationPrompt: `${START}${ROLE}`,
  render,
  parse,
};

const VLLM = 'vllm-project/vllm vllm/tool_parsers/muse_glimmer_tool_parser.py';
const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/muse_glimmer_detector.py';
const v = (outcome: EngineVerdict['outcome'], text: string): EngineVerdict => ({ outcome, text });
const dynamo = noParser('Dynamo lists no Muse Glimmer parser family');

const verdicts: FamilyVerdicts = {
  family: 'muse-glimmer',
  engines: {
    vllm: {
      release: 'main @ 9c13dbc4',
      parser: 'muse_glimmer',
      code: VLLM,
      evidence: `${VLLM} _iter_messages, _tool_channel_text, _parse_tool_calls @ 9c13dbc4`,
      note: `read from the code: a call is read once its ${INVOKE_CLOSE} arrived, in any message to a tool; ${CALLS_CLOSE} and the terminator are not needed; an output with no header at all is scanned whole`,
    },
    sglang: {
      release: 'main @ 3979a6c7',
      parser: 'muse',
      code: SGLANG,
      evidence: `${SGLANG} parse_streaming_increment, _consume_body, finish @ 3979a6c7; test/registered/unit/function_call/test_muse_glimmer_detector.py @ 0bbef96b (test_truncated_tool_channel_drops_partial_invoke, test_unframed_atem_is_content_not_a_call)`,
      note: `read from the code and its tests: a call is read once its ${INVOKE_CLOSE} arrived inside a tool channel; calls to tools the request does not offer are dropped unless SGLANG_FORWARD_UNKNOWN_TOOLS is set`,
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no muse)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: `${CALLS_CLOSE} missing after a complete ${INVOKE_CLOSE}`,
      verdicts: {
        vllm: v('recovered', `the call is delivered (its ${INVOKE_CLOSE} arrived; a call missing that too is dropped)`),
        sglang: v('recovered', `the call is delivered (its ${INVOKE_CLOSE} arrived; a call missing that too is dropped)`),
        dynamo,
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: `an ATEM block without its to=NAME${MESSAGE} header`,
      verdicts: {
        vllm: v('mixed', 'the call is delivered (an output with no header is scanned whole) and the ATEM text also stays in content'),
        sglang: v('content', 'no call; unframed ATEM stays in content'),
        dynamo,
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside a parameter value',
      verdicts: {
        vllm: v('dropped', 'no call; the cut invoke is dropped'),
        sglang: v('dropped', 'no call; the cut invoke is dropped'),
        dynamo,
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: `the last of several calls lacks only ${CALLS_CLOSE}`,
      verdicts: { vllm: v('recovered', 'every call is delivered'), sglang: v('recovered', 'every call is delivered'), dynamo },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: v('partial', 'the closed calls are delivered, the cut one dropped'),
        sglang: v('partial', 'the closed calls are delivered, the cut one dropped'),
        dynamo,
      },
    },
  ],
};

export const museGlimmer: Family<'muse-glimmer'> = {
  id: 'muse-glimmer',
  format,
  verdicts,
  tokenizer: { repo: 'meta-models/Muse-Glimmer-30B' },
  repair: {
    openers: [START, CALLS_OPEN, INVOKE_OPEN],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
