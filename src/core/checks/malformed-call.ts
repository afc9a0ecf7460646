import type { Check } from './types';
import { familyName, problemFindings, where } from './scan';

/** e.g. Fireworks kimi-k2p6-turbo: `channel_reply:0<|tool_call_argument_begin|>{…}` without `<|tool_call_begin|>`. */
const check: Check = {
  id: 'malformed-call',
  severity: 'error',
  title: 'Tool-call markup outside the grammar',
  why: "Markup the family's parser cannot match is either dropped or passed through as text; either way the agent does not get the call.",
  run: (ctx) =>
    problemFindings(
      ctx,
      check,
      'malformed-call',
      (p) => `${familyName(p.family)} tool-call markup${where(p)} at offset ${p.start} does not follow the format: ${p.message}`,
    ),
};

export default check;
