/**
 * The agent's own session, when it names one: requests of one agent run carry the same id, so two runs started a
 * minute apart are two sessions and one run that pauses for an hour stays one. Without such a header the store
 * groups an agent's requests by idle time (capture/sessions.ts).
 */
import { createHash } from 'node:crypto';
import { headerText } from './headers';

/** Most specific first. Facts: shared reference agents.md §2.10, and each agent's requests as sent. */
const SESSION_HEADERS = [
  'x-claude-code-session-id', // Claude Code
  'session_id', // Codex (Responses requests)
  'session-id',
  'conversation_id', // older Codex
  'x-session-id', // OpenCode, and others
  'x-session-affinity', // OpenCode
  'x-qwen-code-session-id',
];

/**
 * A stable session id for the capture from the agent's session header (`s` + 16 hex digits of a hash: the same
 * agent session maps to the same id across Tokenscope restarts, and the raw value never becomes a path or a label).
 */
export function agentSessionId(headers: Record<string, string | string[] | undefined>, agent: string | undefined): string | undefined {
  for (const name of SESSION_HEADERS) {
    const v = headerText(headers[name])?.trim();
    if (v && v.length <= 512)
      return `s${createHash('sha256')
        .update(`${agent ?? ''}\u0000${v}`)
        .digest('hex')
        .slice(0, 16)}`;
  }
  return undefined;
}
