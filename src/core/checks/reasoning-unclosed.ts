import type { Check } from './types';
import { problemFindings } from './scan';

/** K2 Thinking / K2.5 may skip `</think>` and go straight to the tool-call section (vLLM PR #32216). */
const check: Check = {
  id: 'reasoning-unclosed',
  severity: 'warning',
  title: 'Reasoning never closed',
  why: 'Without the reasoning end marker, reasoning parsers keep everything after it as reasoning, so the answer or the tool calls that follow are hidden from the agent.',
  run: (ctx) =>
    problemFindings(ctx, check, 'reasoning-unclosed', (p) => {
      const end = p.marker ?? 'the reasoning end marker';
      const at = p.expectedAt === undefined ? '' : ` (expected at offset ${p.expectedAt})`;
      return `Reasoning opened at offset ${p.start} is never closed: ${end} is missing${at}; what follows counts as reasoning.`;
    }),
};

export default check;
