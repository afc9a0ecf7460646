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
}

export type ResponseStageFactory = (init: ResponseStageInit) => ResponseStage | undefined;

export interface RequestStageInit {
  route: string;
  method: string;
  path: string;
  body: Buffer;
}

/** A changed request body, and what to record about the change on the exchange. */
export type RequestStage = (init: RequestStageInit) => { body: Buffer; annotate: ExchangeAnnotations } | undefined;
