/**
 * Connections to each upstream. An exchange holds one connection for its whole life (HTTP/1.1 carries one exchange
 * at a time, and a stream lasts minutes), so the limit per upstream is a count of exchanges in flight: under it an
 * exchange starts at once on a connection of its own, whatever the others do (a slow client or a slow request body
 * only ever holds its own); at it, the exchange waits in order for one to end, and the caller counts that wait in its
 * upstream timeout and records it. Taking a free slot is a counter increment: nothing waits on the usual path.
 */

/** Per upstream (scheme, host and port), by default: enough for an agent with many parallel sub-agents. */
export const DEFAULT_UPSTREAM_CONNECTIONS = 256;
/** The most a user may set (each connection is a file descriptor, with the client's and the capture's beside it). */
export const MAX_UPSTREAM_CONNECTIONS = 4096;

interface Waiter {
  give(got: boolean): void;
  timer: NodeJS.Timeout;
}

interface Origin {
  busy: number;
  waiting: Waiter[];
}

export interface SlotWait {
  /** True once the caller holds a slot (it must `release` it); false when the wait timed out or was cancelled. */
  got: Promise<boolean>;
  cancel(): void;
}

export class UpstreamSlots {
  private readonly origins = new Map<string, Origin>();

  constructor(readonly max: number = DEFAULT_UPSTREAM_CONNECTIONS) {}

  /** Takes a slot for `origin` when one is free. */
  take(origin: string): boolean {
    let o = this.origins.get(origin);
    if (!o) this.origins.set(origin, (o = { busy: 0, waiting: [] }));
    if (o.busy >= this.max) return false;
    o.busy++;
    return true;
  }

  /** Waits, in order, for a slot of `origin`, at most `ms`. */
  wait(origin: string, ms: number): SlotWait {
    let o = this.origins.get(origin);
    if (!o) this.origins.set(origin, (o = { busy: 0, waiting: [] }));
    const origin_ = o;
    let waiter!: Waiter;
    const got = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => leave(false), Math.max(1, ms));
      waiter = { timer, give: (v) => (clearTimeout(timer), resolve(v)) };
      origin_.waiting.push(waiter);
    });
    const leave = (v: boolean) => {
      const i = origin_.waiting.indexOf(waiter);
      if (i < 0) return;
      origin_.waiting.splice(i, 1);
      waiter.give(v);
    };
    if (o.busy < this.max && o.waiting[0] === waiter) {
      o.busy++;
      o.waiting.shift();
      waiter.give(true);
    }
    return { got, cancel: () => leave(false) };
  }

  /** Gives a slot back: the longest waiter gets it. */
  release(origin: string): void {
    const o = this.origins.get(origin);
    if (!o) return;
    const next = o.waiting.shift();
    if (next) return next.give(true);
    o.busy = Math.max(0, o.busy - 1);
    if (o.busy === 0) this.origins.delete(origin);
  }

  /** Exchanges in flight to `origin`. */
  inUse(origin: string): number {
    return this.origins.get(origin)?.busy ?? 0;
  }
}
