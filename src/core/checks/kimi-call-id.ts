import type { Finding } from '../model';
import type { Check } from './types';
import { getFamily } from '../families/index';
import { segmentFor, structuralProblems } from './scan';

/** sgl-project/sglang PR #21377 (`functionsexec5`), exo-explore/exo#2281 (`functions_<name>_<n>`), vLLM PRs #21259 / #46344. */
const check: Check = {
  id: 'kimi-call-id',
  severity: 'error',
  title: 'Kimi tool-call id not functions.NAME:IDX',
  why: 'Kimi parsers skip calls whose id is not `(functions.)NAME:IDX`, and every id is echoed into the next prompt: an off-format id makes K2 emit broken calls later.',
  run: (ctx) => {
    const ids = ctx.format && getFamily(ctx.format.id).indexedCallIds;
    if (!ids) return [];
    // Calls outside the grammar (the Fireworks `channel_reply:0<|tool_call_argument_begin|>` leak): malformed-call
    // already lists their id among the defects.
    const own = ctx.native.source === 'raw' ? structuralProblems(ctx).filter((p) => p.family === ctx.parsed?.family) : [];
    const malformed = new Set(own.filter((p) => p.code === 'malformed-call').map((p) => p.callIndex));
    const out: Finding[] = [];
    const seen = new Map<string, number>();
    ctx.message.toolCalls.forEach((call, i) => {
      if (call.id === undefined) return;
      // A reconstruction writes ids it cannot render as `functions.NAME:INDEX` (families/kimi-k2/grammar.ts): point at the id
      // only where the text holds it.
      const seg = segmentFor(ctx, 'call-id', i);
      const range = seg && ctx.native.text.slice(seg.start, seg.end) === call.id ? { start: seg.start, end: seg.end } : {};
      const found = (severity: Finding['severity'], message: string): void => {
        out.push({ rule: check.id, severity, message, location: `tool_calls[${i}].id`, ...range });
      };
      const id = JSON.stringify(call.id);
      const shape = ids.shape(call.id);
      const first = seen.get(call.id);
      seen.set(call.id, first ?? i);
      if (first !== undefined) {
        found('error', `Call ${i} reuses id ${id} of call ${first}; the agent cannot tell their results apart.`);
      } else if (malformed.has(i)) {
        // Reported with the call's other defects.
      } else if (shape.kind === 'malformed') {
        found(
          'error',
          `Call ${i} (${call.name || 'no name'}) has id ${id}, not functions.NAME:IDX: Kimi parsers drop or mis-name such calls.`,
        );
      } else if ((shape.kind === 'canonical' || shape.kind === 'bare') && call.name && shape.name !== call.name) {
        found(
          'error',
          `Call ${i} has id ${id}, which names ${JSON.stringify(shape.name)}, but the call is to ${JSON.stringify(call.name)}; parsers that take the name from the id run the wrong tool.`,
        );
      } else if (shape.kind === 'foreign') {
        found(
          'warning',
          `Call ${i} (${call.name}) has id ${id}, not functions.${call.name}:${i}: once echoed back in the history it pushes K2 off its format unless the server renames ids.`,
        );
      } else if (shape.kind === 'bare') {
        found(
          'info',
          `Call ${i} has id ${id} without the functions. prefix; SGLang accepts it, Moonshot's template writes functions.${shape.name}:${shape.index}.`,
        );
      }
    });
    return out;
  },
};

export default check;
