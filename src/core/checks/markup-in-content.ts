import type { Check } from './types';
import { leakFindings } from './scan';
import { unknownMarkupFindings } from './unknown-markup';

/** vLLM PRs #28543 / #31207, NousResearch/hermes-agent#24534, Fireworks kimi-k2p6-turbo (typeclaw PR #344). */
const check: Check = {
  id: 'markup-in-content',
  severity: 'error',
  title: 'Tool-call markup leaked into content',
  why: 'The server parser did not turn the markup into tool calls: the agent shows raw control tokens instead of running the call, and usually ends the turn.',
  run: (ctx) => [
    ...leakFindings(ctx, check, 'content', 'the agent receives it as text, not as tool calls.'),
    ...unknownMarkupFindings(ctx, check, 'content'),
  ],
};

export default check;
