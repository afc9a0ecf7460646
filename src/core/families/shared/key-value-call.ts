/**
 * One call written `OPEN call:NAME{key:value,…}CLOSE` (Gemma 4's `<|tool_call>`, FunctionGemma's
 * `<start_function_call>`): the name after a `call:` prefix, then an argument body in the family's key:value syntax.
 * A family states its closer, the markers that end a call region and how it reads a value; this module reads the
 * call, its segments and problems. The arguments are read first, so markers inside strings stay text.
 *
 * A body read whole becomes canonical compact JSON; one cut off keeps the text that arrived, as written; one that is
 * not the family's syntax is kept raw and flagged `malformed-call` when the call is closed.
 */
import type { ParseOut } from './build';
import { skipWs, trimRange, truncatedAt, type MarkerHit } from './text';
import { callUnclosed } from './turn';

/** A value read from `pos`: `end` is where it stops; `complete` false when the text ran out first; `bad` when off-grammar. */
export interface KeyValueRead {
  value?: unknown;
  end: number;
  complete: boolean;
  bad?: boolean;
}

export interface KeyValueCallSyntax {
  /** The call's closer (`<tool_call|>`, `<end_function_call>`). */
  close: string;
  /** The markers that end a call region: its closer, the next call's opener, the turn's ends. */
  stops: readonly string[];
  /** What stands before the name (`call:`). */
  prefix: string;
  /**
   * The argument body from `brace` (its `{`); `to` is where the call region ends. `notes`: what the read found off
   * the grammar but recovered, flagged on a body read whole.
   */
  read(out: ParseOut, brace: number, to: number): KeyValueRead & { notes?: readonly string[] };
}

/** One call from `start` (its opener, `hit`): where it ends and whether its closer was found. */
export function keyValueCall(out: ParseOut, start: number, hit: MarkerHit, syntax: KeyValueCallSyntax): { end: number; closed: boolean } {
  const { text } = out;
  const { close, stops, prefix } = syntax;
  const index = out.calls.length;
  const stop = out.find(stops, hit.end);
  const to = stop ? stop.start : text.length;
  let pos = skipWs(text, hit.end, to);
  const defects: string[] = [];
  if (text.startsWith(prefix, pos)) pos += prefix.length;
  else if (!(to === text.length && prefix.startsWith(text.slice(pos, to).trim()))) defects.push(`no ${prefix} before the name`);
  const brace = text.indexOf('{', pos);
  const hasBody = brace >= 0 && brace < to;
  const nameRange = trimRange(text, pos, hasBody ? brace : to);
  let args = '';
  let argRange: [number, number] | undefined;
  let end: number;
  let closed = false;
  let expectedAt: number;
  const read = hasBody ? syntax.read(out, brace, to) : undefined;
  if (read && read.complete && !read.bad) {
    args = JSON.stringify(read.value);
    if (read.notes) defects.push(...read.notes);
    argRange = [brace, read.end];
    const after = skipWs(text, read.end);
    expectedAt = read.end;
    if (text.startsWith(close, after)) {
      closed = true;
      end = after + close.length;
    } else {
      const cut = truncatedAt(text, after, [close]);
      if (cut) out.problem('marker-truncated', `${close} is cut short`, cut.start, cut.end, { marker: close, callIndex: index });
      end = cut ? cut.end : read.end;
      if (!cut && after < text.length) {
        // Something else follows the arguments: the call ends at the next marker, flagged.
        defects.push(`no ${close} after the arguments`);
        closed = stop?.marker === close;
        end = closed ? stop!.end : read.end;
      }
    }
  } else if (read && !read.complete) {
    // Cut off inside the arguments: what arrived, as written.
    argRange = trimRange(text, brace, text.length);
    args = text.slice(...argRange);
    end = argRange[1];
    expectedAt = end;
  } else {
    // No argument body, or one that is not the family's syntax: the text up to the next marker, raw.
    closed = stop?.marker === close;
    const body = hasBody ? trimRange(text, brace, to) : undefined;
    if (body && body[1] > body[0]) {
      argRange = body;
      args = text.slice(...body);
      if (closed) defects.push('the arguments are not {key:value,…}');
    } else if (closed) args = '{}';
    end = closed ? stop!.end : trimRange(text, hit.end, to)[1];
    expectedAt = end;
  }
  end = Math.max(end, hit.end);
  out.addCall(text.slice(...nameRange), args);
  out.seg('call', start, end, index);
  out.seg('call-name', nameRange[0], nameRange[1], index);
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (!closed) callUnclosed(out, index, start, end, close, Math.max(expectedAt, hit.end));
  else if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, start, end, { callIndex: index });
  return { end, closed };
}

/**
 * JSON arguments written in a key:value syntax: strings between `quote`s, keys as `key` writes them, JSON scalars
 * bare, `{…}` objects and `[…]` lists. Text that is not a JSON object is written as it is.
 */
export function keyValueArgs(args: string, quote: string, key: (k: string) => string): string {
  const value = (v: unknown): string => {
    if (typeof v === 'string') return `${quote}${v}${quote}`;
    if (Array.isArray(v)) return `[${v.map(value).join(',')}]`;
    if (v && typeof v === 'object')
      return `{${Object.entries(v)
        .map(([k, x]) => `${key(k)}:${value(x)}`)
        .join(',')}}`;
    return JSON.stringify(v);
  };
  try {
    const v: unknown = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) return value(v);
  } catch {
    // Not JSON: raw.
  }
  return args;
}
