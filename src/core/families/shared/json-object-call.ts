/**
 * One call written as one JSON object `{"name": "NAME", "arguments": {…}}` after an opener, one object per call
 * (Qwen3's `<tool_call>…</tool_call>` shape, shared by Granite 4's `<tool_call>`, InternLM's
 * `<|action_start|><|plugin|>…<|action_end|>` and GigaChat 3's `function call<|role_sep|>` message). A family states
 * where the object starts, what closes the call (a marker, or nothing but the object's own `}`) and which members
 * carry the arguments; this module reads the call, its segments and problems, and writes one.
 *
 * The arguments are the raw text of the member, never re-serialized, so `parse(render(m)) = m` holds byte for byte.
 * A family whose models also write the arguments as a JSON string holding the object (Granite 4) reads that string's
 * text, as the engines do.
 */
import type { ToolCall } from '../../model';
import type { ParseOut, RenderOut } from './build';
import { jsonMembers, jsonValueEnd, skipWs } from './text';
import { callUnclosed, jsonBody } from './turn';

export interface JsonObjectCall {
  /** Where the call starts (its opener). */
  start: number;
  /** Where the JSON object is looked for (after the opener and any header). */
  bodyFrom: number;
  /** The marker that closes the call (`</tool_call>`, `<|action_end|>`); absent when the object's `}` ends it. */
  close?: string;
  /** Markers that end the body when the close never came: the next opener, the end of turn. */
  stops: readonly string[];
  /** Every marker of the family (cut-short ones end the body). */
  markers: readonly string[];
  /** Members that carry the arguments, in order of preference. */
  argKeys: readonly string[];
  /** A JSON string value of the arguments member is read as the text it holds. */
  stringArgs?: boolean;
  /** Defects the family already found in the opener (then the call is also `malformed-call`). */
  defects?: string[];
}

/** Reads one call; returns where it ends. */
export function jsonObjectCall(out: ParseOut, c: JsonObjectCall): number {
  const { text } = out;
  const index = out.calls.length;
  const body = jsonBody(out, c.bodyFrom, c.close ? [c.close, ...c.stops] : c.stops, c.markers);
  const objStart = skipWs(text, c.bodyFrom, body.range[1]);
  const objEnd = text[objStart] === '{' ? jsonValueEnd(text, objStart, body.range[1]) : -1;
  // Without a closing marker the object is the whole call: text after it is no part of it.
  const range: [number, number] = !c.close && objEnd >= 0 ? [objStart, objEnd] : body.range;
  const members = jsonMembers(text, c.bodyFrom, range[1]);
  const nameMember = members?.find((m) => m.key === 'name' && m.complete);
  const argsMember = members?.find((m) => m.key !== undefined && c.argKeys.includes(m.key));
  let name = '';
  if (nameMember) {
    const v = decode(text.slice(...nameMember.valueRange));
    if (typeof v === 'string') name = v;
  }
  const argRange = argsMember ? argsMember.valueRange : members ? undefined : range[1] > range[0] ? range : undefined;
  let args = argRange ? text.slice(...argRange) : '';
  if (c.stringArgs && argsMember?.complete && text[argsMember.valueRange[0]] === '"') {
    const v = decode(args);
    if (typeof v === 'string') args = v;
  }
  let end = range[1];
  let closed = false;
  let expectedAt = range[1];
  if (!c.close) {
    // A cut-short marker after the object is left to the text after the call, where it is reported. A body that is
    // no object at all, followed by more markup, was not cut off: it is malformed.
    closed = objEnd >= 0 || (!members && body.stop !== undefined);
  } else if (body.stop?.marker === c.close) {
    end = body.stop.end;
    closed = true;
  } else if (body.cut?.marker === c.close) {
    // Another cut-short marker is left to the text after the call, where it is reported.
    out.problem('marker-truncated', `${c.close} is cut short`, body.cut.start, body.cut.end, { marker: c.close, callIndex: index });
    end = body.cut.end;
    expectedAt = body.cut.start;
  }
  out.addCall(name, args);
  out.seg('call', c.start, Math.max(end, c.start), index);
  if (nameMember && name && text.slice(nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1) === name) {
    out.seg('call-name', nameMember.valueRange[0] + 1, nameMember.valueRange[1] - 1, index);
  }
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed) callUnclosed(out, index, c.start, Math.max(end, c.start), c.close ?? '}', Math.max(expectedAt, c.start));
  // Judge the grammar only on a finished call: a cut-off one is already reported unclosed. Arguments that are not
  // JSON are the checks' business; a broken object around sound arguments is the format's.
  const what = [
    ...(c.defects ?? []),
    ...(!closed
      ? []
      : !members
        ? ['the body is not a JSON object']
        : !nameMember
          ? ['no "name" string']
          : !argsMember
            ? [`no "${c.argKeys[0]}" member`]
            : !isJson(text.slice(...range)) && isJson(text.slice(...argsMember.valueRange))
              ? ['the call object around the arguments is not valid JSON']
              : []),
  ];
  if (what.length)
    out.problem('malformed-call', `call ${index}: ${what.join('; ')}`, c.start, Math.max(end, c.start), { callIndex: index });
  return Math.max(end, c.start);
}

/**
 * Writes `{"name": "NAME", "ARGKEY": ARGS}` (without its `}` when the call is cut short). The name segment covers the
 * name itself, so it only exists when JSON needs no escapes for it.
 */
export function renderObjectCall(out: RenderOut, c: ToolCall, index: number, argKey: string, closed: boolean): void {
  const name = JSON.stringify(c.name);
  out.put('{"name": "');
  if (name === `"${c.name}"` && c.name) out.put(c.name, 'call-name', index);
  else out.put(name.slice(1, -1));
  out.put(`", "${argKey}": `).put(c.arguments, 'arguments', index);
  if (closed) out.put('}');
}

/**
 * The markers that must follow an opener, in order (`<|plugin|>` after `<|action_start|>`), from `pos`: where they end,
 * or what went wrong: the text ended inside or before them (`cut`), or other text stands there (`missing`).
 */
export function header(
  out: ParseOut,
  pos: number,
  parts: readonly string[],
): { end: number; cut?: { start: number; end: number; marker: string }; missing?: string } {
  const { text } = out;
  let at = pos;
  for (const part of parts) {
    const p = skipWs(text, at);
    if (text.startsWith(part, p)) {
      at = p + part.length;
      continue;
    }
    const rest = text.slice(p);
    if (part.startsWith(rest)) return { end: text.length, cut: { start: p, end: text.length, marker: part } };
    return { end: at, missing: part };
  }
  return { end: at };
}

function decode(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

function isJson(s: string): boolean {
  return decode(s) !== undefined;
}
