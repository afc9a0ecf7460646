import type { Check } from './types';
import { leakFindings } from './scan';
import { unknownMarkupFindings } from './unknown-markup';

/** anomalyco/opencode#8851, Kilo-Org/kilocode PR #5750, MoonshotAI/Kimi-K2#89: K2 calls tools without closing its thinking. */
const check: Check = {
  id: 'markup-in-reasoning',
  severity: 'error',
  title: 'Tool call written inside reasoning',
  why: 'Calls inside the reasoning are never executed: the agent only reads tool calls from the structured field, so the session stalls.',
  run: (ctx) => [...leakFindings(ctx, check, 'reasoning', 'the call stays in the thinking text and the agent never runs it.'), ...unknownMarkupFindings(ctx, check, 'reasoning')],
};

export default check;
