/**
 * The capture proxy: a loopback HTTP server the agent points its base URL at. Each request is forwarded untouched
 * to its upstream (./routes.ts), its body streamed as it arrives (./request-body.ts); the response is relayed chunk by
 * chunk (./relay.ts), each chunk appended to the capture store before it is written to the client, so whatever the
 * client saw survives a crash. Recording the request overlaps with the upstream round trip; analysis runs later, off
 * this path. Every failure is answered in the API shape the client speaks (./errors.ts): nothing is left hanging.
 */
import { EventEmitter } from 'node:events';
import { createServer, ServerResponse, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { UserError, type CapturedExchange } from '../model';
import type { CaptureStore, ExchangeAnnotations, ExchangeWriter } from '../capture/store';
import { redactUrlsIn } from '../redact';
import { errorBody, speaksAnthropic, speaksResponses } from './errors';
import { refusal } from './guard';
import { upstreamRequestHeaders } from './headers';
import { requestInfo } from './openrouter';
import { oneLine, relay, seconds, type Outcome } from './relay';
import { requestBody } from './request-body';
import { stagedBody, withLength, type RequestStage, type ResponseStageFactory } from './stage';
import { BadPathError, resolveRoute, type ResolvedRoute, type Upstreams } from './routes';
import { noRouteMessage, statusBody } from './local';
import { agentSessionId } from './session';
import { DEFAULT_UPSTREAM_CONNECTIONS, UpstreamSlots, type SlotWait } from './slots';
import { callUpstream, type UpstreamCall, type UpstreamResponse } from './upstream';
import { agentFromHeaders } from './user-agent';
import { handleUpgrade, type UpgradeHandle } from './websocket';
import { isWebSocketUpgrade } from './headers';

export const DEFAULT_PORT = 8719;

/** Timeouts, ms. */
export interface ProxyTimeouts {
  /** From sending the request to the upstream's response headers (default 10 min: a non-streamed answer comes whole). */
  upstreamHeadersMs?: number;
  /** The longest silence mid-response before the upstream is given up on (default 5 min). */
  idleMs?: number;
  /** For a client to send its request headers (default 60 s). */
  clientHeadersMs?: number;
}

export const DEFAULT_TIMEOUTS: Required<ProxyTimeouts> = { upstreamHeadersMs: 10 * 60_000, idleMs: 5 * 60_000, clientHeadersMs: 60_000 };

export interface ProxyOptions {
  /** 0 picks a free port. Default 8719. */
  port?: number;
  store: CaptureStore;
  upstreams?: Upstreams;
  timeouts?: ProxyTimeouts;
  /** Operational one-liners (listening, upstream failures). */
  log?: (line: string) => void;
  /** Undici dispatcher for upstream calls (tests, custom TLS); default a keep-alive Agent owned by the proxy. */
  dispatcher?: Dispatcher;
  /** Changes a request body before it goes upstream (provider policy); see ./stage.ts. */
  requestStage?: RequestStage;
  /** Transforms a response body on its way to the client (repair mode); see ./stage.ts. */
  responseStage?: ResponseStageFactory;
  /**
   * Exchanges in flight to one upstream (scheme, host, port) at most; more wait for one to end, the wait counted in
   * `upstreamHeadersMs` and recorded on the capture (`queuedMs`). Default 256 (./slots.ts).
   */
  upstreamConnections?: number;
  /**
   * The largest request body recorded in the capture (default 64 MiB, the store's per-body cap); a larger one is
   * forwarded whole and the capture says it was not kept (`requestNotKept`).
   */
  maxRequestBodyBytes?: number;
  /** The most decoded bytes of a compressed response kept for the capture (default 64 MiB, the store's cap). */
  maxDecodedBytes?: number;
}

export interface ProxyEvents {
  /** A finished exchange (complete, incomplete or error), as stored. */
  exchange: [CapturedExchange];
}

export interface ProxyHandle extends EventEmitter<ProxyEvents> {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, aborts exchanges in flight (they are stored as interrupted) and closes upstream connections. */
  close(): Promise<void>;
}

/** The capture store's per-body cap, the default for request bodies recorded and compressed bodies decoded. */
const DEFAULT_MAX_BODY = 64 * 1024 * 1024;
/**
 * The largest response head accepted from an upstream (undici's default, like Node's, is 16 KB: a provider that sends
 * long debug or rate-limit headers got a 502). Bounded: a head is held whole.
 */
export const MAX_RESPONSE_HEADERS = 256 * 1024;

export async function startProxy(opts: ProxyOptions): Promise<ProxyHandle> {
  const port = opts.port ?? DEFAULT_PORT;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...Object.fromEntries(Object.entries(opts.timeouts ?? {}).filter(([, v]) => v !== undefined)) };
  // Timeouts are set per request (below), so a caller's dispatcher gets them too. Undici opens a connection whenever
  // none is free: the slots below bound how many exchanges go to one upstream at once, and count a wait.
  const dispatcher = opts.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connections: null, maxHeaderSize: MAX_RESPONSE_HEADERS });
  const slots = new UpstreamSlots(opts.upstreamConnections ?? DEFAULT_UPSTREAM_CONNECTIONS);
  const maxRequestBody = opts.maxRequestBodyBytes ?? DEFAULT_MAX_BODY;
  const decodeLimits = { maxBytes: opts.maxDecodedBytes ?? DEFAULT_MAX_BODY };
  const inFlight = new Set<Promise<void>>();
  const emitter = new EventEmitter<ProxyEvents>();
  const { store } = opts;
  // Every line logged goes through the URL redaction: an upstream's `?key=` or `user:pass@` never reaches a log.
  const log = opts.log && ((line: string) => opts.log!(redactUrlsIn(line)));
  let stopping = false;

  const server = createServer(
    {
      noDelay: true,
      keepAliveTimeout: 65_000,
      // No limit on a whole request (a long stream is fine), but its headers must come in time.
      requestTimeout: 0,
      headersTimeout: timeouts.clientHeadersMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(timeouts.clientHeadersMs / 4))),
    },
    (req, res) => {
      const p = handle(req, res).catch((e) => {
        log?.(`tokenscope proxy: ${oneLine(e)}`);
        answer(res, false, 502, redactUrlsIn(`Tokenscope failed on this request (${oneLine(e)})`));
      });
      inFlight.add(p);
      p.finally(() => inFlight.delete(p));
    },
  );

  /** Answers with an error of its own, unless a response already started. */
  function answer(res: ServerResponse, anthropic: boolean, status: number, message: string): string {
    const text = errorBody(anthropic, status, message);
    if (!res.headersSent && !res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(text);
    else if (!res.writableEnded) res.destroy();
    return text;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const path = req.url ?? '/';
    const refused = refusal(req.headers);
    let route: ResolvedRoute | undefined;
    let badPath: string | undefined;
    try {
      route = resolveRoute(path, opts.upstreams);
    } catch (e) {
      if (!(e instanceof BadPathError)) throw e;
      badPath = e.message;
    }
    const anthropic = speaksAnthropic(route?.route ?? /^\/([^/?#]*)/.exec(path)?.[1] ?? '', path, req.headers);
    if (refused || badPath || !route) {
      req.resume();
      // A path outside every route is answered here, never forwarded or captured (./local.ts).
      const status = refused || badPath ? undefined : statusBody(req.method, path, opts.upstreams);
      if (status !== undefined) {
        if (!res.headersSent && !res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(status);
        return;
      }
      const [code, msg] = refused
        ? [403, `Tokenscope refused the request: ${refused}`]
        : badPath
          ? [400, `Tokenscope cannot forward this request: ${badPath}`]
          : [404, noRouteMessage(path, opts.upstreams)];
      answer(res, anthropic, code, msg);
      return;
    }

    let gone: 'client' | 'stopping' | undefined;
    let call: UpstreamCall | undefined;
    let waiting: SlotWait | undefined;
    const goneError = () => new Error(gone === 'stopping' ? 'Tokenscope stopped' : 'client closed the connection');
    res.once('close', () => {
      if (res.writableFinished) return;
      gone = stopping ? 'stopping' : 'client';
      call?.abort(goneError());
      waiting?.cancel();
    });
    const body = requestBody(req, maxRequestBody);
    // Without a request stage nothing waits here (not even a turn of the microtask queue).
    const staged = opts.requestStage
      ? await stagedBody(
          opts.requestStage,
          { route: route.route, upstreamUrl: route.upstreamUrl, method: req.method ?? 'GET', path },
          body.stream as AsyncIterable<Buffer> | Buffer | undefined,
        )
      : undefined;
    // A connection of its own, or a wait for one (counted in the upstream timeout); on the usual path a counter.
    let queuedMs: number | undefined;
    if (!slots.take(route.origin)) {
      const waitedFrom = performance.now();
      // A client already gone (while a request stage ran) does not wait.
      waiting = gone ? undefined : slots.wait(route.origin, timeouts.upstreamHeadersMs);
      const got = (await waiting?.got) ?? false;
      waiting = undefined;
      queuedMs = Math.max(1, Math.round(performance.now() - waitedFrom));
      if (!got) {
        const writer = begin(undefined);
        writer.annotate({ queuedMs, ...notKept(undefined, 'it never went upstream') });
        if (gone) {
          const error =
            gone === 'stopping'
              ? 'interrupted: Tokenscope stopped while the request waited for a connection to the upstream'
              : `the client closed the connection while the request waited ${queuedMs} ms for a connection to the upstream`;
          await finish(writer, { incomplete: true, error });
          return;
        }
        const msg = `no connection to the upstream ${route.shownBase} came free within ${seconds(timeouts.upstreamHeadersMs)}: all ${slots.max} were in use by other exchanges (the proxy's per-upstream connection limit)`;
        log?.(`tokenscope proxy: ${msg}`);
        const text = answer(res, anthropic, 504, msg);
        writer.responseStarted(504, { 'content-type': 'application/json' });
        writer.chunk(Buffer.from(text));
        await finish(writer, { error: msg });
        return;
      }
    }
    // The upstream call starts first; recording (redaction, parsing) overlaps with its round trip.
    call = callUpstream(
      dispatcher,
      {
        origin: route.origin,
        path: route.upstreamPath,
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: staged?.annotate ? withLength(upstreamRequestHeaders(req), staged.body.length) : upstreamRequestHeaders(req),
        body: staged ? staged.body : body.stream,
        headersTimeout: queuedMs === undefined ? timeouts.upstreamHeadersMs : Math.max(1, timeouts.upstreamHeadersMs - queuedMs),
        bodyTimeout: timeouts.idleMs,
      },
      () => slots.release(route.origin),
    );
    // A client that left while a request stage ran (or while it waited): the call is given up at once.
    if (gone) call.abort(goneError());
    const pending = call.response;
    let failed = false;
    const settled = pending.then(
      () => undefined,
      () => void (failed = true),
    );
    // The capture begins once the client has sent its body, or the upstream answered first.
    const recordedBody = await Promise.race([body.done, settled.then(() => body.now())]);
    // undici writes the request on a later tick: recording waits a turn of the loop so it never delays the request.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // The body goes to the store as bytes: decoding, masking and writing it happen there, in slices. An upstream that
    // failed before reading it (connection refused) leaves it as the client sent it: kept when it is all here.
    const recorded = recordedBody ?? (failed ? body.unread() : undefined);
    const writer = begin(recorded);
    if (queuedMs !== undefined) writer.annotate({ queuedMs });
    if (staged?.annotate) writer.annotate(staged.annotate);
    const info = requestInfo(recorded);
    if (info.model || info.pin) writer.annotate({ requestModel: info.model, ...(info.pin && { pin: { requested: info.pin } }) });
    // A body the capture does not hold is named, with its size and why, when the exchange ends (its size is known then).
    const finishExchange = (o: Outcome) => (
      writer.annotate(
        notKept(
          recorded,
          failed
            ? 'the upstream call failed before Tokenscope had read all of it'
            : 'the upstream answered before the client had sent all of it',
        ),
      ),
      finish(writer, o)
    );

    let upstream: UpstreamResponse;
    try {
      upstream = await pending;
    } catch (e) {
      if (gone) {
        const error =
          gone === 'stopping'
            ? 'interrupted: Tokenscope stopped before the upstream answered'
            : 'the client closed the connection before the upstream answered';
        await finishExchange({ incomplete: true, error });
        return;
      }
      const code = (e as { code?: string }).code;
      const timedOut = code === 'UND_ERR_HEADERS_TIMEOUT';
      const status = timedOut ? 504 : 502;
      const waited = queuedMs === undefined ? '' : ` (${queuedMs} ms of it waiting for a free connection)`;
      // The upstream is named by its redacted base URL only: a `?key=` or `user:pass@` in it never reaches the
      // client, the capture, its exports or the log.
      const msg = timedOut
        ? `the upstream ${route.shownBase} sent no response headers within ${seconds(timeouts.upstreamHeadersMs)}${waited}`
        : code === 'UND_ERR_HEADERS_OVERFLOW'
          ? `the upstream ${route.shownBase} sent response headers over ${MAX_RESPONSE_HEADERS / 1024} KB, more than Tokenscope accepts`
          : redactUrlsIn(`Tokenscope could not reach the upstream ${route.shownBase} (${oneLine(e)})`);
      log?.(`tokenscope proxy: ${msg}`);
      const text = answer(res, anthropic, status, msg);
      writer.responseStarted(status, { 'content-type': 'application/json' });
      writer.chunk(Buffer.from(text));
      await finishExchange({ error: msg });
      return;
    }
    const outcome = await relay({
      up: upstream,
      res,
      writer,
      pin: info.pin,
      gone: () => gone,
      shape: { anthropic, responses: speaksResponses(path) },
      idleTimeoutMs: timeouts.idleMs,
      stage: opts.responseStage?.({
        route: route.route,
        method: req.method ?? 'GET',
        path,
        requestBody: recorded?.toString('utf8'),
        status: upstream.statusCode,
        headers: upstream.headers,
        writer,
      }),
      decodeLimits,
    });
    await finishExchange(outcome);

    /** The capture of this exchange, begun with the request body as recorded. */
    function begin(recordedBody: Buffer | undefined): ExchangeWriter {
      const agent = agentFromHeaders(req.headers);
      return store.begin({
        route: route!.route,
        upstreamUrl: route!.upstreamUrl,
        method: req.method ?? 'GET',
        path,
        requestHeaders: req.headers,
        requestBody: recordedBody,
        agent,
        sessionId: agentSessionId(req.headers, agent),
        startedAt,
      });
    }

    /** What the capture says of a request body it does not hold (nothing when it holds it, or there was none). */
    function notKept(recordedBody: Buffer | undefined, otherwise: string): ExchangeAnnotations {
      if (recordedBody !== undefined) return {};
      const declared = Number(req.headers['content-length']);
      const bytes = Math.max(body.size, Number.isFinite(declared) ? declared : 0);
      if (bytes === 0) return {};
      const why = body.overCap
        ? `it is over the ${Math.round((maxRequestBody / 1024 / 1024) * 10) / 10} MB Tokenscope records of a request body`
        : otherwise;
      return { requestNotKept: { bytes, why } };
    }
  }

  async function finish(writer: ExchangeWriter, o: Outcome): Promise<void> {
    const x = await writer.finish(o);
    emitter.emit('exchange', x);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE')
        reject(new UserError(`port ${port} on 127.0.0.1 is already in use (another Tokenscope?); choose another with --port`));
      else if (e.code === 'EACCES') reject(new UserError(`not allowed to listen on port ${port}; choose another with --port`));
      else reject(new UserError(`cannot listen on 127.0.0.1:${port}: ${e.message}`));
    });
    server.listen(port, '127.0.0.1', () => resolve());
  });
  server.on('error', (e) => log?.(`tokenscope proxy: ${oneLine(e)}`));
  // A WebSocket upgrade (the Responses API's WebSocket mode) is passed through and captured (./websocket.ts). Any
  // other upgrade (`h2c`) is answered as the HTTP request it also is, with no switch of protocol.
  const upgrades = new Set<UpgradeHandle>();
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (!isWebSocketUpgrade(req.headers)) return plainRequest(req, socket, head);
    const ws = handleUpgrade(
      {
        store,
        upstreams: opts.upstreams,
        upstreamHeadersMs: timeouts.upstreamHeadersMs,
        decodeLimits,
        log,
        stopping: () => stopping,
        finished: (x) => emitter.emit('exchange', x),
        responseStage: opts.responseStage,
      },
      req,
      socket,
      head,
    );
    upgrades.add(ws);
    const p = ws.done.finally(() => upgrades.delete(ws));
    inFlight.add(p);
    p.finally(() => inFlight.delete(p));
  });

  /** An upgrade request other than WebSocket: handled as a plain request (its body, if any, was read as `head`). */
  function plainRequest(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => undefined);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (req.headers['transfer-encoding'] !== undefined || !(declared >= 0) || head.length < declared) {
      const text = errorBody(
        false,
        400,
        'Tokenscope forwards an Upgrade request other than WebSocket only without a streamed body; send it without the Upgrade header',
      );
      socket.end(
        `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
      );
      return;
    }
    if (declared > 0) req.push(head.subarray(0, declared));
    req.push(null);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => (res.detachSocket(socket), socket.end()));
    res.once('close', () => socket.destroy());
    server.emit('request', req, res);
  }
  const actual = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${actual}`;
  log?.(`tokenscope proxy listening on ${url}`);

  let closing: Promise<void> | undefined;
  return Object.assign(emitter, {
    url,
    port: actual,
    close(): Promise<void> {
      closing ??= (async () => {
        stopping = true;
        const stopped = new Promise<void>((r) => server.close(() => r()));
        server.closeAllConnections();
        for (const ws of upgrades) ws.stop();
        await Promise.allSettled([...inFlight]);
        await stopped;
        if (!opts.dispatcher) await dispatcher.destroy();
      })();
      return closing;
    },
  });
}
