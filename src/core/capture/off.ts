/**
 * Forwarding without capturing: a writer that records nothing (an exchange the store cannot take now: too many
 * captures wait for a database another program has locked, ./write-lock.ts), and a store that captures nothing (the
 * capture database could not be opened at all: `serve` still forwards and says capture is off).
 */
import { UserError, type CapturedExchange } from '../model';
import type { RedactOptions } from '../redact';
import { mergeFields } from './log';
import { newId } from './ids';
import { startExchange } from './start';
import type { BeginInit, CaptureStore, ExchangeAnnotations, ExchangeWriter, StoreChange } from './types';

/** Follows an exchange (status, sizes, outcome) for the proxy's own report, keeping none of its bytes. */
export class UncapturedWriter implements ExchangeWriter {
  private bytes = 0;
  private done = false;

  constructor(
    private readonly x: CapturedExchange,
    private readonly t0: number,
  ) {}

  get id(): string {
    return this.x.id;
  }

  responseStarted(status: number, _headers: Record<string, string | string[] | undefined>, ttfbMs?: number): void {
    if (this.done) return;
    this.x.status = status;
    this.x.ttfbMs = ttfbMs ?? Math.round((performance.now() - this.t0) * 1000) / 1000;
  }

  chunk(bytes: Uint8Array): void {
    if (!this.done) this.bytes += bytes.length;
  }

  cork(): void {}
  uncork(): void {}
  ended(): void {}
  delivering(): void {}
  deliver(): void {}
  deliveredUnchanged(): void {}

  annotate(fields: ExchangeAnnotations): void {
    if (!this.done) mergeFields(this.x, fields);
  }

  async finish(opts: { error?: string; incomplete?: boolean; endedAt?: number } = {}): Promise<CapturedExchange> {
    if (!this.done) {
      this.done = true;
      mergeFields(this.x, {
        state: opts.incomplete ? 'incomplete' : opts.error ? 'error' : 'complete',
        endedAt: opts.endedAt ?? Date.now(),
        responseBytes: this.bytes,
        error: opts.error,
      });
    }
    return { ...this.x };
  }
}

/** A writer for an exchange nothing is recorded of. */
export function uncaptured(init: BeginInit, redact: RedactOptions): UncapturedWriter {
  const startedAt = init.startedAt ?? Date.now();
  const id = newId(startedAt);
  const x = startExchange(init, id, init.sessionId ?? `s${id}`, startedAt, redact);
  return new UncapturedWriter(x, performance.now() - (Date.now() - startedAt));
}

/**
 * The store of a proxy whose capture is off (`reason` says why): every exchange is forwarded, none is recorded, and
 * reading finds nothing.
 */
export function captureOffStore(dataDir: string, reason: string): CaptureStore & { readonly off: string } {
  const refuse = (): never => {
    throw new UserError(`capture is off: ${reason}`);
  };
  return {
    dataDir,
    readOnly: false,
    off: reason,
    list: () => [],
    get: () => undefined,
    readResponse: () => undefined,
    query: () => [],
    readAnalysis: () => undefined,
    idsWithPrefix: () => [],
    readResponseFrames: () => undefined,
    readDelivered: () => undefined,
    begin: (init: BeginInit) => uncaptured(init, {}),
    delete: async () => refuse(),
    onDidChange: (_l: (e: StoreChange) => void) => () => undefined,
    lastComparisons: () => [],
    putComparisons: () => undefined,
    providerSlugs: () => [],
    learnProviderSlugs: () => undefined,
    prune: async () => refuse(),
    idle: async () => undefined,
    close: async () => undefined,
  };
}
