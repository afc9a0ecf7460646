/**
 * Repair of a whole (non-streamed) Chat Completions body: each choice's `message.content` and reasoning go through the
 * same channels as a stream would, in one piece. The body is re-serialized only when something changed; otherwise
 * the upstream's bytes are delivered as they are.
 */
import type { RepairRecord } from '../model';
import { ChoiceRepair, forProtocol, repairRecord, type TurnContext } from './turn';

/** A parsed provider body: its shape is checked field by field where it is read. */
// biome-ignore lint/suspicious/noExplicitAny: provider JSON is read defensively, field by field
export type Json = Record<string, any>;

export function repairJsonBody(body: Buffer, turn: TurnContext): { bytes: Buffer; record?: RepairRecord } {
  const ctx = forProtocol(turn, 'openai-chat');
  let obj: Json;
  try {
    obj = JSON.parse(body.toString('utf8'));
  } catch {
    return { bytes: body };
  }
  if (!obj || typeof obj !== 'object' || !Array.isArray(obj.choices)) return { bytes: body };
  const repairs: ChoiceRepair[] = [];
  let finish: RepairRecord['finishReason'];
  let changed = false;
  for (const c of obj.choices as Json[]) {
    const m: Json | undefined = c?.message && typeof c.message === 'object' ? c.message : undefined;
    if (!m) continue;
    const repair = new ChoiceRepair(ctx);
    repairs.push(repair);
    const existing: Json[] = Array.isArray(m.tool_calls) ? m.tool_calls : [];
    existing.forEach((_, i) => repair.sawStructuredCall(i));
    const one = (s: string, channel: 'content' | 'reasoning') => repair.push(channel, s) + repair.end(channel);
    if (typeof m.content === 'string' && m.content) {
      const out = one(m.content, 'content');
      if (out !== m.content) (m.content = out.trim() === '' ? null : out.trim()), (changed = true);
    }
    const key = typeof m.reasoning === 'string' ? 'reasoning' : typeof m.reasoning_content === 'string' ? 'reasoning_content' : undefined;
    if (key && m[key]) {
      const upstream: string = m[key];
      const out = one(upstream, 'reasoning');
      if (out !== upstream) {
        changed = true;
        m[key] = out.trim();
        if (key === 'reasoning' && m.reasoning_content === upstream) m.reasoning_content = m.reasoning;
        if (Array.isArray(m.reasoning_details) && m.reasoning_details.length === 1 && m.reasoning_details[0]?.text === upstream)
          m.reasoning_details[0].text = m[key];
      }
    }
    const calls = repair.take();
    if (calls.length > 0) {
      m.tool_calls = [
        ...existing,
        ...calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
      ];
      changed = true;
    }
    const delivered = repair.finishReason(c.finish_reason);
    if (delivered !== c.finish_reason) {
      finish = { upstream: c.finish_reason ?? null, delivered: delivered ?? null };
      c.finish_reason = delivered;
      changed = true;
    }
  }
  if (!changed) return { bytes: body };
  return { bytes: Buffer.from(JSON.stringify(obj)), record: repairRecord(repairs, ctx, finish) };
}
