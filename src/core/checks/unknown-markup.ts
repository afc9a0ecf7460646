/**
 * Markup of a dialect Tokenscope has no grammar for. When the family is unknown (no model id matched, no family's
 * own markers in the text), the turn is never declared clean just because no known marker is in it: text shaped like
 * a special token (`<|zeta_call|>`, `<｜call｜>`, `<ifm|tool_call>`, `<|tool_call>`, `<call|>`, `[TOOL_CALLS]`) in
 * content or reasoning is what a server parser left unparsed, and says so with what was seen.
 *
 * Plain prose, HTML and XML tags (`<div>`, `<tool_call>`) and markdown (`[TODO]`, `[ARGS]`) never match: a special
 * token carries a `|` (or the fullwidth `｜`) inside its angle brackets, or is an all-caps bracket word with `_`.
 */
import type { Finding, Segment } from '../model';
import { NeedleScan } from '../families/shared/text';
import { findMarkers } from './scan';
import type { CheckContext } from './types';

/**
 * `<|name|>`, `<｜name｜>`, `</|name|>`, `<|/name|>`; `<ns|name>`, `</ns|name>` (IFM); `<|name>` and `<name|>` (Gemma-style
 * halves); `[NAME_WITH_UNDERSCORE]` and `[/NAME_…]` (Mistral-style). Names are identifiers, optionally with `:` / `.` / `-`
 * / spaces inside the fullwidth form (DeepSeek's `<｜tool▁calls▁begin｜>`).
 */
const SHAPES =
  /<\/?[|｜]\/?[A-Za-z_▁][\w▁.:-]{0,63}[|｜]>|<\/?[A-Za-z_][\w.-]{0,31}\|\/?[A-Za-z_][\w.:-]{0,63}>|<\|[A-Za-z_][\w.:-]{0,63}>|<\/?[A-Za-z_][\w.:-]{0,63}\|>|\[\/?[A-Z][A-Z0-9]*_[A-Z0-9_]+\]/g;

const SHAPE_AT = new RegExp(SHAPES.source, 'y');

export interface UnknownMarkup {
  region: 'content' | 'reasoning';
  start: number;
  end: number;
  /** The distinct markers seen, in order of first appearance. */
  seen: string[];
  /** A JSON object with a `"name"` member follows one of them: a tool call by its shape. */
  callShaped: boolean;
}

const cache = new WeakMap<CheckContext, UnknownMarkup[]>();

/** Special-token-shaped text no family knows, per content / reasoning segment, when the turn's family is unknown. */
export function unknownMarkup(ctx: CheckContext): UnknownMarkup[] {
  let out = cache.get(ctx);
  if (out) return out;
  out = [];
  if (!ctx.format) {
    const text = ctx.native.text;
    for (const segment of ctx.native.segments) {
      if (segment.kind !== 'content' && segment.kind !== 'reasoning') continue;
      const found = scan(text, segment);
      if (found) out.push(found);
    }
  }
  cache.set(ctx, out);
  return out;
}

function scan(text: string, segment: Segment): UnknownMarkup | undefined {
  const known = findMarkers(text, segment.start, segment.end);
  const isKnown = (s: number, e: number): boolean => known.some((k) => k.start < e && s < k.end);
  const seen: string[] = [];
  let start = -1;
  let end = -1;
  let callShaped = false;
  // Every shape starts with `<` or `[`: the regex is tried only where a native scan finds one.
  const places = new NeedleScan(text, ['<', '['], segment.start, segment.end);
  const next = (from: number): RegExpExecArray | null => {
    for (let p = places.next(from); p >= 0; p = places.next(p + 1)) {
      SHAPE_AT.lastIndex = p;
      const m = SHAPE_AT.exec(text);
      if (m) return m;
    }
    return null;
  };
  for (let m = next(segment.start); m && m.index < segment.end; m = next(m.index + m[0].length)) {
    const s = m.index;
    const e = s + m[0].length;
    if (e > segment.end || isKnown(s, e)) continue;
    if (start < 0) start = s;
    end = e;
    if (!seen.includes(m[0])) seen.push(m[0]);
    if (!callShaped && /^\s*[[{]\s*\{?\s*"(?:name|function|tool_name|tool)"\s*:/.test(text.slice(e, Math.min(segment.end, e + 200))))
      callShaped = true;
  }
  return start < 0 ? undefined : { region: segment.kind as UnknownMarkup['region'], start, end, seen, callShaped };
}

/** The findings of one region for the leak rules (`markup-in-content`, `markup-in-reasoning`). */
export function unknownMarkupFindings(
  ctx: CheckContext,
  rule: { id: string; severity: Finding['severity'] },
  region: UnknownMarkup['region'],
): Finding[] {
  const offered = ctx.request ? ctx.request.tools.length > 0 : undefined;
  return unknownMarkup(ctx)
    .filter((u) => u.region === region)
    .map((u) => {
      const shown = u.seen.slice(0, 4).join(', ') + (u.seen.length > 4 ? ` and ${u.seen.length - 4} more` : '');
      const what = u.callShaped ? 'tool-call markup (a JSON call follows it)' : 'special-token markup';
      const tools = offered === false ? ' The request offered no tools.' : '';
      return {
        rule: rule.id,
        // Without tools in the request, markup is still no answer, but no call was lost.
        severity: offered === false && !u.callShaped ? 'warning' : rule.severity,
        message:
          `Unknown dialect: ${what} in ${region} (${shown}) that no model family Tokenscope knows writes (the model id names none). ` +
          `No server parser turned it into tool calls, so the agent receives it as text; Tokenscope cannot check it further.${tools} ` +
          'Name the model (--model) or the family (--family) if it is one Tokenscope knows.',
        location: region,
        start: u.start,
        end: u.end,
      };
    });
}
