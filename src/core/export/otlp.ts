/**
 * OpenTelemetry export: every finished exchange becomes one GenAI inference span (./otlp-span.ts), sent with the
 * official OpenTelemetry JS SDK (a BasicTracerProvider, a BatchSpanProcessor, the OTLP/HTTP protobuf or JSON trace
 * exporter), configured by ./otlp-config.ts.
 *
 * It never sits on the forwarding path: `attach` listens to the capture store's change events and, when an exchange
 * has finished, queues its id; spans are built one per turn of the event loop, later, from what the store kept.
 * A collector that is down costs nothing but the spans: the queue is bounded, each span that cannot be queued or sent
 * is counted (`stats().dropped`), and a throttled warning says so. Nothing unredacted is exported: the capture goes
 * through the export redaction pass (./redaction.ts) before a span is built from it.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { ExchangeAnalysis } from '../analyze';
import { redactedResult } from './repro';
import type { CaptureReader, CapturedExchange } from '../model';
import type { RedactOptions } from '../redact';
import type { OtlpConfig } from './otlp-config';
import { exchangeSpan, type SpanData } from './otlp-span';
import { redactCapture } from './redaction';

export interface OtlpStats {
  /** Spans the collector accepted. */
  exported: number;
  /** Spans lost: the queue was full, or the collector refused or could not be reached. */
  dropped: number;
  droppedQueueFull: number;
  droppedFailed: number;
  /** Spans built and not yet answered by the collector. */
  pending: number;
  /** Exchanges that are no inference call (a model list, a token count): no span. */
  skipped: number;
  lastError?: string;
}

export interface OtlpExporterOptions {
  /** One-line warnings (dropped spans), throttled to one a minute. */
  onWarning?: (msg: string) => void;
  /** The user's extra redaction patterns. */
  redactPatterns?: RedactOptions['patterns'];
  /** Replaces the OTLP exporter (tests). */
  exporter?: SpanExporter;
  /** Tokenscope's version, for `service.version`. */
  version?: string;
}

/** What `attach` needs of the capture store: its reader API and its change events. */
export interface ObservableStore extends CaptureReader {
  /** Resolves once the store's queued analyses ran (a span reads the stored analysis instead of analysing again). */
  idle?(): Promise<void>;
  onDidChange(listener: (e: { kind: 'added' | 'updated' | 'deleted'; exchange: CapturedExchange }) => void): () => void;
}

/** Bodies above this get a span without findings: analysing them again would stall the event loop. */
const MAX_ANALYZED_BYTES = 8 * 1024 * 1024;
/** Finished exchanges waiting for their span, at most (beyond that they are dropped and counted). */
const MAX_WAITING = 4096;
const WARN_EVERY_MS = 60_000;

/** Counts what the SDK's exporter does with each batch. */
class CountingExporter implements SpanExporter {
  handed = 0;
  exported = 0;
  failed = 0;
  lastError?: string;
  constructor(
    private readonly inner: SpanExporter,
    private readonly onFailure: () => void,
  ) {}
  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.handed += spans.length;
    this.inner.export(spans, (r) => {
      if (r.code === ExportResultCode.SUCCESS) this.exported += spans.length;
      else {
        this.failed += spans.length;
        this.lastError = oneLine(r.error);
        this.onFailure();
      }
      done(r);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

function oneLine(e: unknown): string {
  const err = e as { message?: string; code?: string; cause?: { code?: string } } | undefined;
  const msg = err?.message || err?.code || err?.cause?.code || String(e ?? 'export failed');
  return msg.split('\n')[0].slice(0, 200);
}

export function createOtlpSpanExporter(config: OtlpConfig): SpanExporter {
  const options = { url: config.url, headers: config.headers, timeoutMillis: config.timeoutMs };
  return config.protocol === 'http/json' ? new JsonTraceExporter(options) : new ProtoTraceExporter(options);
}

export class OtlpExporter {
  private readonly provider: BasicTracerProvider;
  private readonly counting: CountingExporter;
  private readonly tracer;
  private built = 0;
  private droppedQueueFull = 0;
  private skipped = 0;
  private lastWarning = 0;
  private reportedDrops = 0;
  private readonly waiting: string[] = [];
  private readonly seen = new Set<string>();
  private draining = false;
  private drained: (() => void)[] = [];
  private closed = false;

  constructor(
    readonly config: OtlpConfig,
    private readonly opts: OtlpExporterOptions = {},
  ) {
    this.counting = new CountingExporter(opts.exporter ?? createOtlpSpanExporter(config), () => this.warnDrops());
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: opts.version ?? '0.1.0' }),
      spanProcessors: [
        new BatchSpanProcessor(this.counting, {
          maxQueueSize: config.maxQueueSize,
          maxExportBatchSize: Math.min(512, config.maxQueueSize),
          scheduledDelayMillis: config.batchDelayMs,
          exportTimeoutMillis: config.timeoutMs + 1000,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('tokenscope', opts.version);
  }

  stats(): OtlpStats {
    const c = this.counting;
    return {
      exported: c.exported,
      dropped: this.droppedQueueFull + c.failed,
      droppedQueueFull: this.droppedQueueFull,
      droppedFailed: c.failed,
      pending: this.built - c.exported - c.failed,
      skipped: this.skipped,
      ...(c.lastError !== undefined && { lastError: c.lastError }),
    };
  }

  /** Sends one span. False when there was none to send (no inference call) or the queue was full (counted). */
  emit(span: SpanData | undefined): boolean {
    if (this.closed) return false;
    if (!span) {
      this.skipped++;
      return false;
    }
    // The processor's queue holds what was built and not yet handed to the exporter: never let it overflow silently.
    if (this.built - this.counting.handed >= this.config.maxQueueSize) {
      this.droppedQueueFull++;
      this.warnDrops();
      return false;
    }
    const s = this.tracer.startSpan(span.name, { kind: SpanKind.CLIENT, startTime: new Date(span.startTime), attributes: span.attributes });
    for (const e of span.events) s.addEvent(e.name, e.attributes, new Date(e.time));
    if (span.status.code === 'error') s.setStatus({ code: SpanStatusCode.ERROR, message: span.status.message });
    s.end(new Date(span.endTime));
    this.built++;
    return true;
  }

  /** Builds and sends the span of one stored exchange, after redaction. */
  exportCapture(reader: CaptureReader, id: string): boolean {
    const x = reader.get(id);
    if (!x || x.state === 'streaming') return false;
    const body = reader.readResponse(id) ?? { bytes: new Uint8Array(0), chunks: [] };
    const stored = reader.readAnalysis?.(id);
    const input = { exchange: x, responseBody: body.bytes, chunks: body.chunks, ...(stored && { stored }) };
    const { capture } = redactCapture(input, { patterns: this.opts.redactPatterns });
    let result: ExchangeAnalysis | undefined;
    if (x.status !== undefined && (stored || capture.responseBody.length <= MAX_ANALYZED_BYTES)) {
      try {
        result = redactedResult(input, capture);
      } catch {
        result = undefined; // the span still goes, without findings
      }
    }
    return this.emit(
      exchangeSpan(capture.exchange, result, capture.chunks, { content: this.config.content, patterns: this.opts.redactPatterns }),
    );
  }

  /**
   * Exports every exchange of `store` as it finishes. Listening only: the span is built on a later turn of the event
   * loop, one exchange per turn. Returns the unsubscribe function.
   */
  attach(store: ObservableStore): () => void {
    return store.onDidChange((e) => {
      const x = e.exchange;
      if (e.kind === 'deleted' || x.state === 'streaming' || this.seen.has(x.id) || this.closed) return;
      this.seen.add(x.id);
      if (this.seen.size > MAX_WAITING * 4) this.seen.delete(this.seen.values().next().value!);
      if (this.waiting.length >= MAX_WAITING) {
        this.droppedQueueFull++;
        this.warnDrops();
        return;
      }
      this.waiting.push(x.id);
      this.drain(store);
    });
  }

  /** Resolves once every exchange queued by `attach` has its span built. */
  whenBuilt(): Promise<void> {
    if (!this.draining) return Promise.resolve();
    return new Promise((r) => this.drained.push(r));
  }

  /** Builds what is waiting, then sends everything queued; resolves when the collector answered (or the timeout). */
  async flush(): Promise<void> {
    await this.whenBuilt();
    await this.provider.forceFlush().catch(() => undefined);
  }

  async shutdown(): Promise<void> {
    await this.whenBuilt();
    this.closed = true;
    await this.provider.shutdown().catch(() => undefined);
  }

  private drain(store: ObservableStore): void {
    if (this.draining) return;
    this.draining = true;
    const step = () => {
      const id = this.waiting.shift();
      if (id === undefined || this.closed) {
        this.draining = false;
        for (const r of this.drained.splice(0)) r();
        return;
      }
      // The store's own analysis of the exchange first, so the span reads it rather than analysing again.
      const analysed = store.idle && !store.readAnalysis?.(id) ? store.idle() : Promise.resolve();
      void analysed.then(() => {
        try {
          this.exportCapture(store, id);
        } catch (e) {
          this.opts.onWarning?.(`OTLP export of ${id} failed: ${oneLine(e)}`);
        }
        setImmediate(step);
      });
    };
    setImmediate(step);
  }

  private warnDrops(): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    const s = this.stats();
    if (s.dropped === this.reportedDrops) return;
    this.lastWarning = now;
    this.reportedDrops = s.dropped;
    const why = s.lastError ? ` (last error: ${s.lastError})` : '';
    this.opts.onWarning?.(
      `OTLP export to ${this.config.url}: ${s.dropped} span${s.dropped === 1 ? '' : 's'} dropped so far${why}; the proxy keeps forwarding`,
    );
  }
}
