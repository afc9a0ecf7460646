/**
 * Leaks that carry no marker:
 * - a family whose calls are written without a marker of their own (Llama 4 pythonic, `[read(path="a.md")]`, vLLM
 *   `llama4_pythonic_tool_parser.py`) leaks as plain-looking text;
 * - a family whose markers are all special tokens leaks without them when a provider decodes with
 *   `skip_special_tokens` (SGLang's default): Kimi K2's `functions.write:0{"path": "a"}`, gpt-oss's
 *   `commentary to=functions.get_weather json{"location":"SF"}`. The token ids still hold the calls; the text the agent
 *   got does not.
 * When the model id names such a family and its parser reads whole calls in a content or reasoning segment that holds
 * no tool-call marker, that is the markup a correct server would have turned into tool calls.
 */
import type { FamilyId, ParsedNative, Segment } from '../model';
import { getFamily } from '../families/index';
import type { CheckContext } from './types';
import type { Leak, MarkerHit } from './scan';

/** The calls a content segment holds once the family's stripped markers are read back (undefined: none). */
export function strippedCalls(family: FamilyId, text: string, segment: Segment): { parsed: ParsedNative; offset: number } | undefined {
  // Families whose calls survive in content with their special tokens stripped say how to read them there.
  const parse = segment.kind === 'content' ? getFamily(family).leaks?.stripped : undefined;
  if (!parse || segment.end <= segment.start) return undefined;
  const parsed = parse(text.slice(segment.start, segment.end));
  return parsed.message.toolCalls.length ? { parsed, offset: segment.start } : undefined;
}

export function markerlessLeak(ctx: CheckContext, segment: Segment): Leak | undefined {
  const format = ctx.format;
  if (!format || segment.end <= segment.start) return undefined;
  const from = segment.start;
  let parsed: ParsedNative;
  // A family whose call lists have no opening marker (the marker scan cannot see them): its parser reads the segment.
  if (getFamily(format.id).leaks?.unmarked) parsed = format.parse(ctx.native.text.slice(from, segment.end));
  else {
    const stripped = strippedCalls(format.id, ctx.native.text, segment);
    if (!stripped) return undefined;
    parsed = stripped.parsed;
  }
  if (parsed.message.toolCalls.length === 0) return undefined;
  const calls = parsed.segments.filter((s) => s.kind === 'section' || s.kind === 'call');
  if (calls.length === 0) return undefined;
  const start = from + Math.min(...calls.map((s) => s.start));
  const end = from + Math.max(...calls.map((s) => s.end));
  const hit: MarkerHit = {
    marker: opening(ctx.native.text, parsed, from, start, end),
    start,
    end: start,
    truncated: false,
    families: [format.id],
    tool: true,
  };
  hit.end = start + hit.marker.length;
  return { region: segment.kind as Leak['region'], segment, family: format.id, hits: [hit], start, end, parsed, offset: from };
}

/**
 * What stands in for the marker the leak does not have: the call list's opening (`[read(`), or the stripped call's
 * head up to its arguments (`functions.write:0`, `commentary to=functions.get_weather json`).
 */
function opening(text: string, parsed: ParsedNative, from: number, start: number, end: number): string {
  const args = parsed.segments.find((s) => s.kind === 'arguments');
  if (args && parsed.segments.some((s) => s.kind === 'call' && s.start + from === start && s.end >= args.end)) {
    const head = text.slice(start, from + args.start).trimEnd();
    if (head) return head;
  }
  return /^\[?\s*[A-Za-z_][\w.]*\s*\(/.exec(text.slice(start, end))?.[0] ?? text.slice(start, Math.min(end, start + 12));
}
