/**
 * Repair mode on the proxy's forwarding path: which exchanges it applies to (opt-in, per route and per model), and
 * the response stage that rewrites them (sse.ts for streams, json.ts for whole bodies).
 *
 * Only OpenAI Chat Completions responses are repaired. Anthropic Messages and OpenAI Responses have no text channel
 * that an open-model provider leaks native markup into in a way an agent could use once restructured: their tool
 * use is typed content blocks / output items that the upstream itself produces from the model's markup, and a
 * provider that leaks markup there leaks it into a text block whose place among the other blocks (indices, ids,
 * `stop_reason` per block) a proxy cannot rebuild faithfully. Tokenscope still flags those leaks; it does not rewrite them.
 *
 * What was delivered is recorded on the exchange: the repair record (calls, removed markup, finish reason) and the
 * delivered bytes, beside the upstream's bytes that stay the exchange's body and the input of every finding.
 */
import { createHash } from 'node:crypto';
import { detectFamily } from '../families/index';
import { normalizeRequest } from '../wire/request';
import type { ResponseStage, ResponseStageFactory, ResponseStageInit } from '../proxy/stage';
import { repairJsonBody } from './json';
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

/** The turn context of a repairable request, or undefined when repair does not apply to it. */
export function repairContext(settings: RepairSettings, init: Pick<ResponseStageInit, 'route' | 'method' | 'path' | 'requestBody'>): TurnContext | undefined {
  if (!settings.enabled || init.method !== 'POST' || !/\/chat\/completions$/.test(init.path.split('?')[0])) return undefined;
  if (settings.routes && settings.routes.length > 0 && !settings.routes.includes(init.route)) return undefined;
  if (!init.requestBody || init.requestBody[0] !== '{') return undefined;
  const req = normalizeRequest(init.requestBody, { path: init.path });
  if (!modelMatches(settings.models, req.model)) return undefined;
  const historyCalls = req.messages.reduce((n, m) => n + (m.toolCalls?.length ?? 0), 0);
  const seed = createHash('sha256').update(JSON.stringify((req.raw as { messages?: unknown })?.messages ?? null)).digest('hex');
  return turnContext(req.model ? detectFamily(req.model)?.format : undefined, { tools: req.tools, historyCalls, seed }, settings.truncated);
}

/** The proxy's response stage for repair mode; `settings` is read per exchange (the extension changes it live). */
export function repairStage(settings: () => RepairSettings): ResponseStageFactory {
  return (init) => {
    if (init.status !== 200) return undefined;
    const encoding = init.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') return undefined;
    const type = String(init.headers['content-type'] ?? '');
    const sse = type.includes('text/event-stream');
    if (!sse && !type.includes('application/json')) return undefined;
    const ctx = repairContext(settings(), init);
    if (!ctx) return undefined;
    return sse ? streamStage(ctx, init) : wholeStage(ctx, init);
  };
}

function streamStage(ctx: TurnContext, init: ResponseStageInit): ResponseStage {
  const repair = new SseRepair(ctx);
  // What the agent gets is recorded as it goes, in the tick it is written to the client (crash-safe like the body).
  init.writer.delivering();
  let size = 0;
  const send = (b: Buffer) => {
    if (b.length > 0 && size <= MAX_DELIVERED) (init.writer.deliver(b), (size += b.length));
    return b;
  };
  return {
    headers: (h) => h,
    push: (chunk) => send(repair.push(chunk)),
    end: () => {
      const rest = send(repair.end());
      const record = repair.record();
      if (record) init.writer.annotate({ repair: record });
      else init.writer.deliveredUnchanged();
      return rest;
    },
  };
}

function wholeStage(ctx: TurnContext, init: ResponseStageInit): ResponseStage {
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
      const { bytes, record } = repairJsonBody(body, ctx);
      if (record) {
        init.writer.annotate({ repair: record });
        init.writer.deliver(bytes);
      }
      return bytes;
    },
  };
}
