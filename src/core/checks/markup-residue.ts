import type { Finding } from '../model';
import { firstTruncated } from '../families/shared';
import type { Check } from './types';
import { familyName, structuralProblems } from './scan';

/**
 * A lone opener, an orphan closer or a cut fragment of the family's own tool-call markup left in content, after or
 * instead of the calls: Hermes `{"name": …}</tool_call>` with no `<tool_call>` (vLLM and SGLang keep the orphan in
 * content: ai-dynamo/frontend-crates conformance fixture 5.b), GLM's `get_weather<arg_key>…</tool_call>`, a provider
 * that parsed the calls but left `</tool_call>` or `<tool_ca` behind in the content.
 */
const check: Check = {
  id: 'markup-residue',
  severity: 'error',
  title: "Residue of the family's tool-call markup in content",
  why: 'A piece of tool-call markup in the content means a call was lost or half-parsed: the agent shows the fragment to the user, and the call it belonged to never runs.',
  run: (ctx) => {
    const format = ctx.format;
    if (!format) return [];
    const out: Finding[] = [];
    const name = familyName(format.id);
    const tool = new Set(format.toolMarkers);
    if (ctx.native.source === 'raw') {
      for (const p of structuralProblems(ctx)) {
        if (p.code !== 'stray-marker' || p.family !== format.id || p.location !== 'content' || !p.marker || !tool.has(p.marker)) continue;
        out.push({
          rule: check.id,
          severity: check.severity,
          message: `${p.marker} at offset ${p.start} is a lone piece of ${name} tool-call markup in content: ${p.message}. The call it belonged to is lost or half-parsed.`,
          location: 'content',
          start: p.start,
          end: p.end,
        });
      }
      return out;
    }
    // A structured turn: a fragment of a tool marker cut off at the end of the content (complete markers in content
    // are markup-in-content's).
    for (const s of ctx.native.segments) {
      if (s.kind !== 'content') continue;
      const tail = Math.max(s.start, s.end - 64);
      const cut = firstTruncated(ctx.native.text, format.toolMarkers, tail, s.end);
      if (!cut || cut.end !== s.end || cut.end - cut.start < Math.min(6, cut.marker.length - 1)) continue;
      out.push({
        rule: check.id,
        severity: check.severity,
        message: `The content ends in ${JSON.stringify(ctx.native.text.slice(cut.start, cut.end))}, a cut-off ${cut.marker}: residue of ${name} tool-call markup the provider did not parse.`,
        location: 'content',
        start: cut.start,
        end: cut.end,
        expectedMarker: cut.marker,
      });
    }
    return out;
  },
};

export default check;
