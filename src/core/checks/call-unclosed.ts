import type { Check } from './types';
import { callLabel, familyName, problemFindings, where } from './scan';

const check: Check = {
  id: 'call-unclosed',
  severity: 'error',
  title: 'Tool call never closed',
  why: 'SGLang and vLLM silently drop a call without its end marker, so the agent never runs it and usually sees an empty turn.',
  run: (ctx) =>
    problemFindings(ctx, check, 'call-unclosed', (p) => {
      const missing = p.marker ? `${p.marker} is missing` : 'its end marker is missing';
      const at = p.expectedAt === undefined ? '' : ` (expected at offset ${p.expectedAt})`;
      return `${familyName(p.family)} ${callLabel(p.callIndex, p.callName)}${where(p)} is never closed: ${missing}${at}.`;
    }),
};

export default check;
