/**
 * WebSocket pass-through (an OpenAI Responses client in WebSocket mode, such as Codex, on `/v1/responses`). The
 * upgrade request gets what an HTTP request gets: the loopback Host / Origin guard, the same route to its upstream
 * and the same headers (the agent's key forwarded, never recorded). The upgrade is opened to the upstream (`ws://` for
 * an http upstream, `wss://` for https), the upstream's 101 head goes back to the client as it came, and from then on
 * the two sockets are piped to each other: every frame passes byte for byte in both directions, nothing re-framed.
 * In repair mode, on a connection repair may act on, only the upstream's direction is read and re-framed instead
 * (./ws-stage.ts); the client's stays a raw pipe.
 *
 * The capture reads a copy of each direction off the forwarding path (./ws-frames.ts decodes the frames on a later
 * turn of the loop) and records the messages as exchanges (./ws-capture.ts: one per `response.create`). An upstream
 * that refuses the upgrade has its status and body relayed and captured like an HTTP error; one that cannot be reached
 * or sends no head in time gets a 502 / 504, as for HTTP. When one side drops, the other is closed and the open
 * exchange is finished, marked incomplete if its response was cut.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, STATUS_CODES, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import type { CaptureStore, ExchangeWriter } from '../capture/store';
import type { CapturedExchange } from '../model';
import { redactUrlsIn } from '../redact';
import { decodingTee, type TeeLimits } from './decode';
import { errorBody, speaksAnthropic } from './errors';
import { refusal } from './guard';
import { clientResponseHeaders, headerText, upstreamUpgradeHeaders } from './headers';
import { noRouteMessage } from './local';
import { requestInfo } from './openrouter';
import { oneLine, seconds } from './relay';
import { BadPathError, resolveRoute, type ResolvedRoute, type Upstreams } from './routes';
import { agentSessionId } from './session';
import { agentFromHeaders } from './user-agent';
import { WsCapture } from './ws-capture';
import { serverFrame, WsFrameReader, type WsMessage, type WsProtocolError } from './ws-frames';
import { WS_STAGE_HEADERS, WsServerRestage } from './ws-stage';
import type { ResponseStageFactory } from './stage';

export interface UpgradeContext {
  store: CaptureStore;
  upstreams?: Upstreams;
  /** Time for the upstream's response head (the same as for HTTP). */
  upstreamHeadersMs: number;
  decodeLimits: TeeLimits;
  log?: (line: string) => void;
  /** True once Tokenscope is shutting down. */
  stopping(): boolean;
  /** A finished exchange, as stored. */
  finished(x: CapturedExchange): void;
  /** Rewrites responses on their way to the client (repair mode), on connections it says it may act on (./ws-stage.ts). */
  responseStage?: ResponseStageFactory;
}

/** One WebSocket connection through the proxy, from the upgrade request to both sockets closed. */
export interface UpgradeHandle {
  /** Settles once the connection is over and its capture finished. */
  done: Promise<void>;
  /** Ends the connection now (Tokenscope stops). */
  stop(): void;
}

/** The largest message the capture holds whole (the store's per-body cap): a longer one passes, its start recorded. */
const MAX_MESSAGE = 64 * 1024 * 1024;

export function handleUpgrade(ctx: UpgradeContext, req: IncomingMessage, client: Duplex, head: Buffer): UpgradeHandle {
  const startedAt = Date.now();
  const path = req.url ?? '/';
  let stop: () => void = () => client.destroy();
  client.on('error', () => undefined);
  const done = (async () => {
    const refused = refusal(req.headers);
    let route: ResolvedRoute | undefined;
    let badPath: string | undefined;
    try {
      route = resolveRoute(path, ctx.upstreams);
    } catch (e) {
      if (!(e instanceof BadPathError)) throw e;
      badPath = e.message;
    }
    const anthropic = speaksAnthropic(route?.route ?? '', path, req.headers);
    if (refused || badPath || !route) {
      const status = refused ? 403 : badPath ? 400 : 404;
      const msg = refused ? `Tokenscope refused this request: ${refused}` : (badPath ?? noRouteMessage(path, ctx.upstreams));
      answer(client, status, { 'content-type': 'application/json' }, Buffer.from(errorBody(anthropic, status, msg)));
      return;
    }
    const r = route;
    const begin = (requestBody: Buffer | undefined, index?: number): ExchangeWriter => {
      const agent = agentFromHeaders(req.headers);
      const writer = ctx.store.begin({
        route: r.route,
        upstreamUrl: r.upstreamUrl,
        method: req.method ?? 'GET',
        path,
        requestHeaders: req.headers,
        requestBody,
        agent,
        sessionId: agentSessionId(req.headers, agent),
        // A response on the connection starts with its message; an HTTP answer with the upgrade request.
        startedAt: index === undefined ? startedAt : Date.now(),
      });
      return writer;
    };
    const finish = async (p: Promise<CapturedExchange>) => ctx.finished(await p);

    // The upgrade to the upstream: the request's headers, Host the upstream's, no compression offered. As for HTTP, a
    // `user:pass@` in the base URL is not sent (the origin has none); a `?key=` in it is part of the path.
    const target = new URL(r.origin + r.upstreamPath);
    const headers = ['Host', target.host, ...upstreamUpgradeHeaders(req)];
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const up = send(target, { method: req.method ?? 'GET', headers, agent: false });
    const clientGone = () => up.destroy(Object.assign(new Error('the client closed the connection'), { code: 'TOKENSCOPE_CLIENT_GONE' }));
    const answered = new Promise<
      | { kind: 'upgrade'; res: IncomingMessage; socket: Duplex; head: Buffer }
      | { kind: 'response'; res: IncomingMessage }
      | { kind: 'error'; error: Error & { code?: string } }
    >((resolve) => {
      const timer = setTimeout(() => {
        const e = Object.assign(new Error('no response head in time'), { code: 'TOKENSCOPE_HEADERS_TIMEOUT' });
        up.destroy(e);
      }, ctx.upstreamHeadersMs);
      const settle = (v: Parameters<typeof resolve>[0]) => (clearTimeout(timer), resolve(v));
      up.once('upgrade', (res, socket, upHead) => settle({ kind: 'upgrade', res, socket, head: upHead }));
      up.once('response', (res) => settle({ kind: 'response', res }));
      up.once('error', (error) => settle({ kind: 'error', error }));
      stop = () => (client.destroy(), up.destroy(Object.assign(new Error('Tokenscope stopped'), { code: 'TOKENSCOPE_STOPPED' })));
      client.once('close', clientGone);
    });
    // Bytes the client sent after its head go up after the upstream's 101 (a client waits for it; this is only bytes
    // that came early).
    up.end();
    const got = await answered;
    client.removeListener('close', clientGone);

    if (got.kind === 'error') {
      const code = got.error.code;
      if (code === 'TOKENSCOPE_CLIENT_GONE' || code === 'TOKENSCOPE_STOPPED' || client.destroyed) {
        const writer = begin(undefined);
        const error =
          code === 'TOKENSCOPE_STOPPED' || ctx.stopping()
            ? 'interrupted: Tokenscope stopped before the upstream answered'
            : 'the client closed the connection before the upstream answered';
        await finish(writer.finish({ incomplete: true, error }));
        return;
      }
      const timedOut = code === 'TOKENSCOPE_HEADERS_TIMEOUT';
      const status = timedOut ? 504 : 502;
      const msg = timedOut
        ? `the upstream ${r.shownBase} sent no response headers within ${seconds(ctx.upstreamHeadersMs)}`
        : redactUrlsIn(`Tokenscope could not reach the upstream ${r.shownBase} (${oneLine(got.error)})`);
      ctx.log?.(`tokenscope proxy: ${msg}`);
      const text = Buffer.from(errorBody(anthropic, status, msg));
      const writer = begin(undefined);
      writer.responseStarted(status, { 'content-type': 'application/json' });
      writer.chunk(text);
      answer(client, status, { 'content-type': 'application/json' }, text);
      await finish(writer.finish({ error: msg }));
      return;
    }

    if (got.kind === 'response') {
      // The upstream refused the upgrade: its answer is relayed as it came and captured as an HTTP exchange.
      await refusedUpgrade(got.res);
      return;
    }

    await piped(got.res, got.socket, got.head);

    async function refusedUpgrade(res: IncomingMessage): Promise<void> {
      const writer = begin(undefined);
      const status = res.statusCode ?? 502;
      writer.responseStarted(status, res.headers);
      const tee = decodingTee(headerText(res.headers['content-encoding']), (bytes) => writer.chunk(bytes), ctx.decodeLimits);
      const shown = clientResponseHeaders(res.headers);
      delete shown['content-length'];
      client.write(headText(status, res.statusMessage, { ...shown, connection: 'close' }));
      let cut: string | undefined;
      await new Promise<void>((resolve) => {
        res.on('data', (c: Buffer) => {
          tee.write(c);
          if (!client.write(c)) res.pause();
        });
        client.on('drain', () => res.resume());
        res.once('end', () => resolve());
        res.once('error', (e) => ((cut = `the upstream connection broke while it refused the upgrade (${oneLine(e)})`), resolve()));
        res.once('aborted', () => ((cut ??= 'the upstream connection broke while it refused the upgrade'), resolve()));
        client.once('close', () => ((cut ??= 'the client closed the connection before the answer ended'), resolve()));
      });
      if (cut) client.destroy();
      else client.end();
      res.destroy();
      const decoded = await tee.end();
      if (decoded.notAnalysed) writer.annotate({ notAnalysed: decoded.notAnalysed });
      const error = [cut, decoded.error].filter(Boolean).join('; ') || undefined;
      await finish(writer.finish(cut ? { incomplete: true, error } : { error }));
    }

    async function piped(res: IncomingMessage, upstream: Duplex, upHead: Buffer): Promise<void> {
      upstream.on('error', () => undefined);
      if (client.destroyed) {
        upstream.destroy();
        return;
      }
      // The connection's name in its exchanges: the time it opened and a random tail.
      const connection = `${startedAt.toString(36)}-${randomBytes(4).toString('hex')}`;
      // The connection is over once every exchange it opened is finished (Tokenscope's close waits for that).
      const finishing: Promise<void>[] = [];
      // Repair mode reads the upstream's direction on the forwarding path (./ws-stage.ts); otherwise both are piped raw.
      // A compressed connection (never negotiated: the offer is stripped) could not be re-framed message by message.
      const factory = ctx.responseStage;
      const restaging = factory?.webSocket?.(r.route, path) === true && res.headers['sec-websocket-extensions'] === undefined;
      let restage: WsServerRestage | undefined;
      const capture = new WsCapture({
        begin: (index, body) => {
          const writer = begin(body, index);
          writer.annotate({ websocket: { connection, response: index } });
          const info = requestInfo(body);
          if (info.model) writer.annotate({ requestModel: info.model });
          if (restage && factory && body) {
            // The stage is asked as for the same response requested over HTTP: a POST to the path, streamed.
            const stage = factory({
              route: r.route,
              method: 'POST',
              path,
              requestBody: body.toString('utf8'),
              status: 200,
              headers: { ...WS_STAGE_HEADERS },
              writer,
            });
            if (stage) restage.attach(writer, stage);
          }
          return writer;
        },
        respond: (writer) => writer.responseStarted(101, res.headers),
        finished: (p) => void finishing.push(finish(p as Promise<CapturedExchange>)),
        ending: (writer, ended) => restage?.ending(writer, ended),
      });
      if (restaging) restage = new WsServerRestage(capture, MAX_MESSAGE);
      // The decoders read copies of both directions a turn of the loop later: the forwarding path only forwards.
      const fromClient = new WsFrameReader(MAX_MESSAGE);
      const fromServer = new WsFrameReader(MAX_MESSAGE);
      const queue: { side: 'client' | 'server'; bytes: Buffer }[] = [];
      let scheduled = false;
      const drain = () => {
        scheduled = false;
        for (const { side, bytes } of queue.splice(0)) {
          for (const m of (side === 'client' ? fromClient : fromServer).push(bytes)) record(side, m);
        }
      };
      const tee = (side: 'client' | 'server', bytes: Buffer) => {
        queue.push({ side, bytes });
        if (!scheduled) (scheduled = true), setImmediate(drain);
      };
      const record = (side: 'client' | 'server', m: WsMessage | WsProtocolError) => {
        if ('error' in m) capture.unreadable(side, m.error);
        else if (side === 'client') capture.fromClient(m);
        else capture.fromServer(m);
      };

      // The upstream's 101 head as it came, then whatever followed it in the same read.
      const sockets = [client, upstream] as const;
      for (const s of sockets)
        (s as { setNoDelay?: (b: boolean) => void }).setNoDelay?.(true), (s as { setTimeout?: (ms: number) => void }).setTimeout?.(0);
      const head101 = headText(101, res.statusMessage || 'Switching Protocols', res.rawHeaders);
      if (!restage) {
        client.write(Buffer.concat([head101, upHead]));
        if (upHead.length) tee('server', upHead);
        if (head.length) upstream.write(head), tee('client', head);
        client.on('data', (c: Buffer) => tee('client', c));
        upstream.on('data', (c: Buffer) => tee('server', c));
        client.pipe(upstream);
        upstream.pipe(client);
      } else {
        if (head.length) upstream.write(head), tee('client', head);
        client.on('data', (c: Buffer) => tee('client', c));
        client.pipe(upstream);
        const rs = restage;
        // The client's messages that came before this read are read first: a response's stage exists before its events.
        const fromUpstream = (c: Buffer) => {
          drain();
          const { out, error } = rs.push(c);
          if (out.length && !client.write(out)) upstream.pause();
          if (error) {
            // Nothing after a broken frame can be read or re-framed: the client gets a close (1002, protocol error)
            // and the connection ends once it has (its close takes the upstream down with it).
            upstream.removeListener('data', fromUpstream);
            upstream.pause();
            const reason = Buffer.from('Tokenscope: the upstream broke the WebSocket protocol');
            client.end(serverFrame('close', Buffer.concat([Buffer.from([0x03, 0xea]), reason])));
            setTimeout(() => client.destroy(), 5000).unref();
          }
        };
        client.write(head101);
        client.on('drain', () => upstream.resume());
        if (upHead.length) fromUpstream(upHead);
        upstream.on('data', fromUpstream);
        upstream.once('end', () => client.end());
      }

      let firstClosed: 'client' | 'upstream' | undefined;
      // A side that sent its FIN is done (WebSocket has no half-close): the pipe ends the other, and this one is ended
      // too (the client's socket allows half-open connections and would wait on it forever).
      client.once('end', () => ((firstClosed ??= 'client'), client.end()));
      upstream.once('end', () => ((firstClosed ??= 'upstream'), upstream.end()));
      let stoppedHere = false;
      stop = () => ((stoppedHere = true), client.destroy(), upstream.destroy());
      await new Promise<void>((resolve) => {
        let open = 2;
        const closed = (side: 'client' | 'upstream', other: Duplex) => () => {
          firstClosed ??= side;
          // One side gone: the other is closed too (what it still sends has nowhere to go).
          other.destroy();
          if (--open === 0) resolve();
        };
        client.once('close', closed('client', upstream));
        upstream.once('close', closed('upstream', client));
      });
      drain();
      const error =
        stoppedHere || ctx.stopping()
          ? 'interrupted: Tokenscope stopped while the response was streaming'
          : firstClosed === 'client'
            ? 'the client closed the connection before the response ended'
            : 'the upstream closed the connection before the response ended';
      capture.closed(error);
      await Promise.all(finishing);
    }
  })().catch((e) => {
    ctx.log?.(`tokenscope proxy: ${oneLine(e)}`);
    if (!client.destroyed)
      answer(
        client,
        502,
        { 'content-type': 'application/json' },
        Buffer.from(errorBody(false, 502, redactUrlsIn(`Tokenscope failed on this request (${oneLine(e)})`))),
      );
  });
  return { done, stop: () => stop() };
}

/** An HTTP/1.1 response head: from a header object, or raw `[name, value, …]` as received (order and case kept). */
function headText(status: number, message: string | undefined, headers: Record<string, string | string[]> | string[]): Buffer {
  const lines = [`HTTP/1.1 ${status} ${(message || STATUS_CODES[status] || '').replace(/[\r\n]/g, ' ')}`];
  if (Array.isArray(headers)) for (let i = 0; i + 1 < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  else for (const [k, v] of Object.entries(headers)) for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${one}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/** A whole answer of the proxy's own on a socket that never became a WebSocket; the socket ends after it. */
function answer(client: Duplex, status: number, headers: Record<string, string>, body: Buffer): void {
  if (client.destroyed || client.writableEnded) return;
  client.end(
    Buffer.concat([headText(status, undefined, { ...headers, 'content-length': String(body.length), connection: 'close' }), body]),
  );
}
