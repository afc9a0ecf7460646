/**
 * The repair of one choice of a Chat Completions turn, shared by the streamed and the whole-body paths: its content
 * and reasoning channels, the calls recovered from their markup, and the finish reason a correct server would give.
 */
import type { ModelFormat } from '../families/shared/format';
import type { RepairRecord, RepairedCallRecord } from '../model';
import { readCalls, type CallContext, type RepairedCall, type RepairProtocol } from './calls';
import { MarkupChannel, openersFor, type Opener, type Part } from './channel';

export type TruncatedMode = 'withhold' | 'passthrough';

export interface TurnContext extends CallContext {
  /** The family the model id names, if any. */
  format: ModelFormat | undefined;
  openers: Opener[];
  truncated: TruncatedMode;
}

export function turnContext(format: ModelFormat | undefined, calls: CallContext, truncated: TruncatedMode): TurnContext {
  return { ...calls, format, openers: openersFor(format), truncated };
}

/** `ctx` for a repair of `protocol` (each protocol's repair sets its own: ids and the record depend on it). */
export function forProtocol(ctx: TurnContext, protocol: RepairProtocol): TurnContext {
  return ctx.protocol === protocol ? ctx : { ...ctx, protocol };
}

export type Channel = 'content' | 'reasoning';

export class ChoiceRepair {
  private readonly channels: Record<Channel, MarkupChannel>;
  /** Calls recovered and not yet handed to the caller for delivery. */
  private queue: RepairedCall[] = [];
  /** The next structured index (after the upstream's own structured calls). */
  private nextIndex = 0;
  readonly record: RepairedCallRecord[] = [];
  readonly removed: Record<Channel, number> = { content: 0, reasoning: 0 };
  private delivered = 0;
  private withheld = false;
  /** True once anything this choice delivers differs from what the upstream sent. */
  changed = false;

  constructor(private readonly ctx: TurnContext) {
    this.channels = { content: new MarkupChannel(ctx.openers, ctx.format), reasoning: new MarkupChannel(ctx.openers, ctx.format) };
  }

  get idle(): boolean {
    return this.channels.content.idle && this.channels.reasoning.idle;
  }

  /** Set once the finish reason went out: nothing later in the turn needs rewriting. */
  finished = false;

  /** Nothing held, and no finish reason still to rewrite: the upstream's bytes can pass unread. */
  get quiet(): boolean {
    return this.idle && (this.finished || (this.delivered === 0 && !this.withheld));
  }

  /** The upstream sent a structured call with this index: recovered calls are numbered after it. */
  sawStructuredCall(index: number): void {
    if (index >= this.nextIndex) this.nextIndex = index + 1;
  }

  /** Text of `channel` to deliver now for `text` from the upstream. */
  push(channel: Channel, text: string): string {
    const out = this.deliver(channel, this.channels[channel].push(text));
    if (out !== text) this.changed = true;
    return out;
  }

  /** The rest of `channel` at the end of the turn. */
  end(channel: Channel): string {
    const out = this.deliver(channel, this.channels[channel].end());
    if (out) this.changed = true;
    return out;
  }

  /** Recovered calls to deliver now (each once). */
  take(): RepairedCall[] {
    const q = this.queue;
    this.queue = [];
    return q;
  }

  /** What the turn ends as, in any protocol: a call withheld (a failed turn), calls delivered, or as the upstream said. */
  get outcome(): 'withheld' | 'calls' | undefined {
    return this.withheld ? 'withheld' : this.delivered > 0 ? 'calls' : undefined;
  }

  /** The finish reason to deliver for the upstream's `upstream`. */
  finishReason(upstream: string | null | undefined): string | null | undefined {
    if (this.withheld) return upstream === 'length' ? 'length' : 'error';
    if (this.delivered > 0) return 'tool_calls';
    return upstream;
  }

  private deliver(channel: Channel, parts: Part[]): string {
    let out = '';
    for (const part of parts) {
      if ('text' in part) {
        out += part.text;
        continue;
      }
      const { region } = part;
      if (region.strip) {
        this.removed[channel] += region.raw.length;
        continue;
      }
      const { calls, text } = readCalls(region.format, region.raw, channel, this.nextIndex, this.ctx);
      if (calls.length === 0) {
        out += region.raw; // markers, but no call in them: not ours to touch
        continue;
      }
      const cut = calls.some((c) => c.state === 'truncated');
      if (cut && this.ctx.truncated === 'passthrough') {
        out += region.raw;
        for (const c of calls) this.note(c, 'passed-through', region.format.id);
        continue;
      }
      this.removed[channel] += region.raw.length - text.length;
      out += text;
      for (const c of calls) {
        if (c.state === 'truncated') {
          this.withheld = true;
          this.note(c, 'withheld', region.format.id);
          continue;
        }
        const call = { ...c, index: this.nextIndex++ };
        this.delivered++;
        this.queue.push(call);
        this.note(call, 'delivered', region.format.id);
      }
    }
    return out;
  }

  private note(c: RepairedCall, status: RepairedCallRecord['status'], family: RepairedCallRecord['family']): void {
    this.record.push({
      index: c.index,
      id: c.id,
      name: c.name,
      from: c.from,
      family,
      status,
      ...(c.note && { note: c.note }),
      argumentsChars: c.arguments.length,
    });
  }
}

/** The exchange's repair record from its choices (undefined when nothing was rewritten). */
export function repairRecord(
  choices: Iterable<ChoiceRepair>,
  ctx: TurnContext,
  finish: RepairRecord['finishReason'],
): RepairRecord | undefined {
  const calls: RepairedCallRecord[] = [];
  const removed = { content: 0, reasoning: 0 };
  let changed = false;
  for (const c of choices) {
    calls.push(...c.record);
    removed.content += c.removed.content;
    removed.reasoning += c.removed.reasoning;
    changed ||= c.changed;
  }
  if (!changed && calls.length === 0 && !finish) return undefined;
  return {
    protocol: ctx.protocol ?? 'openai-chat',
    truncated: ctx.truncated,
    calls,
    removedChars: removed,
    ...(finish && { finishReason: finish }),
  };
}
