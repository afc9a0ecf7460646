import type { Check } from './types';
import { problemFindings, structuralProblems } from './scan';

/**
 * K2 Thinking / K2.5 may skip `</think>` and go straight to the tool-call section (vLLM PR #32216): the engines end
 * the reasoning there, so the calls still run (a warning). When the model wrote its answer or its calls inside a
 * block it never closed (or closed with a broken marker), vLLM's and SGLang's reasoning parsers keep them as
 * reasoning: the agent never sees the answer nor runs the calls (an error).
 */
const check: Check = {
  id: 'reasoning-unclosed',
  severity: 'error',
  title: 'Reasoning never closed',
  why: 'Without the reasoning end marker, reasoning parsers keep everything after it as reasoning, so the answer or the tool calls that follow are hidden from the agent.',
  run: (ctx) => {
    const stuck = structuralProblems(ctx)
      .filter((p) => p.code === 'reasoning-unclosed')
      .map((p) => p.stuck);
    return problemFindings(ctx, check, 'reasoning-unclosed', (p) => {
      const end = p.marker ?? 'the reasoning end marker';
      const at = p.expectedAt === undefined ? '' : ` (expected at offset ${p.expectedAt})`;
      const head = `Reasoning opened at offset ${p.start} is never closed: ${end} is missing${at}`;
      if (p.stuck === 'calls') return `${head}; the tool calls the model wrote stay in the reasoning, so the agent never runs them.`;
      if (p.stuck === 'answer') return `${head}; the answer the model wrote stays in the reasoning, so the agent never shows it.`;
      if (p.stuck === 'answer-and-calls')
        return `${head}; the answer and the tool calls the model wrote stay in the reasoning, so the agent never shows the one nor runs the others.`;
      return `${head}; what follows counts as reasoning.`;
    }).map((f, i) => (stuck[i] ? f : { ...f, severity: 'warning' as const }));
  },
};

export default check;
