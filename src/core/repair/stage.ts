/**
 * Repair mode on the proxy's forwarding path: which exchanges it applies to (opt-in, per route and per model), and
 * the response stage that rewrites them, chosen by protocol in PROTOCOLS below (OpenAI Chat Completions: sse.ts for
 * streams, json.ts for whole bodies; OpenAI Responses: responses.ts; Anthropic Messages: anthropic.ts). Other
 * protocols pass untouched.
 *
 * What was delivered is recorded on the exchange: the repair record (calls, removed markup, finish reason) and the
 * delivered bytes, beside the upstream's bytes that stay the exchange's body and the input of every finding.
 */
import { createHash } from 'node:crypto';
import { detectFamily } from '../families/index';
import { normalizeRequest } from '../wire/request';
import type { ResponseStage, ResponseStageFactory, ResponseStageInit } from '../proxy/stage';
import type { RepairRecord } from '../model';
import { AnthropicSseRepair, repairAnthropicBody } from './anthropic';
import { repairJsonBody } from './json';
import { repairResponsesBody, ResponsesSseRepair } from './responses';
import { SseRepair } from './sse';
import { turnContext, type TruncatedMode, type TurnContext } from './turn';

export interface RepairSettings {
  enabled: boolean;
  /** What to do with a truncated call: withhold it (finish `length`/`error`) or pass its markup through as text. */
  truncated: TruncatedMode;
  /** Route names repair applies to (`openrouter`, `sglang`, `default`, a custom name); empty or absent: all. */
  routes?: string[];
  /** Model ids repair applies to (`*` ends a prefix: `moonshotai/*`); empty or absent: all. */
  models?: string[];
}

export const DEFAULT_REPAIR: RepairSettings = { enabled: false, truncated: 'withhold' };

/** Keeps at most this much of a repaired response's delivered bytes for the capture. */
const MAX_DELIVERED = 32 * 1024 * 1024;

export function modelMatches(patterns: string[] | undefined, model: string | undefined): boolean {
  if (!patterns || patterns.length === 0) return true;
  if (!model) return false;
  return patterns.some((p) => (p.endsWith('*') ? model.startsWith(p.slice(0, -1)) : p === model));
}

/** A streamed response's repair, fed read by read. */
export interface StreamRepair {
  push(chunk: Buffer): Buffer;
  /** The rest at the end of the body. */
  end(): Buffer;
  /** What was rewritten (undefined when the delivered stream is the upstream's). */
  record(): RepairRecord | undefined;
}

/** How one protocol's responses are repaired: streamed, or as one body. */
export interface ProtocolRepair {
  stream(ctx: TurnContext): StreamRepair;
  body(body: Buffer, ctx: TurnContext): { bytes: Buffer; record?: RepairRecord };
}

/** The protocols repair applies to, by request path (query dropped); one line each. */
const PROTOCOLS: [RegExp, ProtocolRepair][] = [
  [/\/chat\/completions$/, { stream: (ctx) => new SseRepair(ctx), body: repairJsonBody }],
  [/\/responses$/, { stream: (ctx) => new ResponsesSseRepair(ctx), body: repairResponsesBody }],
  [/\/messages$/, { stream: (ctx) => new AnthropicSseRepair(ctx), body: repairAnthropicBody }],
];

/** The repair of the protocol a request path names, or undefined when repair does not apply to it. */
export function protocolRepair(path: string): ProtocolRepair | undefined {
  const p = path.split('?')[0];
  return PROTOCOLS.find(([re]) => re.test(p))?.[1];
}

/** The turn context of a repairable request, or undefined when repair does not apply to it. */
export function repairContext(
  settings: RepairSettings,
  init: Pick<ResponseStageInit, 'route' | 'method' | 'path' | 'requestBody'>,
): TurnContext | undefined {
  if (!settings.enabled || init.method !== 'POST' || !protocolRepair(init.path)) return undefined;
  if (settings.routes && settings.routes.length > 0 && !settings.routes.includes(init.route)) return undefined;
  if (!init.requestBody || init.requestBody[0] !== '{') return undefined;
  const req = normalizeRequest(init.requestBody, { path: init.path });
  if (!modelMatches(settings.models, req.model)) return undefined;
  const historyCalls = req.messages.reduce((n, m) => n + (m.toolCalls?.length ?? 0), 0);
  const raw = req.raw as { messages?: unknown; input?: unknown } | undefined;
  const seed = createHash('sha256')
    .update(JSON.stringify(raw?.messages ?? raw?.input ?? null))
    .digest('hex');
  return turnContext(req.model ? detectFamily(req.model)?.format : undefined, { tools: req.tools, historyCalls, seed }, settings.truncated);
}

/** The proxy's response stage for repair mode; `settings` is read per exchange (the extension changes it live). */
export function repairStage(settings: () => RepairSettings): ResponseStageFactory {
  const factory: ResponseStageFactory = (init) => {
    if (init.status !== 200) return undefined;
    const encoding = init.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') return undefined;
    const type = String(init.headers['content-type'] ?? '');
    const sse = type.includes('text/event-stream');
    if (!sse && !type.includes('application/json')) return undefined;
    const ctx = repairContext(settings(), init);
    const protocol = protocolRepair(init.path);
    if (!ctx || !protocol) return undefined;
    return sse ? streamStage(protocol.stream(ctx), init) : wholeStage((body) => protocol.body(body, ctx), init);
  };
  // A WebSocket connection (the Responses API's WebSocket mode) is repaired on the routes repair applies to; which of
  // its responses are is decided per `response.create`, by model, as for a POST.
  factory.webSocket = (route, path) => {
    const s = settings();
    return s.enabled && protocolRepair(path) !== undefined && (!s.routes || s.routes.length === 0 || s.routes.includes(route));
  };
  return factory;
}

function streamStage(repair: StreamRepair, init: ResponseStageInit): ResponseStage {
  // What the agent gets is recorded as it goes, in the tick it is written to the client (crash-safe like the body).
  init.writer.delivering();
  let size = 0;
  const send = (b: Buffer) => {
    if (b.length > 0 && size <= MAX_DELIVERED) init.writer.deliver(b), (size += b.length);
    return b;
  };
  const recorded = () => {
    const record = repair.record();
    if (record) init.writer.annotate({ repair: record });
    else init.writer.deliveredUnchanged();
  };
  return {
    headers: (h) => h,
    push: (chunk) => send(repair.push(chunk)),
    end: () => {
      const rest = send(repair.end());
      recorded();
      return rest;
    },
    // The client closed early (an SDK stops reading at an error event, Codex at response.completed): what it got.
    abort: recorded,
  };
}

function wholeStage(repairBody: (body: Buffer) => { bytes: Buffer; record?: RepairRecord }, init: ResponseStageInit): ResponseStage {
  const parts: Buffer[] = [];
  return {
    // The body may change length: the client gets it chunked.
    headers: (h) => {
      const { 'content-length': _dropped, ...rest } = h;
      return rest;
    },
    push: (chunk) => {
      parts.push(chunk);
      return Buffer.alloc(0);
    },
    end: () => {
      const body = Buffer.concat(parts);
      const { bytes, record } = repairBody(body);
      if (record) {
        init.writer.annotate({ repair: record });
        init.writer.deliver(bytes);
      }
      return bytes;
    },
  };
}
