import type { Finding } from '../model';
import type { Check } from './types';
import { familyName, findMarkers, ownerOf, quoteMarkers, unambiguous } from './scan';

/**
 * anomalyco/opencode#37297: the agent's invalid-tool error quotes the raw arguments, so the model's own control tokens
 * go back into the prompt and every later turn breaks. System and developer prompts are skipped: they may document
 * a format on purpose.
 */
const check: Check = {
  id: 'history-echoed-markers',
  severity: 'warning',
  title: 'Control markers echoed back in the history',
  why: 'Special tokens sent back as ordinary text in earlier turns confuse the model about where calls begin and end, so tool-call failures cascade.',
  run: (ctx) => {
    if (!ctx.request) return [];
    const out: Finding[] = [];
    ctx.request.messages.forEach((m, i) => {
      if (m.role === 'system' || m.role === 'developer') return;
      const fields: [string, string | undefined][] = [
        ['content', m.content],
        ['reasoning', m.reasoning],
        ...(m.toolCalls ?? []).map((c, j): [string, string] => [`tool_calls[${j}].arguments`, c.arguments]),
      ];
      for (const [field, text] of fields) {
        if (!text) continue;
        // Tool results quote files, and files may hold another family's XML-like tags: only unambiguous markers count,
        // and `<think>` tags some agents keep in assistant content are not tool-call trouble.
        const hits = findMarkers(text).filter((h) => unambiguous(h, ctx) && (h.tool || /^<[|｜]/.test(h.marker)));
        if (hits.length === 0) continue;
        const family = familyName(ownerOf(hits, ctx.format?.id, () => text));
        out.push({
          rule: check.id,
          severity: check.severity,
          message: `The ${m.role} message ${i} of the request carries ${hits.length} ${family} control marker${hits.length > 1 ? 's' : ''} in its ${field} (${quoteMarkers(hits)}), echoed back from an earlier turn.`,
          location: `request.messages[${i}].${field}`,
        });
      }
    });
    return out;
  },
};

export default check;
