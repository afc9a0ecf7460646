/**
 * MeetKai Functionary v3.2 ('functionary-v32', llama.cpp `functionary_v3_2`): every part of the reply is addressed
 * to a recipient, `>>>RECIPIENT\n` then its text; `all` is the user, any other recipient a function whose JSON
 * arguments follow:
 *
 *   all\nCONTENT>>>NAME\n{"arg": 1}>>>NAME2\n{…}<|eot_id|>
 *   python\nCODE                                     (the built-in python tool: name `python`, {"code": CODE})
 *
 * The generation prompt ends with `>>>` (`<|start_header_id|>assistant<|end_header_id|>\n\n>>>`), so a completion
 * starts at the first recipient; a completion that starts with `>>>` is read too. Content runs to the next `>>>`.
 * The arguments are the JSON object as written; text after it (other than space) is off-grammar. A reply with no
 * recipient line is read as content. `>>>` is no marker of the chat format's tokenizer, and Python prompts write it in
 * prose, so it is not listed with the markers: the family is told by a recipient line (`>>>all\n`, `>>>NAME\n{`).
 * Functionary does not reason; `<think>` is read as elsewhere.
 * Sources: llama.cpp `common/parsers/functionary-v3-2.cpp` (PEG: `all\n` + content until `>>>`, or NAME + `\n` + JSON
 * arguments, tools repeated), `tests/test-chat.cpp` (template `meetkai-functionary-medium-v3.2.jinja`). vLLM, SGLang and
 * Dynamo register no parser for it.
 */
import type { AssistantMessage, NativeText, ParsedNative } from '../model';
import { noParser, noParserInfo, type FamilyVerdicts } from './shared/verdicts';
import {
  ParseOut,
  RenderOut,
  THINK_CLOSE,
  THINK_OPEN,
  callUnclosed,
  closing,
  endsInMarker,
  freeText,
  jsonValueEnd,
  modelKey,
  present,
  renderThink,
  scoreText,
  skipWs,
  thinkBlock,
  trimRange,
  truncatedAt,
} from './shared';
import type { ModelFormat, RenderOptions } from './shared/format';
import type { Family } from './types';

const SEP = '>>>';
const ALL = 'all';
const PYTHON = 'python';
const EOM = '<|eom_id|>';
const EOT = '<|eot_id|>';
const ENDS = [EOM, EOT];

const TOOL_MARKERS: string[] = [];
/** Closers first: a cut-short fragment reads as the first marker it starts. */
const MARKERS = [EOM, EOT, THINK_CLOSE, '<|start_header_id|>', '<|end_header_id|>', '<|begin_of_text|>', THINK_OPEN];
/** A recipient line: `all` or a function name, then the line break. */
const RECIPIENT = /^([A-Za-z_][\w.-]*)\n/;
const NAME = /^[A-Za-z_][\w.-]*$/;
/** A JSON object opening, as a first block without `>>>` must start to be read as a call (prose has `word\n{`). */
const OBJECT_START = /^\s*\{\s*["}]/;

function parse(text: string): ParsedNative {
  const out = new ParseOut('functionary-v32', text);
  let pos = thinkBlock(out, 0, { implicitOpen: false, stops: [SEP, ...ENDS], turnEnds: ENDS, markers: MARKERS });
  // The first block's `>>>` is the prompt's; a completion may still write it.
  pos = skipWs(text, pos);
  let first = true;
  if (text.startsWith(SEP, pos)) {
    pos += SEP.length;
    first = false;
  }
  while (pos < text.length) {
    pos = block(out, pos, first);
    first = false;
    if (pos >= text.length) break;
    const end = endAt(text, pos);
    if (end) {
      out.seg('end', pos, pos + end.length);
      pos += end.length;
      // What follows the end of turn is text the model should not have written.
      if (pos < text.length) freeText(out, 'content', pos, text.length, MARKERS);
      break;
    }
    // At a `>>>` that starts the next block.
    if (!text.startsWith(SEP, pos)) {
      freeText(out, 'content', pos, text.length, MARKERS);
      break;
    }
    pos += SEP.length;
  }
  return out.finish();
}

function endAt(text: string, pos: number): string | undefined {
  return ENDS.find((e) => text.startsWith(e, pos));
}

/** The next `>>>` that starts a block (a recipient line after it, or the text ending inside one), or an end of turn. */
function nextBoundary(out: ParseOut, from: number): number {
  const { text } = out;
  let at = from;
  for (;;) {
    const hit = out.find([SEP, ...ENDS], at);
    if (!hit) return text.length;
    if (hit.marker !== SEP) return hit.start;
    const after = text.slice(hit.end, hit.end + 128);
    if (RECIPIENT.test(after) || (hit.end + after.length === text.length && /^[A-Za-z_][\w.-]*$/.test(after))) return hit.start;
    at = hit.end;
  }
}

/** One block from `pos` (just after its `>>>`, or the reply's start for the first); returns where it ends. */
function block(out: ParseOut, pos: number, first: boolean): number {
  const { text } = out;
  const nl = text.indexOf('\n', pos);
  const lineEnd = nl < 0 ? text.length : nl;
  const recipient = text.slice(pos, lineEnd).trim();
  if (
    first &&
    !(nl >= 0 && NAME.test(recipient) && (recipient === ALL || recipient === PYTHON || OBJECT_START.test(text.slice(nl + 1, nl + 64))))
  ) {
    // No recipient line: the reply is read as content to the next block.
    const end = nextBoundary(out, pos);
    freeText(out, 'content', pos, end, MARKERS);
    return end;
  }
  if (nl < 0 || !NAME.test(recipient)) {
    // Cut off inside the recipient line: a call whose name arrived (`all` would be the user's).
    const range = trimRange(text, pos, lineEnd);
    if (range[1] > range[0] && !ALL.startsWith(recipient) && NAME.test(recipient)) {
      const index = out.addCall(recipient, '');
      out.seg('call', range[0], range[1], index);
      out.seg('call-name', range[0], range[1], index);
      callUnclosed(out, index, range[0], range[1], '\n', range[1]);
    }
    return text.length;
  }
  const bodyStart = nl + 1;
  if (recipient === ALL) {
    const end = nextBoundary(out, bodyStart);
    freeText(out, 'content', bodyStart, end, MARKERS);
    return end;
  }
  return call(out, pos, recipient, bodyStart);
}

/** A call block: `NAME\n` then its JSON arguments (the python tool: its code). */
function call(out: ParseOut, start: number, name: string, bodyStart: number): number {
  const { text } = out;
  const index = out.calls.length;
  const at = skipWs(text, bodyStart);
  const nameRange: [number, number] = [start, start + name.length];
  if (name === PYTHON && text[at] !== '{') {
    // The python tool's code runs to the next block.
    const end = nextBoundary(out, bodyStart);
    const code = trimRange(text, bodyStart, end);
    out.addCall(name, JSON.stringify({ code: text.slice(...code) }));
    out.seg('call', start, Math.max(code[1], nameRange[1]), index);
    out.seg('call-name', ...nameRange, index);
    if (code[1] > code[0]) out.seg('arguments', code[0], code[1], index);
    return end;
  }
  const jsonEnd = text[at] === '{' ? jsonValueEnd(text, at) : -1;
  if (jsonEnd < 0) {
    const end = nextBoundary(out, bodyStart);
    const body = trimRange(text, bodyStart, end);
    out.addCall(name, text.slice(...body));
    out.seg('call', start, Math.max(body[1], nameRange[1]), index);
    out.seg('call-name', ...nameRange, index);
    if (body[1] > body[0]) out.seg('arguments', body[0], body[1], index);
    if (end === text.length && (text[at] === '{' || at >= text.length)) {
      // Cut off inside the arguments (or before them): what arrived.
      callUnclosed(out, index, start, Math.max(body[1], nameRange[1]), '}', Math.max(body[1], bodyStart));
    } else {
      out.problem('malformed-call', `call ${index}: the arguments are not a JSON object`, start, Math.max(body[1], nameRange[1]), {
        callIndex: index,
      });
    }
    return end;
  }
  out.addCall(name, text.slice(at, jsonEnd));
  out.seg('call', start, jsonEnd, index);
  out.seg('call-name', ...nameRange, index);
  out.seg('arguments', at, jsonEnd, index);
  // Only space may follow the arguments before the next block; the text may end inside a `>>>` or an end of turn.
  const end = nextBoundary(out, jsonEnd);
  const rest = trimRange(text, jsonEnd, end);
  if (rest[1] === text.length && (SEP.startsWith(text.slice(...rest)) || endsInMarker(text, rest[0], ENDS))) {
    const cut = truncatedAt(text, rest[0], ENDS);
    if (cut) out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker });
    return text.length;
  }
  if (rest[1] > rest[0])
    out.problem('malformed-call', `call ${index}: text after the JSON arguments`, rest[0], rest[1], { callIndex: index });
  return end;
}

function render(m: AssistantMessage, opts?: RenderOptions): NativeText {
  const close = closing(m, opts);
  const out = new RenderOut();
  renderThink(out, m.reasoning, false, close.reasoning);
  // `>>>` between blocks; the first block's is the prompt's.
  let blocks = 0;
  if (present(m.content)) {
    blocks++;
    out.put(`${ALL}\n`).put(m.content!, 'content');
  }
  m.toolCalls.forEach((c, i) => {
    if (blocks++ > 0) out.put(SEP);
    out.wrap('call', () => out.put(c.name, 'call-name', i).put('\n').put(c.arguments, 'arguments', i), i);
  });
  if (close.turn) out.put(EOT, 'end');
  return out.done();
}

const format: ModelFormat = {
  id: 'functionary-v32',
  displayName: 'Functionary v3.2 (>>>recipient)',
  // The reply's first recipient line follows the prompt's `>>>`: a call needs no marker.
  markerless: true,
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // meetkai/functionary-small-v3.2, functionary-medium-v3.2 (and their -GGUF repos). v3.1 writes <function=NAME>.
  matchesModel: (modelId) => /functionary[\w.-]*v3\.2(?![\d])/.test(modelKey(modelId)),
  // Only a recipient line after `>>>` (a Python prompt writes `>>> code`, never `>>>all\n` or `>>>NAME\n{`).
  detectText: (text) =>
    scoreText(text, [
      [/>>>all\n/, 12],
      [/>>>[A-Za-z_][\w.-]*\n\s*\{/, 10],
    ]),
  render,
  parse,
};

// No engine of the three serves it: vLLM's and SGLang's parser tables and Dynamo's parser map hold no Functionary
// entry (llama.cpp reads it, see the header).
const vllm = noParser('vLLM registers no Functionary parser');
const sglang = noParser('SGLang registers no Functionary parser');
const dynamo = noParser('Dynamo lists no Functionary parser family');
const all = { vllm, sglang, dynamo };

const verdicts: FamilyVerdicts = {
  family: 'functionary-v32',
  engines: {
    vllm: noParserInfo(
      'main @ 0064cc9c',
      'vllm-project/vllm vllm/tool_parsers/__init__.py _TOOL_PARSERS_TO_REGISTER @ 0064cc9c (no functionary)',
    ),
    sglang: noParserInfo(
      'main @ 042de61b',
      'sgl-project/sglang python/sglang/srt/function_call/parser_names.py TOOL_CALL_PARSER_NAMES @ 042de61b (no functionary)',
    ),
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v1/src/tool_calling/parsers.rs get_tool_parser_map @ 117eab15 (no functionary)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'canonical',
      calls: 'single',
      what: `one call in the canonical NAME\\n{…} form (nothing closes a call)`,
      verdicts: all,
    },
    { id: '5.c', class: 'unclosed-truncated', calls: 'single', what: 'output stopped inside the JSON arguments', verdicts: all },
    { id: '5.d', class: 'canonical', calls: 'multi', what: `several calls in the canonical ${SEP}NAME\\n{…} form`, verdicts: all },
    { id: '5.e', class: 'unclosed-truncated', calls: 'multi', what: 'the last of several calls cut off mid-value', verdicts: all },
  ],
};

export const functionaryV32: Family<'functionary-v32'> = {
  id: 'functionary-v32',
  format,
  verdicts,
  tokenizer: { repo: 'meetkai/functionary-small-v3.2' },
  repair: {
    openers: [SEP],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};
