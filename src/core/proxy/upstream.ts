/**
 * One call to the upstream, at undici's handler level (`dispatch`): the response head comes as a promise and its body
 * as plain events, with no stream object and no promise per read in between (undici's `request` wraps the same calls
 * in a Readable; on this path that cost about 0.1 ms per exchange, before the first byte). Errors carry undici's codes
 * (`UND_ERR_HEADERS_TIMEOUT` rejects the head, `UND_ERR_BODY_TIMEOUT` fails the body). The call is aborted through
 * its own `abort`, not an AbortSignal: adding and removing a signal's listener cost about 0.04 ms per exchange here.
 */
import { util, type Dispatcher } from 'undici';

export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

type Failure = Error & { code?: string };

/**
 * The response body: `data` for each read (buffered until a listener is there, and while paused), then `end` or
 * `error`, each on a later turn of the tick queue than the data before it, as a Readable's would be.
 */
export class UpstreamBody {
  private onData: ((chunk: Buffer) => void) | undefined;
  private onEnd: (() => void) | undefined;
  private onError: ((e: Failure) => void) | undefined;
  private readonly queued: Buffer[] = [];
  private paused = false;
  private state: 'open' | 'ended' | 'failed' | 'destroyed' = 'open';
  private failure: Failure | undefined;
  private settled = false;
  private flushing = false;

  constructor(
    private readonly resumeUpstream: () => void,
    private readonly abort: (e: Error) => void,
  ) {}

  on(event: 'data', fn: (chunk: Buffer) => void): this {
    if (event === 'data') {
      this.onData = fn;
      this.schedule();
    }
    return this;
  }

  once(event: 'end', fn: () => void): this;
  once(event: 'error', fn: (e: Failure) => void): this;
  once(event: 'end' | 'error', fn: ((e: Failure) => void) | (() => void)): this {
    if (event === 'end') this.onEnd = fn as () => void;
    else this.onError = fn as (e: Failure) => void;
    this.schedule();
    return this;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.schedule();
    this.resumeUpstream();
  }

  /** Gives up on the response (the client is gone): the upstream call is aborted, and nothing more is emitted. */
  destroy(): void {
    if (this.state !== 'open') return;
    this.state = 'destroyed';
    this.queued.length = 0;
    this.abort(new Error('the response was given up'));
  }

  /** From undici: one read. False asks undici to pause reading. */
  push(chunk: Buffer): boolean {
    if (this.state !== 'open') return false;
    if (this.onData && !this.paused && this.queued.length === 0) this.onData(chunk);
    else this.queued.push(chunk), this.schedule();
    return !this.paused;
  }

  end(): void {
    if (this.state !== 'open') return;
    this.state = 'ended';
    this.schedule();
  }

  fail(e: Failure): void {
    if (this.state !== 'open') return;
    this.state = 'failed';
    this.failure = e;
    this.schedule();
  }

  /** Delivers what waits (data, then the end or error) on the next turn of the tick queue. */
  private schedule(): void {
    if (this.flushing || this.settled || !this.onData) return;
    if (this.queued.length === 0 && this.state === 'open') return;
    this.flushing = true;
    process.nextTick(() => this.flush());
  }

  private flush(): void {
    this.flushing = false;
    let delivered = false;
    while (this.queued.length > 0 && !this.paused && this.onData && this.state !== 'destroyed')
      (delivered = true), this.onData(this.queued.shift()!);
    if (this.queued.length > 0 || this.paused || this.settled) return;
    // The end (or error) after what the data just delivered queued, as a Readable's comes.
    if (delivered && this.state !== 'open') return this.schedule();
    if (this.state === 'ended' && this.onEnd) (this.settled = true), this.onEnd();
    else if (this.state === 'failed' && this.onError) (this.settled = true), this.onError(this.failure!);
  }
}

export interface UpstreamCall {
  /** The response head, once it arrives (informational 1xx heads are skipped). */
  response: Promise<UpstreamResponse>;
  /** Gives up on the call: a head not yet here rejects with `reason`, a body under way fails with it. */
  abort(reason: Error): void;
}

/** Starts the call. `ended` is called once, when the call is over (its body complete, or failed or aborted). */
export function callUpstream(dispatcher: Dispatcher, dispatchOpts: Dispatcher.DispatchOptions, ended?: () => void): UpstreamCall {
  let abort: ((e: Error) => void) | undefined;
  let reason: Error | undefined;
  let over = false;
  const end = () => {
    if (over) return;
    over = true;
    ended?.();
  };
  const response = new Promise<UpstreamResponse>((resolve, reject) => {
    let body: UpstreamBody | undefined;
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abortCall) {
        abort = abortCall;
        if (reason) abortCall(reason);
      },
      onHeaders(statusCode, rawHeaders, resume) {
        if (statusCode < 200) return true;
        body = new UpstreamBody(resume, (e) => abort?.(e));
        resolve({ statusCode, headers: util.parseHeaders(rawHeaders), body });
        return true;
      },
      onData(chunk) {
        return body ? body.push(chunk) : true;
      },
      onComplete() {
        end();
        body?.end();
      },
      onError(e) {
        end();
        // A streamed request body is given up too (undici's own `request` does the same).
        const sent = dispatchOpts.body as { destroy?: (e: Error) => void; on?: (event: 'error', fn: () => void) => void } | undefined;
        if (sent && typeof sent.destroy === 'function') sent.on?.('error', () => undefined), sent.destroy(e);
        if (body) body.fail(e);
        else reject(e);
      },
    };
    try {
      dispatcher.dispatch(dispatchOpts, handler);
    } catch (e) {
      end();
      reject(e);
    }
  });
  return {
    response,
    abort(e) {
      if (reason) return;
      reason = e;
      abort?.(e);
    },
  };
}
