/**
 * What repair mode would have delivered for a response Tokenscope did not repair (a re-run, a comparison sample, a
 * capture taken without `--repair`): the same repair the proxy runs (./sse.ts for streams, ./json.ts for whole
 * bodies) over the upstream's bytes, after the fact, and the structured calls the agent would then have received.
 */
import type { RepairRecord, ToolCall } from '../model';
import { parseResponseBody } from '../wire/index';
import { protocolRepair, repairContext } from './stage';
import type { TruncatedMode } from './turn';
import { repairSummary, repairWords, safe } from './describe';

export interface RepairPreview {
  /** What repair would have changed (calls delivered, withheld or left as text; markup removed; finish reason). */
  record: RepairRecord;
  /** The structured tool calls the agent would have received. */
  calls: Pick<ToolCall, 'id' | 'name' | 'arguments'>[];
  /** The finish reason the agent would have received. */
  finishReason?: string;
}

export interface PreviewInput {
  /** The request as sent (its tools check the arguments, its model picks the family). */
  requestBody: string;
  /** Request path: it names the protocol (repair applies to the ones stage.ts lists). */
  path: string;
  contentType?: string;
  /** The upstream's response bytes. */
  bytes: Uint8Array;
  truncated?: TruncatedMode;
}

/** The preview, or undefined when repair would have changed nothing (or does not apply to the protocol). */
export function repairPreview(input: PreviewInput): RepairPreview | undefined {
  const ctx = repairContext(
    { enabled: true, truncated: input.truncated ?? 'withhold' },
    { route: '', method: 'POST', path: input.path, requestBody: input.requestBody },
  );
  const protocol = protocolRepair(input.path);
  if (!ctx || !protocol) return undefined;
  const body = Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
  const sse =
    (input.contentType ?? '').includes('text/event-stream') ||
    (!input.contentType && /^\s*(data|:|event)/.test(body.subarray(0, 16).toString('latin1')));
  let delivered: Buffer;
  let record: RepairRecord | undefined;
  if (sse) {
    const r = protocol.stream(ctx);
    delivered = Buffer.concat([r.push(body), r.end()]);
    record = r.record();
  } else {
    ({ bytes: delivered, record } = protocol.body(body, ctx));
  }
  if (!record) return undefined;
  const res = parseResponseBody(delivered, { path: input.path, ...(input.contentType && { contentType: input.contentType }) });
  return {
    record,
    calls: res.message.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
    ...(res.finishReason && { finishReason: res.finishReason }),
  };
}

/** One line: `1 call delivered as tool_calls, 124 chars of markup removed from content, …: read`. */
export function previewLine(p: RepairPreview): string {
  const names = p.calls.map((c) => safe(c.name || '(no name)'));
  return `${repairSummary(p.record)}${names.length ? `; calls: ${names.join(', ')}` : ''}`;
}

/** One line per delivered call: `read functions.read:0 {"path":"a"}`. */
export function previewCallLines(p: RepairPreview): string[] {
  return p.calls.map((c) => `${safe(c.name || '(no name)')} ${safe(c.id ?? '(no id)')} ${safe(c.arguments)}`);
}

/**
 * Over a provider's samples: how many repair would have changed and what it would have delivered, e.g.
 * `3 of 3 samples: 3 calls delivered as tool_calls (read ×3)` or `2 of 3 samples: 2 truncated calls withheld`.
 * Undefined when repair would have changed none.
 */
export function previewsLine(previews: readonly (RepairPreview | undefined)[]): string | undefined {
  const got = previews.filter((p): p is RepairPreview => !!p);
  if (got.length === 0) return undefined;
  const count = (status: string) => got.reduce((n, p) => n + p.record.calls.filter((c) => c.status === status).length, 0);
  const names = new Map<string, number>();
  for (const p of got) for (const c of p.calls) names.set(c.name || '(no name)', (names.get(c.name || '(no name)') ?? 0) + 1);
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const parts = [
    count('delivered') &&
      `${plural(count('delivered'), 'call', 'calls')} delivered as ${repairWords(got[0].record).calls} (${[...names].map(([n, k]) => `${safe(n)} ×${k}`).join(', ')})`,
    count('withheld') && `${plural(count('withheld'), 'truncated call', 'truncated calls')} withheld`,
    count('passed-through') && `${plural(count('passed-through'), 'truncated call', 'truncated calls')} left as text`,
  ].filter(Boolean);
  return `${got.length} of ${previews.length} sample${previews.length === 1 ? '' : 's'}: ${parts.join(', ') || 'markup held back and re-sent, no call found'}`;
}
