/**
 * Exchanges still streaming, as the capture store shows them: how long they have run, the bytes so far and how long
 * the stream has been silent. Read from the store's reader API (the body so far, with its chunk timing), so it works
 * in the proxy's process and in another one reading the same data dir.
 */
import type { CaptureReader, CapturedExchange } from '../model';

export interface InFlight {
  exchange: CapturedExchange;
  /** Response bytes received so far. */
  bytes: number;
  /** Since the request started, ms. */
  ageMs: number;
  /** Since the last response byte (or since the start, before the first one), ms. */
  quietMs: number;
  /** Whether any response byte came yet. */
  started: boolean;
}

/** `minAgeMs`: leave out (without reading their bodies) exchanges younger than this: they cannot have been quiet longer. */
export function inFlight(reader: CaptureReader, now = Date.now(), minAgeMs = 0): InFlight[] {
  const out: InFlight[] = [];
  for (const x of reader.list()) {
    if (x.state !== 'streaming' || now - x.startedAt < minAgeMs) continue;
    const chunks = reader.readResponse(x.id)?.chunks ?? [];
    const last = chunks.at(-1);
    const bytes = last ? last.offset + last.length : 0;
    const lastAt = x.startedAt + (last?.t ?? 0);
    out.push({
      exchange: x,
      bytes,
      ageMs: Math.max(0, now - x.startedAt),
      quietMs: Math.max(0, now - lastAt),
      started: last !== undefined,
    });
  }
  return out;
}

/** `3.2 kB`, `1.4 MB`. */
export function sizeText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** `in flight 42 s, 3.2 kB, no bytes for 15 s` (or `waiting for the first byte for 15 s`). */
export function inFlightText(f: InFlight): string {
  const s = (ms: number) => `${Math.round(ms / 1000)} s`;
  const quiet = f.started ? `no bytes for ${s(f.quietMs)}` : `no response yet after ${s(f.quietMs)}`;
  return `in flight ${s(f.ageMs)}, ${sizeText(f.bytes)}, ${quiet}`;
}

/** `id  agent  model  in flight 42 s, …` (network text: the caller neutralises it for a terminal). */
export function inFlightLine(f: InFlight): string {
  const x = f.exchange;
  return `${x.id}  ${x.agent ?? 'unknown'}  ${x.requestModel ?? x.path.split('?')[0]}  ${inFlightText(f)}`;
}

/**
 * Which streams to report as quiet: each one once it has been silent `quietAfterMs`, then again each further
 * `quietAfterMs` the silence lasts; a stream that speaks again starts over.
 */
export class QuietStreams {
  private readonly shownAt = new Map<string, number>();
  constructor(readonly quietAfterMs: number) {}

  due(flights: InFlight[]): InFlight[] {
    const live = new Set(flights.map((f) => f.exchange.id));
    for (const id of this.shownAt.keys()) if (!live.has(id)) this.shownAt.delete(id);
    const out: InFlight[] = [];
    for (const f of flights) {
      const id = f.exchange.id;
      if (f.quietMs < this.quietAfterMs) {
        this.shownAt.delete(id);
        continue;
      }
      const at = this.shownAt.get(id);
      if (at === undefined || f.quietMs >= at + this.quietAfterMs) {
        this.shownAt.set(id, f.quietMs);
        out.push(f);
      }
    }
    return out;
  }
}

/** One exchange's in-flight state, or undefined when it is not streaming (any more). */
export function inFlightOf(reader: CaptureReader, id: string, now = Date.now()): InFlight | undefined {
  const x = reader.get(id);
  if (!x || x.state !== 'streaming') return undefined;
  const chunks = reader.readResponse(id)?.chunks ?? [];
  const last = chunks.at(-1);
  return {
    exchange: x,
    bytes: last ? last.offset + last.length : 0,
    ageMs: Math.max(0, now - x.startedAt),
    quietMs: Math.max(0, now - (x.startedAt + (last?.t ?? 0))),
    started: last !== undefined,
  };
}
