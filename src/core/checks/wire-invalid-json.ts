import type { Check } from './types';
import { at, wireFindings } from './wire-findings';

const check: Check = {
  id: 'wire-invalid-json',
  severity: 'error',
  title: 'Event that is not valid JSON',
  why: 'SDKs throw on an event they cannot parse, which aborts the whole turn in the agent (often shown only as "Provider returned error").',
  run: (ctx) => wireFindings(ctx, check, ['invalid-json'], (w) => `An event is not valid JSON${at(w)}: ${w.message}`),
};

export default check;
