import type { Check } from './types';
import { callLabel, familyName, problemFindings, where } from './scan';

/**
 * The message says what arrived: a call whose arguments are whole and only lacks its closing markers (the output
 * stopped right after `</parameter>`, or the model never wrote `</tool_call>`), a call cut off inside its arguments,
 * or an opening marker with nothing after it.
 */
const check: Check = {
  id: 'call-unclosed',
  severity: 'error',
  title: 'Tool call never closed',
  why: 'SGLang and vLLM silently drop a call without its end marker, so the agent never runs it and usually sees an empty turn.',
  run: (ctx) =>
    problemFindings(ctx, check, 'call-unclosed', (p) => {
      const marker = p.marker ?? 'its end marker';
      const at = p.expectedAt === undefined ? '' : ` (expected at offset ${p.expectedAt})`;
      const call = `${familyName(p.family)} ${callLabel(p.callIndex, p.callName)}${where(p)}`;
      switch (p.callState) {
        case 'complete':
          return `${call} is never closed: its arguments arrived whole, only the closing markup is missing from ${marker} on${at}.`;
        case 'empty':
          return `${call} is never closed: nothing follows its opening marker, and ${marker} is missing${at}.`;
        case 'cut':
          return `${call} is cut off inside its arguments: ${marker} is missing${at}, and the arguments that arrived are incomplete.`;
        default:
          return `${call} is never closed: ${marker} is missing${at}.`;
      }
    }),
};

export default check;
