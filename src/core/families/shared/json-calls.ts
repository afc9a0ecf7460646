/**
 * Calls written as JSON objects `{"name": …, "arguments": {…}}` after an opener: a JSON array of them (Mistral
 * `[TOOL_CALLS][…]`, Jamba `<tool_calls>[…]</tool_calls>`, Nemotron `<TOOLCALL>[…]</TOOLCALL>`, Phi-4 `functools[…]`)
 * or objects separated by `;` (Llama 3 `<|python_tag|>{…};{…}`). A family states its grammar as a `JsonCallsGrammar`;
 * this module parses and renders it. Arguments are the raw text of the `arguments` (or `parameters`) member, never
 * re-serialized, so `parse(render(m)) = m` holds byte for byte.
 *
 * Problems: an object cut off is `call-unclosed` (its closing `}` missing) and kept with what arrived; a list whose
 * `]` or closer never came is `section-unclosed`; a list that is not one (`functools{…}`) is `malformed-call`.
 */
import type { AssistantMessage, FamilyId, NativeText, ParsedNative } from '../../model';
import type { ModelFormat, RenderOptions } from './format';
import type { ParseOut } from './build';
import {
  endsInMarker,
  jsonMembers,
  jsonStringMember,
  jsonValueEnd,
  scoreText,
  skipWs,
  trimRange,
  truncatedAt,
  type MarkerHit,
} from './text';
import { callUnclosed, parseTurn, renderStart, type ThinkTags, type TurnGrammar } from './turn';
import { renderObjectCall } from './json-object-call';

export interface JsonCallsGrammar {
  family: FamilyId;
  /** Every marker of the family (the opener and closer included). */
  markers: readonly string[];
  toolMarkers: readonly string[];
  /** What opens the calls (`[TOOL_CALLS]`, `<tool_calls>`, `functools`, `<|python_tag|>`). */
  open: string;
  /** What closes them (`</tool_calls>`); absent when nothing does. */
  close?: string;
  /** The closer may be left out (Mistral's wire form has none, its conformance fixtures write one). */
  closeOptional?: boolean;
  /** `array`: one JSON array of call objects; `semicolon`: objects separated by `;` (Llama 3). */
  list: 'array' | 'semicolon';
  /** Members that carry the arguments; the first is the one render writes. */
  argKeys: readonly string[];
  /** End-of-turn markers; render writes the first. */
  ends: readonly string[];
  implicitThink: boolean;
  think?: ThinkTags;
  /** A call list with no opener is also read when the turn starts with one (Llama 3's bare JSON call). */
  bare?: boolean;
  /** `NAME[ARGS]{…}` after the opener instead of a list (Mistral v11+): the marker between the name and the JSON. */
  named?: string;
  /** The member that carries the name, when not `name` (Cohere Command: `tool_name`). */
  nameKey?: string;
}

export function parseJsonCalls(g: JsonCallsGrammar, text: string): ParsedNative {
  return parseTurn(turnGrammar(g), text);
}

const grammars = new WeakMap<JsonCallsGrammar, TurnGrammar>();

function turnGrammar(g: JsonCallsGrammar): TurnGrammar {
  let t = grammars.get(g);
  if (!t) {
    t = {
      family: g.family,
      markers: g.markers,
      toolMarkers: g.toolMarkers,
      implicitThink: g.implicitThink,
      think: g.think,
      ends: g.ends,
      ...jsonCallStarters(g),
    };
    grammars.set(g, t);
  }
  return t;
}

/** The starters and patterns of a JSON-calls grammar, for a family that reads them beside its own (Llama 4). */
export function jsonCallStarters(g: JsonCallsGrammar): Pick<TurnGrammar, 'starters' | 'patterns'> {
  return {
    starters: [{ marker: g.open, parse: (out, start, hit) => section(out, g, start, hit) }],
    patterns: g.bare ? [{ find: (text, from) => bareStart(g, text, from), parse: (out, start) => section(out, g, start) }] : [],
  };
}

/** A bare call list starts the turn (after whitespace): `{"name"` or `[{"name"`. */
function bareStart(g: JsonCallsGrammar, text: string, from: number): number {
  if (from > 0 && text.slice(0, from).trim() !== '') return -1;
  const at = skipWs(text, from);
  const re = g.list === 'array' ? /^\[\s*\{\s*"name"/ : /^\{\s*"name"/;
  return re.test(text.slice(at, at + 64)) ? at : -1;
}

/** The calls from `start` (`hit`: the opener, absent for a bare list). Returns where they end. */
function section(out: ParseOut, g: JsonCallsGrammar, start: number, hit?: MarkerHit): number {
  const { text } = out;
  let pos = skipWs(text, hit ? hit.end : start);
  if (pos >= text.length) {
    // Cut off right after the opener.
    out.seg('section', start, hit ? hit.end : start);
    if (hit)
      out.problem('section-unclosed', `${g.open} never followed by its calls`, start, hit.end, {
        expectedAt: hit.end,
        marker: g.close ?? '[',
      });
    return text.length;
  }
  if (g.named && text[pos] !== '[' && text[pos] !== '{') return namedCalls(out, g, start, pos);
  let inList = false;
  if (g.list === 'array') {
    if (text[pos] !== '[') return notAList(out, g, start, pos, hit);
    inList = true;
    pos++;
  }
  let lastEnd = pos;
  let listClosed = false;
  let cut = false;
  for (;;) {
    pos = skipWs(text, pos);
    if (inList && text[pos] === ']') {
      listClosed = true;
      lastEnd = pos + 1;
      break;
    }
    if (text[pos] !== '{') break;
    const end = jsonValueEnd(text, pos);
    if (end < 0) {
      lastEnd = readCall(out, g, pos, text.length, false);
      cut = true;
      break;
    }
    lastEnd = readCall(out, g, pos, end, true);
    pos = skipWs(text, end);
    if (text[pos] === (inList ? ',' : ';')) {
      pos++;
      continue;
    }
    if (!inList) break;
    // Two calls with no comma between them: the list is not JSON, so a parser that loads it whole takes no call from
    // it (Ollama model/parsers/cohere_test.go repairs the "missing comma between calls"; the engines that load the list
    // as JSON do not). The calls are still read.
    if (text[pos] === '{')
      out.problem('malformed-call', `no , between two calls of the ${g.open} list`, end, pos + 1, { callIndex: out.calls.length - 1 });
  }
  let end = lastEnd;
  let unclosed: string | undefined;
  if (inList && !listClosed) {
    unclosed = ']';
    if (!cut && pos < text.length && !text.startsWith(g.close ?? '\u0000', pos)) {
      // Something other than a call or `]` inside the list.
      const stop = g.close ? out.find([g.close, ...g.ends], pos) : out.find(g.ends, pos);
      const [js, je] = trimRange(text, pos, stop ? stop.start : text.length);
      if (je > js) out.problem('malformed-call', `text inside the ${g.open} call list, outside any call`, js, je);
      end = lastEnd = Math.max(lastEnd, je);
    }
  }
  if (g.close && !cut) {
    const at = skipWs(text, end);
    if (text.startsWith(g.close, at)) end = at + g.close.length;
    else {
      const broken = truncatedAt(text, at, [g.close]);
      if (broken) {
        out.problem('marker-truncated', `${g.close} is cut short`, broken.start, broken.end, { marker: g.close });
        end = broken.end;
        unclosed ??= g.close;
      } else if (at >= text.length && endsInMarker(text, at, [g.close])) {
        end = text.length;
        unclosed ??= g.close;
      } else if (!g.closeOptional) unclosed ??= g.close;
    }
  }
  out.seg('section', start, end);
  if (unclosed || cut) {
    const marker = unclosed === ']' && g.close && !g.closeOptional ? g.close : (unclosed ?? g.close ?? ']');
    out.problem('section-unclosed', `${hit ? g.open : 'the call list'} never closed by ${marker}`, start, end, {
      expectedAt: lastEnd,
      marker,
    });
  }
  return end;
}

/** The opener is not followed by a list: what follows up to the next marker is a malformed call. */
function notAList(out: ParseOut, g: JsonCallsGrammar, start: number, pos: number, hit?: MarkerHit): number {
  const { text } = out;
  const stop = out.find([...(g.close ? [g.close] : []), ...g.ends, g.open], pos);
  const bodyEnd = stop ? stop.start : text.length;
  const end = stop && stop.marker === g.close ? stop.end : bodyEnd;
  const body = trimRange(text, pos, bodyEnd);
  // A lone object where the list belongs (`functools{…}]`): keep the call, flag the missing `[`.
  if (text[pos] === '{') {
    const objEnd = jsonValueEnd(text, pos, bodyEnd);
    readCall(out, g, pos, objEnd < 0 ? bodyEnd : objEnd, objEnd >= 0);
  } else if (body[1] > body[0]) {
    out.addCall('', text.slice(...body));
    out.seg('call', body[0], body[1], out.calls.length - 1);
  }
  out.seg('section', start, end);
  const index = out.calls.length ? out.calls.length - 1 : undefined;
  out.problem(
    'malformed-call',
    `${hit ? g.open : 'the call list'} is not followed by a JSON array of calls`,
    start,
    end,
    index === undefined ? {} : { callIndex: index },
  );
  return Math.max(end, pos + 1);
}

/** Mistral v11+: `NAME[ARGS]{…}` after the opener. */
function namedCalls(out: ParseOut, g: JsonCallsGrammar, start: number, pos: number): number {
  const { text } = out;
  const named = g.named!;
  const nameEnd = out.find([named, ...g.ends, g.open], pos);
  if (nameEnd?.marker !== named) return notAList(out, g, start, pos, { marker: g.open, start, end: pos });
  const nameRange = trimRange(text, pos, nameEnd.start);
  const argStart = skipWs(text, nameEnd.end);
  const argEnd = jsonValueEnd(text, argStart);
  const complete = argEnd >= 0;
  const argRange = complete ? [argStart, argEnd] : trimRange(text, argStart, text.length);
  const index = out.addCall(text.slice(...nameRange), text.slice(argRange[0], argRange[1]));
  const end = argRange[1];
  out.seg('section', start, Math.max(end, nameEnd.end));
  out.seg('call', nameRange[0], Math.max(end, nameEnd.end), index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  out.seg('arguments', argRange[0], argRange[1], index);
  if (!complete) callUnclosed(out, index, nameRange[0], Math.max(end, nameEnd.end), '}', end);
  return Math.max(end, nameEnd.end);
}

/** One call object in [from, to); `complete` when its closing `}` is there. Returns where the call ends. */
function readCall(out: ParseOut, g: JsonCallsGrammar, from: number, to: number, complete: boolean): number {
  const { text } = out;
  const members = jsonMembers(text, from, to) ?? [];
  const nameMember = members.find((m) => m.key === (g.nameKey ?? 'name') && m.complete);
  const argsMember = members.find((m) => m.key !== undefined && g.argKeys.includes(m.key));
  const name = jsonStringMember(text, nameMember);
  const end = complete ? to : trimRange(text, from, to)[1];
  // A call object without arguments is a call with none (`{"name": "now"}`).
  const args = argsMember ? text.slice(...argsMember.valueRange) : complete ? '{}' : '';
  const index = out.addCall(name, args);
  out.seg('call', from, end, index);
  if (nameMember && text.slice(nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1) === name && name) {
    out.seg('call-name', nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1, index);
  }
  if (argsMember) out.seg('arguments', argsMember.valueRange[0], argsMember.valueRange[1], index);
  if (!complete) callUnclosed(out, index, from, end, '}', end);
  else if (!nameMember || !name)
    out.problem('malformed-call', `call ${index}: no "${g.nameKey ?? 'name'}" string`, from, end, { callIndex: index });
  return end;
}

/** The turn as the family writes it: reasoning, content, the opener, the calls, the closer, the end of turn. */
export function renderJsonCalls(g: JsonCallsGrammar, m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, { newlines: false, tags: g.think });
  if (m.toolCalls.length) {
    out.wrap('section', () => {
      out.put(g.open);
      if (g.list === 'array') out.put('[');
      m.toolCalls.forEach((c, i) => {
        if (i > 0) out.put(g.list === 'array' ? ', ' : ';');
        out.wrap('call', () => renderObjectCall(out, c, i, g.argKeys[0], close.call(i)), i);
      });
      if (close.turn) {
        if (g.list === 'array') out.put(']');
        if (g.close) out.put(g.close);
      }
    });
  }
  if (close.turn && g.ends.length) out.put(g.ends[0], 'end');
  return out.done();
}

/** A family that writes its calls as one JSON list between a tag pair (Jamba `<tool_calls>[…]</tool_calls>`, Nemotron `<TOOLCALL>[…]</TOOLCALL>`). */
export interface TaggedListFamily {
  id: FamilyId;
  displayName: string;
  open: string;
  close: string;
  /** The end of turn. */
  end: string;
  /** The chat format's other markers (flagged when they show up in content). */
  others: readonly string[];
  matchesModel: (modelId: string) => boolean;
  /** The prompt may open `<think>`, so a completion can start inside the reasoning (default: it cannot). */
  implicitThink?: boolean;
}

/** The format of a tagged-list family: the list grammar with `arguments` (or `parameters`) objects. */
export function taggedListFormat(f: TaggedListFamily): ModelFormat {
  const toolMarkers = [f.open, f.close];
  const markers = [f.close, f.end, f.open, ...f.others];
  const g: JsonCallsGrammar = {
    family: f.id,
    markers,
    toolMarkers,
    open: f.open,
    close: f.close,
    list: 'array',
    argKeys: ['arguments', 'parameters'],
    ends: [f.end],
    implicitThink: f.implicitThink ?? false,
  };
  const opener = new RegExp(`${f.open.replace(/[|<>]/g, (c) => `\\${c}`)}\\s*\\[`);
  return {
    id: f.id,
    displayName: f.displayName,
    markers,
    toolMarkers,
    matchesModel: f.matchesModel,
    detectText: (text) =>
      scoreText(text, [
        [opener, 10],
        [f.close, 7],
      ]),
    render: (m, opts) => renderJsonCalls(g, m, opts),
    parse: (text) => parseJsonCalls(g, text),
  };
}
