import type { Check } from './types';
import { eventCount } from '../wire/common';
import { at, cutLastEvent, wireFindings } from './wire-findings';

/**
 * A stream that stopped without its terminal event. Whose doing it was decides the severity: the upstream's (a reset,
 * a dropped connection) is an error; the agent closing the connection (cancelled, or its own timeout) is a warning
 * that blames no one; Tokenscope stopping mid-capture only means the capture is incomplete. When the upstream sent an
 * error event, that error explains the end and upstream-error reports it alone.
 */
const check: Check = {
  id: 'stream-unterminated',
  severity: 'error',
  title: 'Stream ended without its terminal event',
  why: 'Without `[DONE]` / `message_stop` / `response.completed` the agent cannot tell a finished turn from a dropped connection: it hangs, retries, or runs a half-streamed call.',
  run: (ctx) => {
    const r = ctx.response;
    if (!r || r.error) return [];
    const n = eventCount(r);
    const events = `${n} event${n === 1 ? '' : 's'}`;
    const cut = cutLastEvent(r);
    const tail = cut ? `; the last event${at(cut)} is cut off mid-JSON` : '';
    const findings = wireFindings(ctx, check, ['no-terminal-event', 'truncated-body'], (w) => {
      switch (r.cutBy) {
        case 'client':
          return `The client closed the connection after ${events}${at(w)}, before the response ended${tail}: the agent cancelled the turn or gave up waiting; the upstream did not cut it.`;
        case 'idle':
          return `The upstream went silent mid-response after ${events}${at(w)}: ${idleEnd(r.idleSeconds)}${tail}.`;
        case 'tokenscope':
          return `Tokenscope stopped capturing after ${events}${at(w)}, while the response was streaming${tail}: the rest was not recorded; the upstream did not cut it.`;
        default:
          return `The response ended without its terminal event after ${events}${at(w)}: ${w.message}${tail}.`;
      }
    });
    const severity = r.cutBy === 'client' ? 'warning' : r.cutBy === 'tokenscope' ? 'info' : check.severity;
    return findings.map((f) => ({ ...f, severity }));
  },
};

/** What Tokenscope's idle timeout did, for stream-unterminated and empty-response. */
export function idleEnd(seconds: number | undefined): string {
  const gap = seconds === undefined ? '' : ` after ${seconds} s of silence`;
  return `Tokenscope's idle timeout ended the response${gap} (a streaming client got an error event in its API's shape; serve --idle-timeout, setting tokenscope.proxy.idleTimeout)`;
}

export default check;
