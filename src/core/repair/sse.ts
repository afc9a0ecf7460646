/**
 * Repair of a streamed Chat Completions response (SSE), event by event.
 *
 * Bytes are forwarded as whole SSE events, in the tick they arrive: only the unfinished event at the end of a read
 * waits for its rest (no SSE client can act on half an event anyway). An event passes byte for byte unless it
 * carries text a choice must hold back or rewrite; then it is re-serialized with the text to deliver now, followed by
 * the recovered calls as proper `tool_calls` deltas (id, name, then arguments). The finish event gets the finish
 * reason a correct server would send, after the held text and calls are flushed.
 * Fast path: a read with no `<` (every opener starts with one) and no structured `tool_calls`, while no choice holds
 * anything, is forwarded without parsing.
 */
import type { RepairedCall } from './calls';
import { lastBoundary, openerTest } from './events';
import { ChoiceRepair, forProtocol, repairRecord, type TurnContext } from './turn';
import type { RepairRecord } from '../model';
import type { Json } from './json';

export class SseRepair {
  private tail: Buffer = Buffer.alloc(0);
  private readonly choices = new Map<number, ChoiceRepair>();
  /** Envelope fields of the last chunk (`id`, `model`, `provider`…), for the events repair writes itself. */
  private envelope: Json = { object: 'chat.completion.chunk' };
  private eol = '\n';
  private finish: RepairRecord['finishReason'];
  private done = false;

  /** Tests a read for a character that could begin an opener: one that fails it cannot start markup. */
  private readonly mayOpen: (latin1: string) => boolean;

  private readonly ctx: TurnContext;

  constructor(ctx: TurnContext) {
    this.ctx = forProtocol(ctx, 'openai-chat');
    this.mayOpen = openerTest(ctx.openers);
  }

  /** The bytes to send for one upstream read. */
  push(chunk: Buffer): Buffer {
    const data = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const cut = lastBoundary(data);
    this.tail = cut === data.length ? Buffer.alloc(0) : Buffer.from(data.subarray(cut));
    if (cut === 0) return Buffer.alloc(0);
    const events = data.subarray(0, cut);
    if (this.allIdle() && !events.includes('"tool_calls"') && !this.mayOpen(events.toString('latin1'))) return events;
    return this.rewrite(events.toString('utf8'));
  }

  /** The rest at the end of the body: text still held (the stream ended without a finish event) and any unfinished event. */
  end(): Buffer {
    const rest = this.done ? '' : this.flushUnfinished();
    const tail = this.tail;
    this.tail = Buffer.alloc(0);
    return rest ? Buffer.concat([Buffer.from(rest), tail]) : tail;
  }

  /** What was rewritten (undefined when the delivered stream is the upstream's). */
  record(): RepairRecord | undefined {
    return repairRecord(this.choices.values(), this.ctx, this.finish);
  }

  private allIdle(): boolean {
    for (const c of this.choices.values()) if (!c.quiet) return false;
    return true;
  }

  private choice(index: number): ChoiceRepair {
    let c = this.choices.get(index);
    if (!c) this.choices.set(index, (c = new ChoiceRepair(this.ctx)));
    return c;
  }

  private rewrite(text: string): Buffer {
    let out = '';
    // Split keeping each event's own separator, so untouched events go out exactly as they came.
    const re = /\r\n\r\n|\n\n/g;
    let from = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const raw = text.slice(from, m.index + m[0].length);
      from = m.index + m[0].length;
      out += this.event(raw, m[0] === '\r\n\r\n' ? '\r\n' : '\n');
    }
    return Buffer.from(out);
  }

  private event(raw: string, eol: string): string {
    const lines = raw.slice(0, raw.length - 2 * eol.length).split(eol);
    const dataLines = lines.filter((l) => l.startsWith('data:'));
    if (dataLines.length === 0) return raw;
    const data = dataLines.map((l) => l.slice(l.startsWith('data: ') ? 6 : 5)).join('\n');
    if (data.trim() === '[DONE]') return this.flushUnfinished() + raw;
    let obj: Json;
    try {
      obj = JSON.parse(data);
    } catch {
      return raw;
    }
    if (!obj || typeof obj !== 'object' || !Array.isArray(obj.choices)) return raw;
    this.eol = eol;
    this.envelope = envelopeOf(obj);
    const before: Json[] = [];
    const after: Json[] = [];
    let changed = false;
    for (const c of obj.choices as Json[]) {
      const index = typeof c?.index === 'number' ? c.index : 0;
      const repair = this.choice(index);
      const d: Json = c.delta && typeof c.delta === 'object' ? c.delta : {};
      if (Array.isArray(d.tool_calls)) for (const t of d.tool_calls) if (typeof t?.index === 'number') repair.sawStructuredCall(t.index);
      changed = deliverText(repair, d, (channel, s) => repair.push(channel, s)) || changed;
      if (c.finish_reason != null) {
        changed = flushChoice(repair, d, c) || changed;
        before.push(...callEvents(this.envelope, index, repair.take()));
        repair.finished = true;
        const delivered = repair.finishReason(c.finish_reason);
        if (delivered !== c.finish_reason) {
          this.finish = { upstream: c.finish_reason, delivered: delivered ?? null };
          c.finish_reason = delivered;
          changed = true;
        }
      } else {
        after.push(...callEvents(this.envelope, index, repair.take()));
      }
    }
    if (!changed && before.length === 0 && after.length === 0) return raw;
    const others = lines.filter((l) => !l.startsWith('data:'));
    const ser = (o: Json, keep: string[]) => [...keep, `data: ${JSON.stringify(o)}`].join(eol) + eol + eol;
    return before.map((o) => ser(o, [])).join('') + ser(obj, others) + after.map((o) => ser(o, [])).join('');
  }

  /** The stream ended ([DONE] or end of body) with no finish event for some choice: release what is held, as it came. */
  private flushUnfinished(): string {
    this.done = true;
    let out = '';
    for (const [index, repair] of this.choices) {
      if (repair.idle) continue;
      const delta: Json = {};
      const content = repair.end('content');
      const reasoning = repair.end('reasoning');
      if (content) delta.content = content;
      if (reasoning) delta.reasoning = reasoning;
      const events = callEvents(this.envelope, index, repair.take());
      if (content || reasoning) events.unshift({ ...this.envelope, choices: [{ index, delta, finish_reason: null }] });
      for (const o of events) out += `data: ${JSON.stringify(o)}${this.eol}${this.eol}`;
    }
    return out;
  }
}

function envelopeOf(obj: Json): Json {
  const env: Json = {};
  for (const k of ['id', 'provider', 'model', 'object', 'created', 'system_fingerprint']) if (obj[k] !== undefined) env[k] = obj[k];
  return env;
}

/** Runs the delta's content and reasoning through `step`; true when what is delivered differs. */
function deliverText(repair: ChoiceRepair, d: Json, step: (channel: 'content' | 'reasoning', s: string) => string): boolean {
  let changed = false;
  if (typeof d.content === 'string' && d.content !== '') {
    const out = step('content', d.content);
    if (out !== d.content) (d.content = out), (changed = true);
  }
  const key = typeof d.reasoning === 'string' ? 'reasoning' : typeof d.reasoning_content === 'string' ? 'reasoning_content' : undefined;
  if (key && d[key] !== '') {
    const upstream: string = d[key];
    const out = step('reasoning', upstream);
    if (out !== upstream) {
      changed = true;
      d[key] = out;
      // Some upstreams send the same text under both names, and OpenRouter repeats it in reasoning_details.
      if (key === 'reasoning' && d.reasoning_content === upstream) d.reasoning_content = out;
      if (Array.isArray(d.reasoning_details) && d.reasoning_details.length === 1 && d.reasoning_details[0]?.text === upstream)
        d.reasoning_details[0].text = out;
    }
  }
  return changed;
}

/** At the finish event: the held rest of both channels joins its delta. */
function flushChoice(repair: ChoiceRepair, d: Json, c: Json): boolean {
  const content = repair.end('content');
  const reasoning = repair.end('reasoning');
  if (!content && !reasoning) return false;
  if (!c.delta || typeof c.delta !== 'object') c.delta = d;
  if (content) d.content = (typeof d.content === 'string' ? d.content : '') + content;
  if (reasoning) d.reasoning = (typeof d.reasoning === 'string' ? d.reasoning : '') + reasoning;
  return true;
}

/** Two deltas per call, as servers stream them: id, type and name first, then the arguments. */
function callEvents(envelope: Json, index: number, calls: RepairedCall[]): Json[] {
  const out: Json[] = [];
  for (const call of calls) {
    out.push({
      ...envelope,
      choices: [
        {
          index,
          delta: {
            role: 'assistant',
            content: null,
            tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
          },
          finish_reason: null,
        },
      ],
    });
    out.push({
      ...envelope,
      choices: [{ index, delta: { tool_calls: [{ index: call.index, function: { arguments: call.arguments } }] }, finish_reason: null }],
    });
  }
  return out;
}
