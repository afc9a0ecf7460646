/**
 * Repair of an OpenAI Responses response (Codex's wire format), streamed or as one body.
 *
 * A tool call the model leaked as markup into an `output_text` part is delivered as a `function_call` output item
 * right after the message item that held it, and the message keeps only its plain text. Streamed, the item goes out
 * as a server sends one (`response.output_item.added` with empty arguments, `response.function_call_arguments.delta`
 * and `.done`, `response.output_item.done`) after the message's `response.output_item.done`; every later event's
 * `output_index` and `sequence_number` move up by what was inserted, so both stay in order. The text deltas, the
 * `.done` events and the message item carry only the text outside the markup, and `response.completed` lists the
 * delivered items. Reasoning items and everything else pass as they came. A truncated call is never delivered: the
 * text before it is, and a `completed` response becomes `failed` (withhold), or the markup stays in the text with the
 * status unchanged (passthrough), as Chat Completions repair does with its finish reason.
 *
 * Bytes are forwarded as whole events in the tick they arrive. Until a read could begin markup (or carries a
 * function_call), reads pass unparsed; from then on every event is parsed, so each text part's delivered text is
 * known from there on, and an event is re-serialized only when something in it changes.
 */
import { createHash } from 'node:crypto';
import type { RepairRecord } from '../model';
import type { RepairedCall } from './calls';
import { EventFramer, openerTest, splitEvents, type SseEvent } from './events';
import { ChoiceRepair, forProtocol, repairRecord, type TurnContext } from './turn';
import type { Json } from './json';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The error a `completed` response gets when repair withheld a truncated call (Codex shows it and retries the turn). */
const WITHHELD =
  'The model stopped inside a tool call (its arguments were cut short); Tokenscope repair withheld the partial call instead of delivering it.';

/** One text part of a message item, from the first parsed read on: what the upstream sent and what was delivered. */
interface Part {
  upstream: string;
  delivered: string;
  /** The part's whole delivered text, once its `output_text.done` went out (undefined: unchanged). */
  final?: string;
}

interface Item {
  /** Its `output_index` as delivered. */
  index: number;
  parts: Map<number, Part>;
  /** Calls recovered from its text, still to be delivered (as items right after it). */
  calls: RepairedCall[];
  /** A message that held only markup: not delivered (its calls take its place). */
  dropped?: boolean;
}

/** A message item in progress whose events are held until it has text to show. */
interface Held {
  item: Item;
  upstreamIndex: number;
  /** The events held, as they would have gone out. */
  out: string[];
  /** Its `output_item.done` went by (kept): it waits no more. */
  done?: boolean;
  /** The delivered `sequence_number` of the first one (undefined when the upstream numbers none). */
  firstSeq?: number;
}

/** Whitespace-only (or empty) text. */
const blank = (s: string) => !/\S/.test(s);

export class ResponsesSseRepair {
  private readonly framer = new EventFramer();
  private readonly repair: ChoiceRepair;
  private readonly mayOpen: (latin1: string) => boolean;
  /** Output items by their upstream `output_index`. */
  private readonly items = new Map<number, Item>();
  /** Function-call items repair delivered, by the upstream `output_index` of the message they follow. */
  private readonly added = new Map<number, Json[]>();
  /** Output items inserted so far (later upstream items move up by this). */
  private itemShift = 0;
  /** Events inserted so far (later upstream sequence numbers move up by this). */
  private seqShift = 0;
  /** Set at the first read repair parses: it parses every later read too. */
  private parsing = false;
  /** The upstream names its events (`event:` lines): inserted events are named too. */
  private named = false;
  private eol = '\n';
  private upstreamCalls = 0;
  /** The text part deltas go to, until its `.done` (its rest is released there, or at the end of the body). */
  private open: { item: Item; itemId?: string; content: number } | undefined;
  private lastSeq: number | undefined;
  /** The first `output_index` no delivered item holds yet. */
  private nextFree = 0;
  private finish: RepairRecord['finishReason'];
  private terminated = false;
  /** The message item whose start waits for text to show, if any. */
  private held: Held | undefined;
  /** Events a new message's start released (an earlier message still waiting), to go out before it. */
  private spill = '';
  /** Text parts were followed in a read parsed only for a message start: a read passed unparsed leaves a gap in them. */
  private tracked = false;

  private readonly ctx: TurnContext;

  constructor(ctx: TurnContext) {
    this.ctx = forProtocol(ctx, 'openai-responses');
    this.repair = new ChoiceRepair(this.ctx);
    this.mayOpen = openerTest(ctx.openers);
  }

  /** The bytes to send for one upstream read. */
  push(chunk: Buffer): Buffer {
    const events = this.framer.push(chunk);
    if (events.length === 0) return events;
    // A message item starting is read (its start is held until it has text); otherwise reads pass unparsed until one
    // could begin markup or carries a function_call.
    const marked = events.includes('"function_call"') || this.mayOpen(events.toString('latin1'));
    const starts = events.includes('"response.output_item.added"') && events.includes('"message"');
    if (!this.parsing && !marked && !starts && !this.held) {
      if (this.tracked) {
        // What parts delivered is followed again from the next parsed read on (finalText needs no gap).
        for (const item of this.items.values()) item.parts.clear();
        this.open = undefined;
        this.tracked = false;
      }
      return events;
    }
    if (marked) this.parsing = true;
    else if (!this.parsing) this.tracked = true;
    return Buffer.from(
      splitEvents(events.toString('utf8'))
        .map((e) => this.event(e))
        .join(''),
    );
  }

  /** The rest at the end of the body: text still held and calls not yet sent (the stream ended early), then any unfinished event. */
  end(): Buffer {
    const held = this.release();
    const out = this.terminated ? [] : [...this.flushText(), ...this.flushCalls()];
    const tail = this.framer.end();
    if (out.length === 0) return held ? Buffer.concat([Buffer.from(held), tail]) : tail;
    return Buffer.concat([Buffer.from(held + this.serialize(this.stamp(out), [])), tail]);
  }

  /** What was rewritten (undefined when the delivered stream is the upstream's). */
  record(): RepairRecord | undefined {
    return repairRecord([this.repair], this.ctx, this.finish);
  }

  /** One upstream event: what goes out now (held events of a message that waits for text are queued instead). */
  private event(ev: SseEvent): string {
    const res = this.step(ev);
    const spill = this.spill;
    this.spill = '';
    const held = this.held;
    if (!held) return spill + res;
    if (res !== '') held.out.push(res);
    // The message goes out, from its start, once it has text to show (or it ended, kept).
    if (!held.done && ![...held.item.parts.values()].some((p) => !blank(p.delivered))) return spill;
    return spill + this.release();
  }

  /** The held events of the waiting message, as they were to go out; it waits no more. */
  private release(): string {
    const held = this.held;
    this.held = undefined;
    return held ? held.out.join('') : '';
  }

  private step(ev: SseEvent): string {
    if (ev.data === undefined) return ev.raw;
    let e: Json;
    try {
      e = JSON.parse(ev.data);
    } catch {
      return ev.raw;
    }
    if (!e || typeof e !== 'object' || Array.isArray(e)) return ev.raw;
    const named = ev.others.find((l) => l.startsWith('event:'));
    if (named) this.named = true;
    this.eol = ev.eol;
    const type: string = typeof e.type === 'string' ? e.type : named ? named.slice(6).trim() : '';
    const upstreamIndex: number | undefined = typeof e.output_index === 'number' ? e.output_index : undefined;
    let changed = this.renumber(e, type, upstreamIndex);
    const item = upstreamIndex === undefined ? undefined : this.items.get(upstreamIndex);
    const before: Json[] = [];
    const after: Json[] = [];
    switch (type) {
      case 'response.output_item.added':
        if (e.item?.type === 'function_call') this.repair.sawStructuredCall(this.upstreamCalls++);
        if (e.item?.type === 'message' && item && !this.terminated) {
          this.spill += this.release();
          this.held = {
            item,
            upstreamIndex: upstreamIndex!,
            out: [],
            ...(typeof e.sequence_number === 'number' && { firstSeq: e.sequence_number }),
          };
        }
        break;
      case 'response.output_text.delta': {
        if (!item || typeof e.delta !== 'string') break;
        const content = typeof e.content_index === 'number' ? e.content_index : 0;
        this.open = { item, itemId: e.item_id, content };
        const part = partOf(item, content);
        const out = this.repair.push('content', e.delta);
        part.upstream += e.delta;
        part.delivered += out;
        if (out !== e.delta) (e.delta = out), (changed = true);
        item.calls.push(...this.repair.take());
        break;
      }
      case 'response.output_text.done': {
        if (!item) break;
        before.push(...this.flushText());
        const part = item.parts.get(typeof e.content_index === 'number' ? e.content_index : 0);
        if (part && typeof e.text === 'string') {
          part.final = finalText(part, e.text);
          if (part.final !== undefined) (e.text = part.final), (changed = true);
        }
        break;
      }
      case 'response.content_part.done': {
        const part = item?.parts.get(typeof e.content_index === 'number' ? e.content_index : 0);
        if (part?.final !== undefined && e.part && typeof e.part === 'object' && typeof e.part.text === 'string')
          (e.part.text = part.final), (changed = true);
        break;
      }
      case 'response.output_item.done': {
        if (!item) break;
        if (this.open?.item === item) before.push(...this.flushText());
        if (this.held?.item === item) {
          if (e.item?.type === 'message' && onlyMarkup(e.item, item)) return this.drop(e);
          this.held.done = true;
        }
        if (e.item?.type === 'message') changed = cleanMessage(e.item, item) || changed;
        after.push(...this.callsAfter(item, upstreamIndex!, item.index + 1));
        break;
      }
      default:
        if (TERMINAL.has(type) && e.response && typeof e.response === 'object') {
          this.terminated = true;
          const held = this.release();
          if (held) return held + this.step(ev);
          before.push(...this.flushText(), ...this.flushCalls());
          changed = this.rewriteOutput(e.response) || changed;
          const finish = settle(this.repair, e.response, this.upstreamCalls);
          if (finish) {
            this.finish = finish;
            changed = true;
            e.type = e.response.status === 'failed' ? 'response.failed' : 'response.completed';
          }
        }
    }
    if (!changed && before.length === 0 && after.length === 0) {
      if (typeof e.sequence_number === 'number') this.lastSeq = e.sequence_number;
      return ev.raw;
    }
    const list = this.stamp([...before, e, ...after], before.length);
    const others = ev.others.filter((l) => !l.startsWith('event:'));
    return (
      this.serialize(list.slice(0, before.length), []) + this.serialize([e], others) + this.serialize(list.slice(before.length + 1), [])
    );
  }

  /**
   * The waiting message held only markup: none of its events goes out (an empty message item is no answer, and Anthropic
   * repair drops an emptied text block alike). Its calls take its place; later items and events move down.
   * `done` is its `output_item.done`, renumbered.
   */
  private drop(done: Json): string {
    const held = this.held!;
    this.held = undefined;
    const { item, upstreamIndex } = held;
    item.dropped = true;
    const count = item.calls.length;
    if (held.firstSeq !== undefined && typeof done.sequence_number === 'number') {
      // The calls' events are numbered from the first dropped event's number; later upstream events follow them.
      this.lastSeq = held.firstSeq - 1;
      this.seqShift -= done.sequence_number - held.firstSeq + 1;
    }
    const events = this.callsAfter(item, upstreamIndex, item.index);
    this.itemShift -= 1;
    if (count === 0) this.nextFree--;
    return events.length ? this.serialize(this.stamp(events), []) : '';
  }

  /** Moves an upstream event's `output_index` and `sequence_number` past what repair inserted; true when either moved. */
  private renumber(e: Json, type: string, upstreamIndex: number | undefined): boolean {
    let changed = false;
    if (upstreamIndex !== undefined) {
      // Items that went by before repair parsed are met here first (nothing was inserted before them).
      let item = this.items.get(upstreamIndex);
      if (!item) {
        item = { index: upstreamIndex + this.itemShift, parts: new Map(), calls: [] };
        this.items.set(upstreamIndex, item);
        this.nextFree = Math.max(this.nextFree, item.index + 1);
      }
      if (item.index !== upstreamIndex) (e.output_index = item.index), (changed = true);
    }
    if (this.seqShift !== 0 && typeof e.sequence_number === 'number') (e.sequence_number += this.seqShift), (changed = true);
    return changed;
  }

  /**
   * Sequence numbers for `list` (events repair inserted around the upstream event at `at`): in order from the first
   * one's; later upstream events move up by the inserted count. Upstreams that number nothing get nothing numbered.
   */
  private stamp(list: Json[], at = -1): Json[] {
    const upstream = at >= 0 ? list[at] : undefined;
    const numbered = upstream ? typeof upstream.sequence_number === 'number' : this.lastSeq !== undefined;
    if (!numbered) return list;
    let seq = upstream ? upstream.sequence_number : this.lastSeq! + 1;
    // Numbered right after the type, as servers write it.
    const out = list.map((o, i) => (i === at ? ((o.sequence_number = seq++), o) : { type: o.type, sequence_number: seq++, ...o }));
    this.seqShift += list.length - (upstream ? 1 : 0);
    this.lastSeq = seq - 1;
    return out;
  }

  private serialize(list: Json[], others: string[]): string {
    const eol = this.eol;
    return list
      .map((o) => [...(this.named ? [`event: ${o.type}`] : []), ...others, `data: ${JSON.stringify(o)}`].join(eol) + eol + eol)
      .join('');
  }

  /** The held rest of the open text part, as one more delta (none when nothing is held). */
  private flushText(): Json[] {
    const open = this.open;
    if (!open) return [];
    this.open = undefined;
    const rest = this.repair.end('content');
    open.item.calls.push(...this.repair.take());
    if (!rest) return [];
    partOf(open.item, open.content).delivered += rest;
    return [
      {
        type: 'response.output_text.delta',
        ...(open.itemId !== undefined && { item_id: open.itemId }),
        output_index: open.item.index,
        content_index: open.content,
        delta: rest,
        logprobs: [],
      },
    ];
  }

  /** Calls recovered from items whose `output_item.done` never came: delivered after every item so far. */
  private flushCalls(): Json[] {
    const out: Json[] = [];
    for (const [upstreamIndex, item] of this.items)
      if (item.calls.length > 0) out.push(...this.callsAfter(item, upstreamIndex, this.nextFree));
    return out;
  }

  /** The events of `item`'s recovered calls, as items from `first` on; later upstream items move up past them. */
  private callsAfter(item: Item, upstreamIndex: number, first: number): Json[] {
    const calls = item.calls;
    item.calls = [];
    const events: Json[] = [];
    calls.forEach((call, k) => {
      const index = first + k;
      const done = callItem(call, this.ctx);
      const args: string = done.arguments;
      events.push(
        { type: 'response.output_item.added', output_index: index, item: { ...done, status: 'in_progress', arguments: '' } },
        { type: 'response.function_call_arguments.delta', item_id: done.id, output_index: index, delta: args },
        { type: 'response.function_call_arguments.done', item_id: done.id, output_index: index, arguments: args },
        { type: 'response.output_item.done', output_index: index, item: done },
      );
      this.added.set(upstreamIndex, [...(this.added.get(upstreamIndex) ?? []), done]);
      this.nextFree = Math.max(this.nextFree, index + 1);
    });
    this.itemShift += calls.length;
    return events;
  }

  /** The terminal event's `output`: message text as delivered, and the function_call items after their message. */
  private rewriteOutput(response: Json): boolean {
    if (!Array.isArray(response.output) || response.output.length === 0) return false;
    let changed = false;
    const output: unknown[] = [];
    response.output.forEach((raw: unknown, i: number) => {
      const item = this.items.get(i);
      if (item?.dropped) changed = true;
      else output.push(raw);
      const o = raw as Json;
      if (item && o && typeof o === 'object' && o.type === 'message') changed = cleanMessage(o, item) || changed;
      const added = this.added.get(i);
      if (added?.length) output.push(...added), (changed = true);
    });
    if (changed) response.output = output;
    return changed;
  }
}

function partOf(item: Item, content: number): Part {
  let part = item.parts.get(content);
  if (!part) item.parts.set(content, (part = { upstream: '', delivered: '' }));
  return part;
}

/**
 * A part's whole delivered text from the upstream's whole text: what went by before repair parsed (passed as it
 * came), then what repair delivered. Undefined when repair changed nothing in it.
 */
function finalText(part: Part, upstream: string): string | undefined {
  if (part.delivered === part.upstream) return undefined;
  const before = upstream.endsWith(part.upstream) ? upstream.slice(0, upstream.length - part.upstream.length) : '';
  return before + part.delivered;
}

/** A message item's text parts as delivered; true when one changed. */
function cleanMessage(message: Json, item: Item): boolean {
  if (!Array.isArray(message.content)) return false;
  let changed = false;
  message.content.forEach((p: Json, i: number) => {
    const part = item.parts.get(i);
    if (!part || !p || typeof p !== 'object' || p.type !== 'output_text' || typeof p.text !== 'string') return;
    part.final ??= finalText(part, p.text);
    if (part.final !== undefined && p.text !== part.final) (p.text = part.final), (changed = true);
  });
  return changed;
}

/** A message item whose text parts repair emptied (all blank now, and some had markup): it is not delivered. */
function onlyMarkup(message: Json, item: Item): boolean {
  if (!Array.isArray(message.content) || message.content.some((p: Json) => p?.type !== 'output_text')) return false;
  const parts = [...item.parts.values()];
  return parts.length > 0 && parts.every((p) => blank(p.delivered)) && parts.some((p) => p.delivered !== p.upstream);
}

/** A recovered call as a Responses `function_call` item (its item id stable for the same turn and call). */
function callItem(call: RepairedCall, ctx: TurnContext): Json {
  const id = `fc_${createHash('sha256').update(`${ctx.seed}\0${call.index}\0${call.id}`).digest('hex').slice(0, 32)}`;
  return { id, type: 'function_call', status: 'completed', arguments: call.arguments, call_id: call.id, name: call.name };
}

/**
 * The end of the response, by the rule Chat Completions repair applies to its finish reason (ChoiceRepair.finishReason):
 * a `completed` response whose truncated call was withheld becomes `failed` (never a success); an `incomplete` one
 * (`max_output_tokens`) whose leaked call was complete, and nothing withheld, becomes `completed`, as a Chat
 * `length` becomes `tool_calls`: the call is whole, and agents drop every item of an incomplete response (Codex
 * fails the turn with "Incomplete response returned"). Returns the status change to record, in Responses terms.
 */
function settle(repair: ChoiceRepair, response: Json, upstreamCalls: number): RepairRecord['finishReason'] {
  const status = response.status;
  const reason = response.incomplete_details?.reason;
  const upstream =
    status === 'completed'
      ? upstreamCalls > 0
        ? 'tool_calls'
        : 'stop'
      : status === 'incomplete'
        ? reason === 'max_output_tokens' || typeof reason !== 'string'
          ? 'length'
          : reason
        : status === 'failed'
          ? 'error'
          : undefined;
  if (upstream === undefined) return undefined;
  const wanted = repair.finishReason(upstream);
  if (wanted === upstream) return undefined;
  if (status === 'completed' && (wanted === 'error' || wanted === 'length')) {
    response.status = 'failed';
    response.error = { code: 'server_error', message: WITHHELD };
    return { upstream: 'completed', delivered: 'failed' };
  }
  if (status === 'incomplete' && wanted === 'tool_calls') {
    response.status = 'completed';
    response.incomplete_details = null;
    return { upstream: 'incomplete', delivered: 'completed' };
  }
  // A completed response that gets function_call items stays `completed`: its status already says so.
  return undefined;
}

/**
 * A whole Responses body: each message's `output_text` parts through the same channel as a stream, the recovered
 * calls as `function_call` items after their message, the status settled as for a stream. Re-serialized only when
 * something changed; otherwise the upstream's bytes are delivered as they are.
 */
export function repairResponsesBody(body: Buffer, turn: TurnContext): { bytes: Buffer; record?: RepairRecord } {
  const ctx = forProtocol(turn, 'openai-responses');
  let obj: Json;
  try {
    obj = JSON.parse(body.toString('utf8'));
  } catch {
    return { bytes: body };
  }
  if (!obj || typeof obj !== 'object' || obj.object !== 'response' || !Array.isArray(obj.output)) return { bytes: body };
  const repair = new ChoiceRepair(ctx);
  let upstreamCalls = 0;
  for (const item of obj.output as Json[]) if (item?.type === 'function_call') repair.sawStructuredCall(upstreamCalls++);
  let changed = false;
  const output: Json[] = [];
  for (const item of obj.output as Json[]) {
    output.push(item);
    if (item?.type !== 'message' || !Array.isArray(item.content)) continue;
    let touched = false;
    for (const part of item.content as Json[]) {
      if (part?.type !== 'output_text' || typeof part.text !== 'string' || part.text === '') continue;
      const out = repair.push('content', part.text) + repair.end('content');
      if (out !== part.text) (part.text = out.trim()), (changed = true), (touched = true);
    }
    // A message that held only markup is not delivered, as a stream drops it.
    if (touched && (item.content as Json[]).every((p) => p?.type === 'output_text' && blank(String(p.text ?? '')))) output.pop();
    for (const call of repair.take()) output.push(callItem(call, ctx)), (changed = true);
  }
  const finish = settle(repair, obj, upstreamCalls);
  if (!changed && !finish) return { bytes: body };
  obj.output = output;
  return { bytes: Buffer.from(JSON.stringify(obj)), record: repairRecord([repair], ctx, finish) };
}
