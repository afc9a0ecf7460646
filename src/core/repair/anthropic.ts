/**
 * Repair of Anthropic Messages responses (`POST /v1/messages`), streamed (SSE) and whole.
 *
 * Text blocks go through the turn's content channel (./turn.ts, as Chat Completions content does); a complete call
 * recovered from their markup is delivered as a `tool_use` block of its own (`content_block_start` with
 * `input: {}`, one `input_json_delta`, `content_block_stop`) right after the text block it came from, and the turn's
 * `stop_reason` becomes `tool_use`. Thinking blocks, the upstream's own `tool_use` blocks and every other event pass
 * as they came; only their `index` changes when blocks before them were added or dropped, so the delivered indexes
 * stay consecutive.
 *
 * A text block whose text is all markup (or only whitespace once the markup is gone) is not delivered: Anthropic's
 * API refuses such a block when the agent sends the turn back. So a text block's `content_block_start` waits until
 * the block has text to show; a block that turns out untouched goes out byte for byte.
 *
 * A truncated call is never delivered as a `tool_use` block. With `withhold`, the turn fails as Anthropic fails a
 * turn: a stream ends with an `error` event in place of `message_delta`/`message_stop`, a whole body becomes an
 * error object; when the upstream already said the turn was cut short (`max_tokens`), its stop reason stays.
 * With `passthrough`, the markup stays in the text and the stop reason is the upstream's.
 */
import type { RepairRecord } from '../model';
import type { RepairedCall } from './calls';
import { EventFramer, openerTest, splitEvents, type SseEvent } from './events';
import { ChoiceRepair, forProtocol, repairRecord, type TurnContext } from './turn';
import type { Json } from './json';

/** Stop reasons that already tell the agent its turn was cut short: a withheld call keeps them. */
const CUT_SHORT = new Set(['max_tokens', 'model_context_window_exceeded']);

function withheldMessage(repair: ChoiceRepair): string {
  const cut = repair.record.filter((c) => c.status === 'withheld');
  const what = cut.map((c) => `${c.name || '(no name)'}${c.note ? `: ${c.note}` : ''}`).join('; ');
  return `The model's tool call was cut short and was not delivered (Tokenscope repair mode): ${what}`;
}

function errorObject(repair: ChoiceRepair): Json {
  return { type: 'error', error: { type: 'api_error', message: withheldMessage(repair) } };
}

function toolUse(call: RepairedCall): Json {
  return { type: 'tool_use', id: call.id, name: call.name, input: {} };
}

/** One event as Anthropic streams it: its `event:` line and its data. */
function ser(obj: Json, eol: string): string {
  return `event: ${obj.type}${eol}data: ${JSON.stringify(obj)}${eol}${eol}`;
}

/** An upstream event with new data, keeping its own other lines (`event:`, `id:`). */
function reser(ev: SseEvent, obj: Json): string {
  return [...ev.others, `data: ${JSON.stringify(obj)}`].join(ev.eol) + ev.eol + ev.eol;
}

/** Whitespace-only (or empty) text: not a text block Anthropic accepts back. */
const blank = (s: string) => !/\S/.test(s);

/** A held event: as it came, and parsed. */
interface Held {
  ev: SseEvent;
  obj: Json;
}

/** The upstream text block in progress, delivered as one or more stretches (split where recovered calls go). */
interface TextBlock {
  upstream: number;
  /** The delivered index of the current stretch; undefined while its start waits for text to show. */
  index?: number;
  /** The block's `content_block_start` object (its other fields are kept when a stretch starts). */
  block: Json;
  /** While the start waits and nothing was rewritten: the events as they came (start and deltas). */
  held: Held[];
  /** While the start waits: the text to deliver once it starts. */
  heldText: string;
  /** Some text of the block was held back or rewritten: its start and deltas are written anew. */
  changed: boolean;
}

export class AnthropicSseRepair {
  private readonly framer = new EventFramer();
  private readonly repair: ChoiceRepair;
  private readonly mayOpen: (latin1: string) => boolean;
  /** Delivered index of each upstream block other than text blocks. */
  private readonly indexes = new Map<number, number>();
  /** The next delivered block index. */
  private next = 0;
  /** Set once a delivered index differs from the upstream's: every indexed event is then read. */
  private shifted = false;
  private text: TextBlock | undefined;
  /** The upstream's own tool_use blocks so far (recovered calls are numbered after them). */
  private toolUses = 0;
  private eol = '\n';
  private finish: RepairRecord['finishReason'];
  /** The stream was failed with an error event (a withheld call): its message_stop is not delivered. */
  private failed = false;

  private readonly ctx: TurnContext;

  constructor(ctx: TurnContext) {
    this.ctx = forProtocol(ctx, 'anthropic-messages');
    this.repair = new ChoiceRepair(this.ctx);
    this.mayOpen = openerTest(ctx.openers);
  }

  /** The bytes to send for one upstream read. */
  push(chunk: Buffer): Buffer {
    const events = this.framer.push(chunk);
    if (events.length === 0) return events;
    const latin1 = events.toString('latin1');
    // Text deltas of a text block already delivered as it came, with nothing that could open markup, pass unread.
    const quiet = !this.shifted && this.repair.idle && !(this.text && this.text.index === undefined);
    if (quiet && !latin1.includes('content_block_st') && !latin1.includes('message_') && !this.mayOpen(latin1)) return events;
    let out = '';
    for (const ev of splitEvents(events.toString('utf8'))) out += this.event(ev);
    return Buffer.from(out);
  }

  /** The rest at the end of the body: a text block the stream left open, then any unfinished event. */
  end(): Buffer {
    const rest = this.text ? this.closeText(undefined) : '';
    const tail = this.framer.end();
    return rest ? Buffer.concat([Buffer.from(rest), tail]) : tail;
  }

  /** What was rewritten (undefined when the delivered stream is the upstream's). */
  record(): RepairRecord | undefined {
    return repairRecord([this.repair], this.ctx, this.finish);
  }

  private event(ev: SseEvent): string {
    let obj: Json | undefined;
    try {
      obj = ev.data === undefined ? undefined : JSON.parse(ev.data);
    } catch {
      obj = undefined;
    }
    if (!obj || typeof obj !== 'object' || typeof obj.type !== 'string') return this.other(ev);
    this.eol = ev.eol;
    const t = this.text;
    switch (obj.type) {
      case 'content_block_start': {
        const block: Json = obj.content_block && typeof obj.content_block === 'object' ? obj.content_block : {};
        const close = t ? this.closeText(undefined) : '';
        if (block.type === 'text' && typeof obj.index === 'number') {
          this.text = { upstream: obj.index, block, held: [{ ev, obj }], heldText: '', changed: false };
          // A start that carries text (Anthropic's is always empty) runs through the channel like a delta.
          return close + (typeof block.text === 'string' && block.text !== '' ? this.textIn(this.text, block.text, undefined) : '');
        }
        if (block.type === 'tool_use') this.repair.sawStructuredCall(this.toolUses++);
        const index = this.next++;
        if (typeof obj.index === 'number') this.indexes.set(obj.index, index);
        return close + this.indexed(ev, obj, index);
      }
      case 'content_block_delta':
        if (t && obj.index === t.upstream) {
          if (obj.delta?.type === 'text_delta' && typeof obj.delta.text === 'string') return this.textIn(t, obj.delta.text, { ev, obj });
          // A citation or other delta of the text block: the block starts as it is.
          return this.open(t) + this.indexed(ev, obj, t.index!);
        }
        return this.indexed(ev, obj, this.indexes.get(obj.index));
      case 'content_block_stop':
        if (t && obj.index === t.upstream) return this.closeText({ ev, obj });
        return this.indexed(ev, obj, this.indexes.get(obj.index));
      case 'message_delta':
        return (t ? this.closeText(undefined) : '') + this.stopReason(ev, obj);
      case 'message_stop':
        if (this.failed) return '';
        return (t ? this.closeText(undefined) : '') + ev.raw;
      case 'error':
        return (t ? this.closeText(undefined) : '') + ev.raw;
      default:
        return this.other(ev);
    }
  }

  /** An event that is not part of a block (ping, unknown types): a waiting text block starts first, keeping the order. */
  private other(ev: SseEvent): string {
    const t = this.text;
    return (t && t.index === undefined && !t.changed ? this.open(t) : '') + ev.raw;
  }

  /** An event of a block delivered at `index`: as it came when the index is the upstream's. */
  private indexed(ev: SseEvent, obj: Json, index: number | undefined): string {
    if (index === undefined || index === obj.index) return ev.raw;
    this.shifted = true;
    return reser(ev, { ...obj, index });
  }

  /** Text of the open text block from the upstream (`src`: the delta event, undefined for a start's text). */
  private textIn(t: TextBlock, text: string, src: Held | undefined): string {
    const out = this.repair.push('content', text);
    const calls = this.repair.take();
    if (out !== text) t.changed = true;
    let res = '';
    if (t.index === undefined) {
      t.heldText += out;
      if (src && !t.changed) t.held.push(src);
      if (!blank(t.heldText)) res += this.open(t);
    } else if (src && out === text && t.index === t.upstream) {
      res += src.ev.raw;
    } else if (out !== '') {
      res += this.delta(t.index, out, src);
    }
    if (calls.length > 0) {
      // The markup closed inside the block: this stretch ends, the calls follow it, later text starts a new one.
      res += this.endStretch(t) + this.calls(calls);
      t.index = undefined;
      t.held = [];
      t.heldText = '';
      t.changed = true;
    }
    return res;
  }

  private delta(index: number, text: string, src: Held | undefined): string {
    const obj = { type: 'content_block_delta', index, delta: { type: 'text_delta', text } };
    return src ? reser(src.ev, { ...src.obj, index, delta: { ...src.obj.delta, text } }) : ser(obj, this.eol);
  }

  /** Starts the waiting stretch: the held events as they came (reindexed if need be), or a new start and its text. */
  private open(t: TextBlock): string {
    if (t.index !== undefined) return '';
    const index = (t.index = this.next++);
    if (index !== t.upstream) this.shifted = true;
    let res: string;
    if (!t.changed) {
      res = t.held.map((h) => this.indexed(h.ev, h.obj, index)).join('');
    } else {
      res = ser({ type: 'content_block_start', index, content_block: { ...t.block, text: '' } }, this.eol);
      if (t.heldText !== '') res += this.delta(index, t.heldText, undefined);
    }
    t.held = [];
    t.heldText = '';
    return res;
  }

  /** The end of the current stretch: its stop, or nothing when it never started (repair left it no text to show). */
  private endStretch(t: TextBlock): string {
    return t.index === undefined ? '' : ser({ type: 'content_block_stop', index: t.index }, this.eol);
  }

  /** The open text block ends (its stop, or the stream moved on without one): held text and calls are delivered. */
  private closeText(stop: Held | undefined): string {
    const t = this.text!;
    this.text = undefined;
    const rest = this.repair.end('content');
    const calls = this.repair.take();
    let res = '';
    if (rest !== '') {
      if (t.index === undefined) {
        t.heldText += rest;
        t.changed = true;
      } else res += this.delta(t.index, rest, undefined);
    }
    if (t.index === undefined && (!t.changed || !blank(t.heldText))) res += this.open(t);
    if (t.index !== undefined) res += stop ? this.indexed(stop.ev, stop.obj, t.index) : this.endStretch(t);
    return res + this.calls(calls);
  }

  /** Recovered calls as tool_use blocks, each started with an empty input, its JSON in one delta, and stopped. */
  private calls(calls: RepairedCall[]): string {
    let res = '';
    for (const call of calls) {
      const index = this.next++;
      this.shifted = true;
      res += ser({ type: 'content_block_start', index, content_block: toolUse(call) }, this.eol);
      res += ser({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.arguments } }, this.eol);
      res += ser({ type: 'content_block_stop', index }, this.eol);
    }
    return res;
  }

  /** message_delta: `tool_use` once calls were delivered; a withheld call fails the turn (see the header). */
  private stopReason(ev: SseEvent, obj: Json): string {
    const delta: Json = obj.delta && typeof obj.delta === 'object' ? obj.delta : {};
    const upstream: string | null = typeof delta.stop_reason === 'string' ? delta.stop_reason : null;
    const outcome = this.repair.outcome;
    this.repair.finished = true;
    if (outcome === 'calls' && upstream !== 'tool_use') {
      this.finish = { upstream, delivered: 'tool_use' };
      return reser(ev, { ...obj, delta: { ...delta, stop_reason: 'tool_use' } });
    }
    if (outcome === 'withheld' && !(upstream && CUT_SHORT.has(upstream))) {
      this.finish = { upstream, delivered: 'error' };
      this.failed = true;
      return ser(errorObject(this.repair), ev.eol);
    }
    return ev.raw;
  }
}

/** Repair of a whole Anthropic Messages body (`type: "message"`); its bytes are kept when nothing changed. */
export function repairAnthropicBody(body: Buffer, turn: TurnContext): { bytes: Buffer; record?: RepairRecord } {
  const ctx = forProtocol(turn, 'anthropic-messages');
  let obj: Json;
  try {
    obj = JSON.parse(body.toString('utf8'));
  } catch {
    return { bytes: body };
  }
  if (!obj || typeof obj !== 'object' || obj.type !== 'message' || !Array.isArray(obj.content)) return { bytes: body };
  const repair = new ChoiceRepair(ctx);
  const content: Json[] = [];
  let changed = false;
  let toolUses = 0;
  for (const block of obj.content as Json[]) {
    if (block?.type === 'tool_use') repair.sawStructuredCall(toolUses++);
    if (block?.type !== 'text' || typeof block.text !== 'string' || block.text === '') {
      content.push(block);
      continue;
    }
    const out = repair.push('content', block.text) + repair.end('content');
    const calls = repair.take();
    if (out === block.text && calls.length === 0) {
      content.push(block);
      continue;
    }
    changed = true;
    if (!blank(out)) content.push({ ...block, text: out.trim() });
    for (const call of calls) content.push({ ...toolUse(call), input: JSON.parse(call.arguments) });
  }
  if (!changed) return { bytes: body };
  const upstream: string | null = typeof obj.stop_reason === 'string' ? obj.stop_reason : null;
  let finish: RepairRecord['finishReason'];
  let delivered: Json = { ...obj, content };
  if (repair.outcome === 'calls' && upstream !== 'tool_use') {
    finish = { upstream, delivered: 'tool_use' };
    delivered.stop_reason = 'tool_use';
  } else if (repair.outcome === 'withheld' && !(upstream && CUT_SHORT.has(upstream))) {
    finish = { upstream, delivered: 'error' };
    delivered = errorObject(repair);
  }
  return { bytes: Buffer.from(JSON.stringify(delivered)), record: repairRecord([repair], ctx, finish) };
}
