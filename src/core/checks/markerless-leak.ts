/**
 * Leaks that carry no marker: a family whose calls are written without a marker of their own (Llama 4 pythonic,
 * `[read(path="a.md")]`, vLLM `llama4_pythonic_tool_parser.py`) leaks as plain-looking text. When the model id names
 * such a family and its own parser reads whole calls in a content or reasoning segment that holds no tool-call
 * marker, that is the markup a correct server would have turned into tool calls.
 */
import type { FamilyId, Segment } from '../model';
import type { CheckContext } from './types';
import type { Leak, MarkerHit } from './scan';

/** Families whose call lists have no opening marker (the ones the marker scan cannot see). */
const MARKERLESS = new Set<FamilyId>(['llama4-pythonic']);

export function markerlessLeak(ctx: CheckContext, segment: Segment): Leak | undefined {
  const format = ctx.format;
  if (!format || !MARKERLESS.has(format.id) || segment.end <= segment.start) return undefined;
  const from = segment.start;
  const parsed = format.parse(ctx.native.text.slice(from, segment.end));
  if (parsed.message.toolCalls.length === 0) return undefined;
  const calls = parsed.segments.filter((s) => s.kind === 'section' || s.kind === 'call');
  if (calls.length === 0) return undefined;
  const start = from + Math.min(...calls.map((s) => s.start));
  const end = from + Math.max(...calls.map((s) => s.end));
  // The call list's opening (`[read(`) stands in for the marker the grammar does not have.
  const opening = /^\[?\s*[A-Za-z_][\w.]*\s*\(/.exec(ctx.native.text.slice(start, end))?.[0] ?? ctx.native.text.slice(start, Math.min(end, start + 12));
  const hit: MarkerHit = { marker: opening, start, end: start + opening.length, truncated: false, families: [format.id], tool: true };
  return { region: segment.kind as Leak['region'], segment, family: format.id, hits: [hit], start, end, parsed, offset: from };
}
