import type { Check } from './types';
import { at, cutLastEvent } from './wire-findings';

const check: Check = {
  id: 'wire-invalid-json',
  severity: 'error',
  title: 'Event that is not valid JSON',
  why: 'SDKs throw on an event they cannot parse, which aborts the whole turn in the agent (often shown only as "Provider returned error").',
  run: (ctx) => {
    const r = ctx.response;
    if (!r) return [];
    const cut = cutLastEvent(r);
    return r.wireIssues
      .filter((w) => w.code === 'invalid-json' && w !== cut)
      .map((w) => ({
        rule: check.id,
        severity: check.severity,
        message: `An event is not valid JSON${at(w)}: ${w.message}`,
        location: 'wire',
      }));
  },
};

export default check;
