/**
 * Groups exchanges into sessions: one agent's run of requests with no idle gap longer than the window.
 * A coding-agent turn fires many requests within seconds; a new session starts when the user comes back later.
 */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

export class Sessions {
  private readonly open = new Map<string, { id: string; last: number }>();

  constructor(private readonly idleMs = SESSION_IDLE_MS) {}

  /** The session an exchange starting at `at` belongs to; `newId` names a session when a new one starts. */
  assign(agent: string | undefined, at: number, newId: string): string {
    const key = agent ?? '';
    const cur = this.open.get(key);
    if (cur && at - cur.last <= this.idleMs && at >= cur.last - this.idleMs) {
      cur.last = Math.max(cur.last, at);
      return cur.id;
    }
    this.open.set(key, { id: newId, last: at });
    return newId;
  }

  /** Replays a stored exchange (in start order) so sessions continue across restarts. */
  note(agent: string | undefined, at: number, sessionId: string): void {
    const key = agent ?? '';
    const cur = this.open.get(key);
    if (!cur || at >= cur.last) this.open.set(key, { id: sessionId, last: at });
  }
}
