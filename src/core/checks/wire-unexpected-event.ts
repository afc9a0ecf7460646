import type { Check } from './types';
import { at, wireFindings } from './wire-findings';

const check: Check = {
  id: 'wire-unexpected-event',
  severity: 'warning',
  title: 'Event out of protocol order',
  why: "Strict SDKs (Anthropic's, the Responses client) reject events out of order; lenient ones drop them, losing part of the turn.",
  run: (ctx) => wireFindings(ctx, check, ['unexpected-event'], (w) => `Unexpected event${at(w)}: ${w.message}`),
};

export default check;
