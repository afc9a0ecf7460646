import type { Finding, Segment } from '../model';
import type { Check, CheckContext } from './types';
import { callLabel, familyName, findMarkers, ownerOf, quoteMarkers, segmentFor, unambiguous, type MarkerHit } from './scan';

/**
 * anomalyco/opencode#37297 (`"/repo/app <|tool_calls_section_begin|> <|tool_call_begin|> functions.read:3 …` inside
 * arguments), vLLM PRs #32633 / #35906 (`manage_cart<|channel|>commentary` as a tool name).
 */
const check: Check = {
  id: 'markup-in-tool-call',
  severity: 'error',
  title: 'Control markup inside a tool call',
  why: "The model's control tokens end up in a call's name or arguments: the call fails, and agents that quote the bad input in their error message feed the tokens back to the model, so failures cascade.",
  run: (ctx) => {
    const out: Finding[] = [];
    ctx.message.toolCalls.forEach((call, i) => {
      const fields: [string, string | undefined, Segment['kind']][] = [
        ['name', call.name, 'call-name'],
        ['id', call.id, 'call-id'],
        ['arguments', call.arguments, 'arguments'],
      ];
      for (const [field, value, kind] of fields) {
        if (!value) continue;
        // Tag-style marker text inside a JSON string value is the model writing about markup (a parser, docs), not a
        // leak; special-token markers (`<|…|>`) there still are (anomalyco/opencode#37297).
        const hits = findMarkers(value).filter((h) => field !== 'arguments' || /^<[|｜]/.test(h.marker) || !insideJsonString(value, h.start));
        if (hits.length === 0) continue;
        // Another family's tag-style markers (`<tool_call>`) may be code the agent is writing: those only warn.
        const severe = hits.some((h) => unambiguous(h, ctx));
        const family = familyName(ownerOf(hits, ctx.format?.id, () => value));
        out.push({
          rule: check.id,
          severity: severe ? 'error' : 'warning',
          message:
            `The ${field} of ${callLabel(i, field === 'name' ? undefined : call.name)} contain${field === 'arguments' ? '' : 's'} ` +
            `${family} control markup (${quoteMarkers(hits)}); the call is unusable and the markup travels back to the model in the next turn.`,
          location: `tool_calls[${i}].${field}`,
          ...range(ctx, segmentFor(ctx, kind, i), value, hits),
        });
      }
    });
    return out;
  },
};

/** True when `offset` of a valid JSON text lies inside one of its string literals. */
function insideJsonString(json: string, offset: number): boolean {
  try {
    JSON.parse(json);
  } catch {
    return false;
  }
  let inString = false;
  for (let i = 0; i < offset && i < json.length; i++) {
    const c = json[i];
    if (inString && c === '\\') i++;
    else if (c === '"') inString = !inString;
  }
  return inString;
}

/** Offsets of the hits in the native text: exact when the segment holds the value verbatim, else the whole segment. */
function range(ctx: CheckContext, seg: Segment | undefined, value: string, hits: MarkerHit[]): { start?: number; end?: number } {
  if (!seg) return {};
  const text = ctx.native.text.slice(seg.start, seg.end);
  const at = text.indexOf(value);
  if (at >= 0) return { start: seg.start + at + hits[0].start, end: seg.start + at + hits[hits.length - 1].end };
  return { start: seg.start, end: seg.end };
}

export default check;
