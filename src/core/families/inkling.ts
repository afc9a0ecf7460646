/**
 * Inkling (Thinking Machines) ('inkling'): a turn is a run of typed blocks, each a special token, a body and
 * `<|end_message|>`, the blocks after the first opened by `<|message_model|>` (the generation prompt ends with one):
 *
 *   <|content_thinking|>REASONING<|end_message|>
 *   <|message_model|><|content_text|>CONTENT<|end_message|>
 *   <|message_model|>NAME<|content_invoke_tool_json|>{"args":{…},"name":"NAME"}<|end_message|>
 *   <|content_model_end_sampling|>
 *
 * The call payload is one JSON object with the tool's name under `name` and its arguments under `args` (not
 * `arguments`); the chat template writes `args` first, the engines' own examples `name` first, and every parser
 * reads either order (JSON). The `NAME` between `<|message_model|>` and `<|content_invoke_tool_json|>` is a header:
 * metadata, never content; SGLang's first Inkling detector dropped a call whose header and payload names differ, the
 * current one and vLLM take the payload's. A block may also end with `<|content_model_end_sampling|>`, the turn's stop
 * token. `<|content_invoke_tool_text|>` and `<|content_tool_error|>` blocks are read as text (vLLM `inkling.py`).
 * Sources: vLLM `vllm/parser/inkling.py`, SGLang `python/sglang/srt/function_call/inkling_detector.py`, Dynamo
 * frontend-crates `try_tool_call_parse_inkling`, and their tests.
 *
 * `render` opens with the prompt's `<|message_model|>` (`generationPrompt`) so every block reads alike. A call's
 * segment runs from `<|content_invoke_tool_json|>` to its `<|end_message|>`; its name is the payload's (the header's
 * when the payload has none yet: a call cut before its `"name"`). Arguments are the raw text of `args`.
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../model';
import type { FamilyVerdicts } from './shared/verdicts';
import {
  ParseOut,
  RenderOut,
  callUnclosed,
  closing,
  endsInMarker,
  freeText,
  jsonMembers,
  jsonValueEnd,
  modelKey,
  present,
  scoreText,
  skipWs,
  trimRange,
  truncatedAt,
  type JsonMember,
  type MarkerHit,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { Family } from './types';

const MESSAGE_MODEL = '<|message_model|>';
const TEXT = '<|content_text|>';
const THINKING = '<|content_thinking|>';
const INVOKE = '<|content_invoke_tool_json|>';
const INVOKE_TEXT = '<|content_invoke_tool_text|>';
const TOOL_ERROR = '<|content_tool_error|>';
const END_SAMPLING = '<|content_model_end_sampling|>';
const END_MESSAGE = '<|end_message|>';

const TOOL_MARKERS = [INVOKE, INVOKE_TEXT];
/** Ordered so a cut-short fragment reads as the marker most often cut: a block's end first. */
const MARKERS = [
  END_MESSAGE,
  END_SAMPLING,
  INVOKE,
  MESSAGE_MODEL,
  TEXT,
  THINKING,
  INVOKE_TEXT,
  TOOL_ERROR,
  '<|message_user|>',
  '<|message_system|>',
  '<|message_tool|>',
  '<|content_xml|>',
  '<|endoftext|>',
];
/** What opens a block (after the optional header). */
const KINDS = [TEXT, THINKING, INVOKE, INVOKE_TEXT, TOOL_ERROR];
/** What the turn loop stops at. */
const STRUCTURE = [MESSAGE_MODEL, ...KINDS, END_MESSAGE, END_SAMPLING];
/** A header: one word (a tool or author name). */
const HEADER = /^\s*[^\s<>|]{1,256}\s*$/;

const format: ModelFormat = {
  id: 'inkling',
  displayName: 'Inkling (Thinking Machines)',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  generationPrompt: MESSAGE_MODEL,
  // thinkingmachines/Inkling, Inkling-Small, Inkling-NVFP4, Inkling-Small-NVFP4; OpenRouter thinkingmachines/inkling(-small).
  matchesModel: (modelId) => /^inkling(?![a-z0-9])/.test(modelKey(modelId)),
  detectText: (text) =>
    scoreText(text, [
      [INVOKE, 10],
      [MESSAGE_MODEL, 6],
      [END_MESSAGE, 4],
      [THINKING, 4],
      [END_SAMPLING, 4],
      [TEXT, 3],
    ]),
  render,
  parse,
};

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const close = closing(m, opts);
  const out = new RenderOut();
  // The prompt's own `<|message_model|>`, then one before every further block.
  let blocks = 0;
  const block = () => {
    if (blocks++ > 0) out.put(MESSAGE_MODEL, 'marker');
  };
  out.put(MESSAGE_MODEL, 'marker');
  if (present(m.reasoning)) {
    block();
    out.put(THINKING, 'marker').put(m.reasoning!, 'reasoning');
    if (close.reasoning) out.put(END_MESSAGE, 'marker');
  }
  if (present(m.content)) {
    block();
    out.put(TEXT, 'marker').put(m.content!, 'content');
    if (close.turn || m.toolCalls.length) out.put(END_MESSAGE, 'marker');
  }
  m.toolCalls.forEach((c, i) => {
    block();
    out.put(c.name);
    out.wrap(
      'call',
      () => {
        out.put(`${INVOKE}{"args":`).put(c.arguments, 'arguments', i);
        if (!close.call(i)) return;
        const name = JSON.stringify(c.name);
        out.put(',"name":"');
        if (name === `"${c.name}"` && c.name) out.put(c.name, 'call-name', i);
        else out.put(name.slice(1, -1));
        out.put(`"}${END_MESSAGE}`);
      },
      i,
    );
  });
  if (close.turn) out.put(END_SAMPLING, 'end');
  return out.done();
}

function parse(text: string): ParsedNative {
  const out = new ParseOut('inkling', text);
  let pos = 0;
  // Right after `<|message_model|>` (the prompt ends with one): a word before the block kind is its header.
  let afterHeader = true;
  let header: [number, number] | undefined;
  while (pos < text.length) {
    const next = out.find(STRUCTURE, pos);
    const to = next ? next.start : text.length;
    header = undefined;
    if (afterHeader && next && KINDS.includes(next.marker) && to > pos && HEADER.test(text.slice(pos, to))) {
      header = trimRange(text, pos, to);
    } else if (to > pos && next?.marker === END_MESSAGE && orphan(out, pos, to, next)) {
      pos = next.end;
      afterHeader = false;
      continue;
    } else if (to > pos) {
      freeText(out, 'content', pos, to, MARKERS);
    }
    if (!next) break;
    afterHeader = false;
    switch (next.marker) {
      case MESSAGE_MODEL:
        out.seg('marker', next.start, next.end);
        afterHeader = true;
        pos = next.end;
        break;
      case INVOKE:
        pos = call(out, next, header);
        break;
      case THINKING:
        pos = block(out, next, 'reasoning');
        break;
      case TEXT:
      case INVOKE_TEXT:
      case TOOL_ERROR:
        pos = block(out, next, 'content');
        break;
      case END_SAMPLING:
        out.seg('end', next.start, next.end);
        pos = next.end;
        break;
      default:
        // `<|end_message|>` closing the first block when it had no kind (bare text after the prompt).
        out.seg('marker', next.start, next.end);
        pos = next.end;
    }
  }
  return out.finish();
}

/**
 * A call payload right before an `<|end_message|>`, outside any block: the call lost its `<|content_invoke_tool_json|>`.
 * The text before it stays content; the call is kept and flagged. False when the text is no such payload.
 */
function orphan(out: ParseOut, from: number, to: number, close: MarkerHit): boolean {
  const { text } = out;
  const [s, e] = trimRange(text, from, to);
  if (text[e - 1] !== '}') return false;
  // The payload: the first `{"` (of a few) whose balanced JSON value ends right at `e`.
  const region = text.slice(s, e);
  let start = -1;
  let tries = 0;
  for (let i = region.indexOf('{"'); i >= 0 && tries++ < 16; i = region.indexOf('{"', i + 1)) {
    if (jsonValueEnd(text, s + i, e) === e) {
      start = s + i;
      break;
    }
  }
  if (start < 0) return false;
  const members = jsonMembers(text, start, e) ?? [];
  const nameMember = members.find((m) => m.key === 'name');
  const argsMember = members.find((m) => m.key === 'args');
  const name = stringOf(text, nameMember);
  if (name === undefined || !argsMember) return false;
  if (start > from) freeText(out, 'content', from, start, MARKERS);
  const index = out.addCall(name, text.slice(...argsMember.valueRange));
  out.seg('call', start, close.end, index);
  if (text.slice(nameMember!.valueRange[0] + 1, nameMember!.valueRange[1] - 1) === name && name)
    out.seg('call-name', nameMember!.valueRange[0] + 1, nameMember!.valueRange[1] - 1, index);
  out.seg('arguments', argsMember.valueRange[0], argsMember.valueRange[1], index);
  out.problem('malformed-call', `call ${index}: a call payload and ${END_MESSAGE} without ${INVOKE}`, start, close.end, {
    callIndex: index,
  });
  return true;
}

/** A reasoning or text block from its kind marker. Returns where it ends. */
function block(out: ParseOut, hit: MarkerHit, kind: 'reasoning' | 'content'): number {
  const { text } = out;
  out.seg('marker', hit.start, hit.end);
  const stop = out.find(STRUCTURE, hit.end);
  const to = stop ? stop.start : text.length;
  freeText(out, kind, hit.end, to, MARKERS);
  if (stop?.marker === END_MESSAGE) {
    out.seg('marker', stop.start, stop.end);
    return stop.end;
  }
  if (stop?.marker === END_SAMPLING) return to;
  if (kind === 'reasoning') {
    out.problem('reasoning-unclosed', `${THINKING} never closed by ${END_MESSAGE}`, hit.start, to, {
      expectedAt: Math.max(trimRange(text, hit.end, to)[1], hit.end),
      marker: END_MESSAGE,
    });
  }
  return to;
}

/** The decoded string of a complete JSON string member, if it is one. */
function stringOf(text: string, m: JsonMember | undefined): string | undefined {
  if (!m?.complete) return undefined;
  try {
    const v: unknown = JSON.parse(text.slice(...m.valueRange));
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** One call from its `<|content_invoke_tool_json|>` (`hit`); `header`: the name before it. Returns where it ends. */
function call(out: ParseOut, hit: MarkerHit, header: [number, number] | undefined): number {
  const { text } = out;
  const index = out.calls.length;
  const headerName = header ? text.slice(...header) : undefined;
  const defects: string[] = [];
  const at = skipWs(text, hit.end);
  const jsonEnd = text[at] === '{' ? jsonValueEnd(text, at) : -1;
  const complete = jsonEnd >= 0;
  // Where the payload stops when it is not a whole object: its <|end_message|>, the next block, or the end.
  const stop = complete ? undefined : out.find(STRUCTURE, hit.end);
  const bodyEnd = complete ? jsonEnd : stop ? stop.start : text.length;
  const members = text[at] === '{' ? (jsonMembers(text, at, bodyEnd) ?? []) : [];
  const nameMember = members.find((m) => m.key === 'name');
  const argsMember = members.find((m) => m.key === 'args') ?? members.find((m) => m.key === 'arguments' || m.key === 'parameters');
  const payloadName = stringOf(text, nameMember);
  const name = payloadName ?? headerName ?? '';

  let end: number;
  let closed = false;
  let expectedAt = bodyEnd;
  let args: string;
  let argRange: [number, number] | undefined;
  if (complete) {
    argRange = argsMember?.valueRange;
    args = argsMember ? text.slice(...argsMember.valueRange) : '{}';
    if (payloadName === undefined)
      defects.push(
        nameMember ? '"name" is not a string' : `the payload has no "name"${headerName ? ` (the header names '${headerName}')` : ''}`,
      );
    else if (headerName !== undefined && headerName !== payloadName)
      defects.push(`the header names '${headerName}' but the payload '${payloadName}'`);
    if (!argsMember) defects.push('the payload has no "args"');
    else if (argsMember.key !== 'args') defects.push(`the arguments are under "${argsMember.key}", not "args"`);
    else if (text[argsMember.valueRange[0]] !== '{') defects.push('"args" is not a JSON object');
    const after = skipWs(text, jsonEnd);
    const cut = truncatedAt(text, after, [END_MESSAGE, END_SAMPLING]);
    if (text.startsWith(END_MESSAGE, after)) {
      end = after + END_MESSAGE.length;
      closed = true;
    } else if (text.startsWith(END_SAMPLING, after)) {
      // The turn's stop token ends the block too; it stays the turn's end.
      end = jsonEnd;
      closed = true;
    } else if (cut) {
      out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker, callIndex: index });
      end = cut.end;
      expectedAt = cut.start;
    } else if (after < text.length && endsInMarker(text, after, [END_MESSAGE])) {
      end = text.length;
    } else {
      const next = out.find(STRUCTURE, jsonEnd);
      if (next?.marker === END_MESSAGE && !out.find(['<|'], jsonEnd, next.start)) {
        defects.push(`text between the payload and ${END_MESSAGE}`);
        end = next.end;
        closed = true;
      } else end = jsonEnd;
    }
  } else if (stop?.marker === END_MESSAGE || (text[at] !== '{' && stop !== undefined)) {
    // A payload that is not a JSON object, ended by its <|end_message|> or by the next block.
    const body = trimRange(text, hit.end, bodyEnd);
    argRange = body[1] > body[0] ? body : undefined;
    args = text.slice(...body);
    defects.push('the payload is not a JSON object');
    end = stop.marker === END_MESSAGE ? stop.end : bodyEnd;
    closed = true;
  } else {
    // Cut short inside the payload: what arrived.
    argRange = argsMember && argsMember.valueRange[1] > argsMember.valueRange[0] ? argsMember.valueRange : undefined;
    args = argRange ? text.slice(...argRange) : '';
    end = Math.max(trimRange(text, hit.end, bodyEnd)[1], hit.end);
    expectedAt = end;
  }

  out.addCall(name, args);
  out.seg('call', hit.start, Math.max(end, hit.end), index);
  if (nameMember && payloadName && text.slice(nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1) === payloadName) {
    out.seg('call-name', nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1, index);
  }
  if (argRange && argRange[1] > argRange[0]) out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed) callUnclosed(out, index, hit.start, Math.max(end, hit.end), END_MESSAGE, Math.max(expectedAt, hit.end));
  if (defects.length)
    out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, hit.start, Math.max(end, hit.end), { callIndex: index });
  return Math.max(end, hit.end);
}

// Verdicts read from the parsers' non-streaming code and their tests (no conformance fixture covers Inkling). The
// conformance-style inputs write the payload as the chat template does, `args` before `name`: vLLM finds a cut call's
// name only in the payload, so what it does with a cut call depends on that order.
const VLLM_CODE = 'vllm-project/vllm vllm/parser/inkling.py';
const SGLANG_CODE = 'sgl-project/sglang python/sglang/srt/function_call/inkling_detector.py';
const DYNAMO_CODE = 'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/inkling (try_tool_call_parse_inkling)';

const verdicts: FamilyVerdicts = {
  family: 'inkling',
  engines: {
    vllm: {
      release: 'main @ b861f0c0',
      parser: 'inkling',
      code: VLLM_CODE,
      evidence: `${VLLM_CODE} inkling_config, vllm/parser/engine/parser_engine.py _build_extracted_result @ b861f0c0 / 001ba1eb; tests/parser/engine/test_inkling.py test_incomplete_tool_call_at_eos @ 019dd4b7`,
      note: 'read from the code; no conformance fixture. A call still open at the end of output is delivered with what arrived, named from the payload\'s "name"',
    },
    sglang: {
      release: 'main @ 4d9d5463',
      parser: 'inkling',
      code: SGLANG_CODE,
      evidence: `${SGLANG_CODE} detect_and_parse (_parse_canonical, _recover_last_json_call), pinned by test/registered/unit/function_call/test_inkling_detector.py @ 4d9d5463`,
      note: 'read from the code; no conformance fixture. The earlier detector (@ 0fbab45d) read only calls closed by <|end_message|>: an unclosed one was dropped with all text after its opener. Streamed, a call still buffered when the output ends comes back as text at finish() (test/registered/unit/function_call/test_inkling_detector_finish.py test_partial_tool_call_at_end_is_flushed @ 5b8a7564)',
    },
    dynamo: {
      release: 'main @ 117eab15',
      parser: 'inkling',
      code: DYNAMO_CODE,
      evidence: `${DYNAMO_CODE}; parsers/v1/src/tool_calling/parsers.rs detect_and_parse_tool_call_with_recovery (allow_eof_recovery) @ 117eab15`,
      note: 'read from the code and its unit tests; no conformance fixture',
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: '<|end_message|> missing after a complete payload',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'the call is delivered' },
        sglang: { outcome: 'recovered', text: 'the call is delivered (read through the end of output); any text before it is dropped' },
        dynamo: { outcome: 'recovered', text: 'the call is delivered (EOF recovery on the non-streaming and finalize path)' },
      },
    },
    {
      id: '5.b',
      class: 'orphan-close',
      calls: 'single',
      what: 'a call payload and <|end_message|> without <|content_invoke_tool_json|>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the payload stays in content' },
        sglang: { outcome: 'content', text: 'no call; the payload stays in content, the special tokens stripped' },
        dynamo: { outcome: 'content', text: 'no call; the payload stays in content, <|end_message|> stripped' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the payload',
      verdicts: {
        vllm: {
          outcome: 'dropped',
          text: 'no call when "name" had not arrived ("args" first, as the template writes it); with "name" first the call is delivered with its cut arguments',
        },
        sglang: { outcome: 'content', text: 'no call; the whole output goes to content, its special tokens stripped' },
        dynamo: { outcome: 'dropped', text: 'no call; the cut payload is dropped, the text before it stays' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only <|end_message|>',
      verdicts: {
        vllm: { outcome: 'recovered', text: 'every call is delivered' },
        sglang: {
          outcome: 'partial',
          text: 'only the last call is delivered (read through the end of output); the earlier calls and the text are dropped',
        },
        dynamo: { outcome: 'recovered', text: 'every call is delivered' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: {
          outcome: 'partial',
          text: 'the complete calls are delivered; the cut one is dropped when its "name" had not arrived, else delivered with its cut arguments',
        },
        sglang: {
          outcome: 'content',
          text: 'no call; the whole output, the complete calls included, goes to content with its special tokens stripped',
        },
        dynamo: { outcome: 'partial', text: 'the complete calls are delivered, the cut one dropped' },
      },
    },
  ],
};

export const inkling: Family<'inkling'> = {
  id: 'inkling',
  format,
  verdicts,
  tokenizer: { repo: 'thinkingmachines/Inkling' },
  repair: {
    openers: [INVOKE, MESSAGE_MODEL],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
