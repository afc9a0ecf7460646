/**
 * Optional stages on the forwarding path, for features that change what crosses the proxy (repair mode, provider
 * policy). Without them the proxy is byte-transparent; with them, each stage decides per exchange whether it acts
 * and returns undefined when it does not, so other exchanges keep the untouched path.
 */
import type { ExchangeWriter } from '../capture/store';
import type { ExchangeAnnotations } from '../capture/store';

export interface ResponseStageInit {
  route: string;
  method: string;
  path: string;
  /** The request body as recorded (undefined when there was none or it was too large to record). */
  requestBody?: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  writer: ExchangeWriter;
}

/** Transforms one response body on its way to the client. */
export interface ResponseStage {
  /** The response headers to send the client (a stage that may change the body's length drops `content-length`). */
  headers(h: Record<string, string | string[]>): Record<string, string | string[]>;
  /** The bytes to send for one upstream read (possibly none). */
  push(chunk: Buffer): Buffer;
  /** The rest, at the end of the upstream body; the stage records what it did on the writer here. */
  end(): Buffer;
  /** The body ended early (the client closed, the upstream broke): the stage records what it delivered so far. */
  abort?(): void;
}

export type ResponseStageFactory = ((init: ResponseStageInit) => ResponseStage | undefined) & {
  /**
   * Whether the factory may act on responses of a WebSocket connection on this route and path (asked once, at the
   * upgrade). Only then are the upstream's messages decoded on the forwarding path and handed to the stage of each
   * response as the SSE events the same response carries over HTTP (./ws-stage.ts); absent or false, the connection
   * stays a raw pipe.
   */
  webSocket?(route: string, path: string): boolean;
};

export interface RequestStageInit {
  route: string;
  /** The upstream URL the request goes to. */
  upstreamUrl: string;
  method: string;
  path: string;
}

/**
 * Changes request bodies before they go upstream (provider policy). `wants` is asked first, without the body: only
 * then is the body read whole before the upstream call starts (it otherwise streams through as it arrives).
 */
export interface RequestStage {
  wants(init: RequestStageInit): boolean;
  /** The changed body and what to record about the change, or undefined to send the body as it came. */
  apply(init: RequestStageInit, body: Buffer): { body: Buffer; annotate: ExchangeAnnotations } | undefined;
}

/**
 * The body to send when a request stage wants this request: read whole, then changed or not (`annotate` set when
 * changed). Undefined when no stage wants it: the body then streams through untouched.
 */
export async function stagedBody(
  stage: RequestStage | undefined,
  init: RequestStageInit,
  stream: AsyncIterable<Buffer> | Buffer | undefined,
): Promise<{ body: Buffer; annotate?: ExchangeAnnotations } | undefined> {
  if (!stage || stream === undefined || !stage.wants(init)) return undefined;
  let bytes: Buffer;
  if (Buffer.isBuffer(stream)) bytes = stream;
  else {
    const parts: Buffer[] = [];
    for await (const c of stream) parts.push(c);
    bytes = Buffer.concat(parts);
  }
  return (bytes.length > 0 && stage.apply(init, bytes)) || { body: bytes };
}

/** Raw request headers with `content-length` set to a changed body's length. */
export function withLength(headers: string[], length: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2)
    if (!/^(content-length|transfer-encoding)$/i.test(headers[i])) out.push(headers[i], headers[i + 1]);
  return [...out, 'content-length', String(length)];
}
