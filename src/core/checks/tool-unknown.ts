import type { Finding } from '../model';
import type { Check } from './types';
import { segmentFor } from './scan';

const check: Check = {
  id: 'tool-unknown',
  severity: 'error',
  title: 'Call to a tool the request did not offer',
  why: 'The agent has no such tool: it answers with an "invalid tool" error, and the turn is lost (a hallucinated or mangled name, e.g. `manage_cart<|channel|>commentary`).',
  run: (ctx) => {
    // A native SGLang `/generate` request sends a rendered prompt or token ids: it has no tools list to judge names by.
    if (!ctx.request || ctx.request.protocol === 'sglang-generate') return [];
    const offered = ctx.request.tools.map((t) => t.name);
    const known = new Set(offered);
    const out: Finding[] = [];
    ctx.message.toolCalls.forEach((call, i) => {
      if (known.has(call.name)) return;
      const seg = segmentFor(ctx, 'call-name', i) ?? segmentFor(ctx, 'call', i);
      const list = offered.length <= 8 ? offered.join(', ') : `${offered.slice(0, 8).join(', ')}, …`;
      const message =
        offered.length === 0
          ? `Call ${i} asks for tool ${JSON.stringify(call.name)} but the request offered no tools.`
          : call.name === ''
            ? `Call ${i} has no tool name; the request offered ${offered.length} tool${offered.length > 1 ? 's' : ''} (${list}).`
            : `Call ${i} asks for tool ${JSON.stringify(call.name)}, which is not among the ${offered.length} tool${offered.length > 1 ? 's' : ''} the request offered (${list}).`;
      out.push({
        rule: check.id,
        severity: offered.length === 0 ? 'warning' : check.severity,
        message,
        location: `tool_calls[${i}].name`,
        ...(seg ? { start: seg.start, end: seg.end } : {}),
      });
    });
    return out;
  },
};

export default check;
