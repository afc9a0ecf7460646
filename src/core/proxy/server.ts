/**
 * The capture proxy: a loopback HTTP server the agent points its base URL at. Each request is forwarded untouched
 * to its upstream (./routes.ts) and every upstream chunk is written to the client in the tick it arrives, right
 * after a synchronous append to the capture store, so whatever the client saw survives a crash. Recording the
 * request (redaction, disk, parsing) overlaps with the upstream round trip; analysis runs later, off this path.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { UserError, type CapturedExchange } from '../model';
import type { CaptureStore, ExchangeWriter } from '../capture/store';
import { decodingTee } from './decode';
import { errorBody, speaksAnthropic } from './errors';
import { refusal } from './guard';
import { pinHonoured, requestInfo, servedProvider } from './openrouter';
import { resolveRoute, type Upstreams } from './routes';
import { agentFromHeaders } from './user-agent';

export const DEFAULT_PORT = 8719;

export interface ProxyOptions {
  /** 0 picks a free port. Default 8719. */
  port?: number;
  store: CaptureStore;
  upstreams?: Upstreams;
  /** Operational one-liners (listening, upstream failures). */
  log?: (line: string) => void;
  /** Undici dispatcher for upstream calls (tests, custom TLS); default a keep-alive Agent owned by the proxy. */
  dispatcher?: Dispatcher;
}

export interface ProxyEvents {
  /** A finished exchange (complete, incomplete or error), as stored. */
  exchange: [CapturedExchange];
}

export interface ProxyHandle extends EventEmitter<ProxyEvents> {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, aborts exchanges in flight (they are stored as incomplete) and closes upstream connections. */
  close(): Promise<void>;
}

/** Request bodies above this are forwarded but not recorded (redacting and storing them would stall the proxy). */
const MAX_RECORDED_REQUEST = 16 * 1024 * 1024;
/** How much of the decoded response head is searched for the served provider. */
const HEAD_BYTES = 64 * 1024;

/** Hop-by-hop headers (RFC 9110 §7.6.1) never cross a proxy; `host` and `expect` are the proxy's own business. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate', 'proxy-authorization']);

function hopByHop(connection: string | string[] | undefined): Set<string> {
  const extra = (Array.isArray(connection) ? connection.join(',') : (connection ?? '')).split(',').map((s) => s.trim().toLowerCase());
  return new Set([...HOP_BY_HOP, ...extra.filter(Boolean)]);
}

/** Request headers for the upstream, from the raw list so order and repeated headers survive. */
function upstreamRequestHeaders(req: IncomingMessage): string[] {
  const drop = hopByHop(req.headers.connection);
  drop.add('host');
  drop.add('expect');
  const out: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (!drop.has(req.rawHeaders[i].toLowerCase())) out.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  return out;
}

function clientResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const drop = hopByHop(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !drop.has(k)) out[k] = v;
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  // Without Content-Length or Transfer-Encoding an HTTP/1.1 request has no body (RFC 9112 §6.3): no need to wait for its end.
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
    req.resume();
    return Promise.resolve(Buffer.alloc(0));
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.once('end', () => resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts)));
    req.once('error', reject);
  });
}

function oneLine(e: unknown): string {
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err?.cause?.code ?? err?.code;
  const msg = (err?.cause?.message ?? err?.message ?? String(e)).split('\n')[0];
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

export async function startProxy(opts: ProxyOptions): Promise<ProxyHandle> {
  const port = opts.port ?? DEFAULT_PORT;
  const dispatcher =
    opts.dispatcher ??
    new Agent({ keepAliveTimeout: 30_000, headersTimeout: 15 * 60_000, bodyTimeout: 15 * 60_000, connections: 64 });
  const inFlight = new Set<Promise<void>>();
  const emitter = new EventEmitter<ProxyEvents>();
  const { store, log } = opts;

  const server = createServer({ noDelay: true, keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    const p = handle(req, res).catch((e) => log?.(`tokenscope proxy: ${oneLine(e)}`));
    inFlight.add(p);
    p.finally(() => inFlight.delete(p));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const path = req.url ?? '/';
    const refused = refusal(req.headers);
    const route = resolveRoute(path, opts.upstreams);
    const anthropic = speaksAnthropic(route?.route ?? '', path, req.headers);
    if (refused || !route) {
      req.resume();
      const status = refused ? 403 : 404;
      const msg = refused ? `Tokenscope refused the request: ${refused}` : `Tokenscope has no upstream for ${path.split('?')[0]}`;
      res.writeHead(status, { 'content-type': 'application/json' }).end(errorBody(anthropic, status, msg));
      return;
    }

    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort(new Error('client closed the connection'));
    });
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return; // client went away while sending: nothing reached the upstream
    }
    const hasBody = body.length > 0 || (req.method !== 'GET' && req.method !== 'HEAD');
    // The upstream call starts first; recording (redaction, parsing) overlaps with its round trip.
    const pending = dispatcher.request({
      origin: route.origin,
      path: route.upstreamPath,
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: upstreamRequestHeaders(req),
      body: hasBody ? body : undefined,
      signal: abort.signal,
    });
    pending.catch(() => undefined); // handled below, after recording
    // undici writes the request on a later tick: recording waits a turn of the loop so it never delays the request.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const recorded = body.length > 0 && body.length <= MAX_RECORDED_REQUEST ? body.toString('utf8') : undefined;
    const writer = store.begin({
      route: route.route,
      upstreamUrl: route.upstreamUrl,
      method: req.method ?? 'GET',
      path,
      requestHeaders: req.headers,
      requestBody: recorded,
      agent: agentFromHeaders(req.headers),
      startedAt,
    });
    const info = requestInfo(recorded);
    if (info.model || info.pin) writer.annotate({ requestModel: info.model, ...(info.pin && { pin: { requested: info.pin } }) });

    let upstream: Dispatcher.ResponseData;
    try {
      upstream = await pending;
    } catch (e) {
      if (abort.signal.aborted) {
        await finish(writer, { incomplete: true, error: 'the client closed the connection before the upstream answered' });
        return;
      }
      const msg = `Tokenscope could not reach the upstream ${route.base} (${oneLine(e)})`;
      log?.(`tokenscope proxy: ${msg}`);
      const text = errorBody(anthropic, 502, msg);
      res.writeHead(502, { 'content-type': 'application/json' }).end(text);
      writer.responseStarted(502, { 'content-type': 'application/json' });
      writer.chunk(Buffer.from(text));
      await finish(writer, { error: msg });
      return;
    }
    await relay(upstream, res, writer, info.pin, abort.signal);
  }

  /** Streams the upstream response to the client chunk by chunk, teeing a decoded copy into the capture. */
  async function relay(up: Dispatcher.ResponseData, res: ServerResponse, writer: ExchangeWriter, pin: string[] | undefined, aborted: AbortSignal): Promise<void> {
    const headers = up.headers as Record<string, string | string[] | undefined>;
    try {
      res.writeHead(up.statusCode, clientResponseHeaders(headers));
      // The head goes out with the first chunk when that is already here (one write, one wake-up for the client),
      // else on the next turn of the loop: a slow first token never holds the status back.
      setImmediate(() => {
        if (!res.headersSent && !res.destroyed) res.flushHeaders();
      });
    } catch {
      up.body.destroy();
      await finish(writer, { incomplete: true, error: 'the client closed the connection before the response started' });
      return;
    }
    writer.responseStarted(up.statusCode, headers);
    const genId = headers['x-generation-id'];
    if (typeof genId === 'string') writer.annotate({ generationId: genId });

    let head = '';
    const tee = decodingTee(typeof headers['content-encoding'] === 'string' ? headers['content-encoding'] : undefined, (bytes) => {
      if (head.length < HEAD_BYTES) head += Buffer.from(bytes).toString('utf8');
      writer.chunk(bytes);
    });
    const body = up.body;
    // Chunks that arrive together (one read from the upstream socket) are forwarded together, at the end of the
    // current tick: captured first in one synchronous disk write, so whatever the client has seen is on disk if we
    // die, then written to the client (whose socket sends them in one write anyway).
    let batch: Buffer[] = [];
    const forward = () => {
      if (batch.length === 0) return;
      const chunks = batch;
      batch = [];
      writer.cork();
      for (const c of chunks) tee.write(c);
      writer.uncork();
      let ok = true;
      for (const c of chunks) ok = res.write(c);
      if (!ok) body.pause();
    };
    const outcome = await new Promise<{ error?: string; incomplete?: boolean }>((resolve) => {
      let received = 0;
      res.on('drain', () => body.resume());
      body.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (batch.push(chunk) === 1) process.nextTick(forward);
      });
      body.once('end', () => {
        forward();
        res.end();
        resolve({});
      });
      body.once('error', (e) => {
        forward();
        // Give the client the same cut the upstream gave us: no clean end of the chunked body.
        res.destroy();
        if (aborted.aborted) resolve({ incomplete: true, error: `the client closed the connection after ${received} bytes` });
        else resolve({ incomplete: true, error: `the upstream connection broke after ${received} bytes (${oneLine(e)})` });
      });
    });
    const decodeError = await tee.end();
    const served = servedProvider(head);
    if (served) writer.annotate({ servedProvider: served, ...(pin && { pin: { requested: pin, honoured: pinHonoured(pin, served) } }) });
    await finish(writer, { ...outcome, error: [outcome.error, decodeError].filter(Boolean).join('; ') || undefined });
  }

  async function finish(writer: ExchangeWriter, o: { error?: string; incomplete?: boolean }): Promise<void> {
    const x = await writer.finish(o);
    emitter.emit('exchange', x);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE') reject(new UserError(`port ${port} on 127.0.0.1 is already in use (another Tokenscope?); choose another with --port`));
      else if (e.code === 'EACCES') reject(new UserError(`not allowed to listen on port ${port}; choose another with --port`));
      else reject(new UserError(`cannot listen on 127.0.0.1:${port}: ${e.message}`));
    });
    server.listen(port, '127.0.0.1', () => resolve());
  });
  server.on('error', (e) => log?.(`tokenscope proxy: ${oneLine(e)}`));
  const actual = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${actual}`;
  log?.(`tokenscope proxy listening on ${url}`);

  let closing: Promise<void> | undefined;
  return Object.assign(emitter, {
    url,
    port: actual,
    close(): Promise<void> {
      closing ??= (async () => {
        const stopped = new Promise<void>((r) => server.close(() => r()));
        server.closeAllConnections();
        await Promise.allSettled([...inFlight]);
        await stopped;
        if (!opts.dispatcher) await dispatcher.destroy();
      })();
      return closing;
    },
  });
}
