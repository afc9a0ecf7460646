import type { Finding } from '../model';
import type { Check } from './types';
import { freeTextMarkers, quoteMarkers, unambiguous } from './scan';

/** smg-project/smg#1111 (`<|im_end|>`, `<|im_middle|>` in content), ai-dynamo/dynamo PR #9227 (skip_special_tokens). */
const check: Check = {
  id: 'special-token-in-text',
  severity: 'warning',
  title: 'Control token in visible text',
  why: 'Turn or reasoning markers in content mean the server stopped decoding special tokens as structure; agents show them to the user and echo them back next turn.',
  run: (ctx) => {
    const out: Finding[] = [];
    for (const { segment: s, hits: all } of freeTextMarkers(ctx)) {
      const own = s.kind === 'reasoning' ? (ctx.format?.reasoningMarkers ?? []) : [];
      const hits = all.filter((h) => !h.tool && unambiguous(h, ctx) && !own.includes(h.marker));
      if (hits.length === 0) continue;
      out.push({
        rule: check.id,
        severity: check.severity,
        message: `${hits.length} control token${hits.length > 1 ? 's' : ''} in ${s.kind} (${quoteMarkers(hits)}): the server passed special tokens through as text.`,
        location: s.kind,
        start: hits[0].start,
        end: hits[hits.length - 1].end,
      });
    }
    return out;
  },
};

export default check;
