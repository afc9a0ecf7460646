import type { Check } from './types';
import { at, wireFindings } from './wire-findings';

const check: Check = {
  id: 'stream-unterminated',
  severity: 'error',
  title: 'Stream ended without its terminal event',
  why: 'Without `[DONE]` / `message_stop` / `response.completed` the agent cannot tell a finished turn from a dropped connection: it hangs, retries, or runs a half-streamed call.',
  run: (ctx) =>
    wireFindings(ctx, check, ['no-terminal-event', 'truncated-body'], (w) => {
      const events = ctx.response?.events.length ?? 0;
      return `The response ended without its terminal event after ${events} event${events === 1 ? '' : 's'}${at(w)}: ${w.message}`;
    }),
};

export default check;
