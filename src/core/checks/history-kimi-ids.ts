import type { Finding } from '../model';
import type { Check } from './types';
import { getFamily } from '../families/index';

/**
 * Anthropic's API takes only `[A-Za-z0-9_-]` ids (400 "tool_use.id: String should match pattern" otherwise), so in
 * Anthropic Messages history `functions_NAME_IDX` is how functions.NAME:IDX is spelled (repair mode delivers it so):
 * it keeps the name and the counter, and is not flagged there.
 */
const ANTHROPIC_SPELLING = /^functions_(.+)_(\d+)$/;

/**
 * The chat template renders history ids verbatim into the prompt. Non-canonical ids (another model's `call_…`, ids
 * sanitised to `[A-Za-z0-9_-]`) push K2 off-distribution: it then emits `functions_<name>_<n>`, dumps markers into
 * content or ends the turn empty (MoonshotAI/Kimi-K2#128, vybestack/llxprt-code#712, K2 Vendor Verifier README).
 * Bare `NAME:IDX` is what healthy OpenRouter traffic returns, so it is only noted.
 */
const check: Check = {
  id: 'history-kimi-ids',
  severity: 'warning',
  title: 'History carries non-canonical Kimi tool-call ids',
  why: 'Kimi K2 copies the id pattern it sees in the history; off-format ids there make its next tool calls fail (the failure cascades turn after turn).',
  run: (ctx) => {
    const ids = ctx.format && getFamily(ctx.format.id).indexedCallIds;
    if (!ids || !ctx.request) return [];
    const off: { at: string; id: string }[] = [];
    const bare: { at: string; id: string }[] = [];
    const dup: { at: string; id: string }[] = [];
    const seen = new Set<string>();
    ctx.request.messages.forEach((m, i) => {
      (m.toolCalls ?? []).forEach((c, j) => {
        if (c.id === undefined) return;
        const at = `request.messages[${i}].tool_calls[${j}].id`;
        if (seen.has(c.id)) dup.push({ at, id: c.id });
        seen.add(c.id);
        const spelled = ctx.request?.protocol === 'anthropic-messages' ? ANTHROPIC_SPELLING.exec(c.id) : null;
        if (spelled && spelled[1] === c.name.replace(/[^a-zA-Z0-9_-]/g, '_')) return;
        const kind = ids.shape(c.id).kind;
        if (kind === 'malformed' || kind === 'foreign') off.push({ at, id: c.id });
        else if (kind === 'bare') bare.push({ at, id: c.id });
      });
    });
    const out: Finding[] = [];
    const examples = (list: { id: string }[]): string =>
      list
        .slice(0, 3)
        .map((x) => JSON.stringify(x.id))
        .join(', ') + (list.length > 3 ? ', …' : '');
    if (off.length > 0) {
      out.push({
        rule: check.id,
        severity: 'warning',
        message: `${off.length} tool-call id${off.length > 1 ? 's' : ''} in the request history ${off.length > 1 ? 'are' : 'is'} not functions.NAME:IDX (${examples(off)}); K2 imitates them and breaks its next calls. Rename history ids to functions.NAME:IDX with a conversation-wide counter.`,
        location: off[0].at,
      });
    }
    if (dup.length > 0) {
      out.push({
        rule: check.id,
        severity: 'warning',
        message: `${dup.length} tool-call id${dup.length > 1 ? 's' : ''} in the request history ${dup.length > 1 ? 'repeat' : 'repeats'} an earlier one (${examples(dup)}); K2 expects IDX to count calls over the whole conversation.`,
        location: dup[0].at,
      });
    }
    if (bare.length > 0) {
      out.push({
        rule: check.id,
        severity: 'info',
        message: `${bare.length} tool-call id${bare.length > 1 ? 's' : ''} in the request history ${bare.length > 1 ? 'lack' : 'lacks'} the functions. prefix (${examples(bare)}); Moonshot's own API renames them to functions.NAME:IDX, other servers may not.`,
        location: bare[0].at,
      });
    }
    return out;
  },
};

export default check;
