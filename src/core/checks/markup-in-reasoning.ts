import type { Check, CheckContext } from './types';
import { familyName, leakFindings, leaks, structuralProblems, type Leak } from './scan';
import { unknownMarkupFindings } from './unknown-markup';

/**
 * Calls written inside the reasoning are lost (anomalyco/opencode#8851, Kilo-Org/kilocode PR #5750,
 * MoonshotAI/Kimi-K2#89: K2 calls tools without closing its thinking). A well-formed call quoted in a closed reasoning
 * block, when the turn then makes that call for real, is the model planning it: vLLM's seed_oss parser looks for calls
 * only after `</seed:think>` and returns the real one (vLLM test `tool_call_unlimited_thinking_budget`), so it is told
 * as information, not as a lost call.
 */
const check: Check = {
  id: 'markup-in-reasoning',
  severity: 'error',
  title: 'Tool call written inside reasoning',
  why: 'Calls inside the reasoning are never executed: the agent only reads tool calls from the structured field, so the session stalls.',
  run: (ctx) => {
    const quoted = new Map(
      leaks(ctx)
        .filter((l) => l.region === 'reasoning' && quotedExample(ctx, l))
        .map((l) => [`${l.start} ${l.end}`, l]),
    );
    const known = leakFindings(ctx, check, 'reasoning', 'the call stays in the thinking text and the agent never runs it.').map((f) => {
      const l = quoted.get(`${f.start} ${f.end}`);
      if (!l) return f;
      const n = l.parsed.message.toolCalls.length;
      return {
        ...f,
        severity: 'info' as const,
        message: `${familyName(l.family)} tool-call markup is quoted in the reasoning (${n} call${n > 1 ? 's' : ''}: ${l.parsed.message.toolCalls.map((c) => c.name).join(', ')}), and the turn makes the same call${n > 1 ? 's' : ''} after it: what runs is the call after the reasoning.`,
      };
    });
    return [...known, ...unknownMarkupFindings(ctx, check, 'reasoning')];
  },
};

/**
 * The reasoning holds whole, well-formed calls, the reasoning block was closed, and the turn's own calls (after it)
 * include each of them by name.
 */
function quotedExample(ctx: CheckContext, l: Leak): boolean {
  const quotedCalls = l.parsed.message.toolCalls;
  if (!quotedCalls.length || l.parsed.problems.length) return false;
  const real = new Set(ctx.message.toolCalls.map((c) => c.name));
  if (!quotedCalls.every((c) => real.has(c.name))) return false;
  const open = structuralProblems(ctx).some((p) => p.code === 'reasoning-unclosed' && p.start <= l.segment.end && p.end >= l.segment.start);
  if (open) return false;
  // In a raw turn, the real calls come after the reasoning.
  if (ctx.native.source !== 'raw') return true;
  return ctx.native.segments.some((s) => s.kind === 'call' && s.start >= l.segment.end);
}

export default check;
