import type { Finding, ParsedResponse, WireIssue } from '../model';
import { eventCount } from '../wire/common';
import type { CheckContext } from './types';

/** One finding per wire issue of the given codes (the wire parser already wrote a precise message). */
export function wireFindings(
  ctx: CheckContext,
  rule: { id: string; severity: Finding['severity'] },
  codes: readonly WireIssue['code'][],
  message: (issue: WireIssue) => string,
): Finding[] {
  return (ctx.response?.wireIssues ?? [])
    .filter((w) => codes.includes(w.code))
    .map((w) => ({ rule: rule.id, severity: rule.severity, message: message(w), location: 'wire' }));
}

/** ` (event 12, byte 3456)` when the issue says where. */
export function at(issue: WireIssue): string {
  const parts = [
    issue.eventIndex === undefined ? '' : `event ${issue.eventIndex}`,
    issue.offset === undefined ? '' : `byte ${issue.offset}`,
  ].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/**
 * The invalid-JSON issue of a stream's last event when the stream then ended without its terminal event: the event
 * was cut off with the stream, not sent broken, so stream-unterminated reports it (SDKs never dispatch such a tail).
 */
export function cutLastEvent(r: ParsedResponse): WireIssue | undefined {
  if (!r.wireIssues.some((w) => w.code === 'no-terminal-event')) return undefined;
  return r.wireIssues.find((w) => w.code === 'invalid-json' && w.eventIndex === eventCount(r) - 1);
}
