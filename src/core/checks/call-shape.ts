/**
 * The shape of a call left open, read from the family parse: what arrived of it and what is missing. call-unclosed
 * says it in its message, and the engine verdicts (./engine-verdicts.ts) pick the conformance class from it: a call
 * whose body is complete and only lacks its closing markers is not a call cut off, whatever closer is missing.
 */
import type { ParsedNative } from '../model';

/**
 * Where a call's body is complete: it ends with the close of its JSON, fence, parameter, function, value or invoke
 * (`}`, ```` ``` ````, `</parameter>`, MiniCPM's `</param>`, `</function>`, `</arg_value>`, `</invoke>`, Kimi K3's argument close,
 * Solar Open2's `<|tool_arg:end|>`).
 */
export const BODY_CLOSE =
  /(?:[}\]]|```|param(?:eter)?>|function>|arg_value(?::[^\s<>]*)?>|invoke>|<\|close\|>argument<\|sep\|>|<\|tool_arg:end\|>)$/;

/** A marker that closes one argument's value (`</parameter>`, `</arg_value>`, Hunyuan's `</arg_value:S>`, `</｜DSML｜parameter>`, `<|close|>argument<|sep|>`, `<|tool_arg:end|>`). */
export function closesValue(marker: string): boolean {
  return /^(?:<\/[^>]*(?:param(?:eter)?|arg_value(?::[^\s<>]*)?)>|<\|close\|>argument<\|sep\|>|<\|tool_arg:end\|>)$/.test(marker);
}

/**
 * - `complete`: the arguments arrived whole (JSON that parses, the body ending with the close of its last value); only
 *   closing markers are missing, from the first one the problem names;
 * - `cut`: output stopped inside the arguments (JSON cut off, a value without its close);
 * - `empty`: nothing but the opening marker (no name, no arguments).
 */
export type CallState = 'complete' | 'cut' | 'empty';

/** The state of call `index` of a parse, for a call the parser reported as never closed. */
export function unclosedCallState(parsed: ParsedNative, index: number): CallState {
  const call = parsed.message.toolCalls[index];
  if (!call) return 'cut';
  if (!call.name.trim() && !call.arguments.trim()) return 'empty';
  try {
    JSON.parse(call.arguments);
  } catch {
    return 'cut';
  }
  const seg = parsed.segments.find((s) => s.kind === 'call' && s.callIndex === index);
  if (!seg) return 'complete';
  let end = seg.end;
  // A closing marker cut short at the end of the call: a value's own close means the value never ended; a later
  // closer (`</func`, `</tool_`) means the body before it is whole.
  const cutMarker = parsed.problems.find(
    (p) => p.code === 'marker-truncated' && p.marker !== undefined && p.start >= seg.start && p.end >= seg.end - 1 && p.start < seg.end,
  );
  if (cutMarker) {
    if (closesValue(cutMarker.marker!)) return 'cut';
    end = cutMarker.start;
  }
  return BODY_CLOSE.test(parsed.text.slice(seg.start, end).trimEnd()) ? 'complete' : 'cut';
}
