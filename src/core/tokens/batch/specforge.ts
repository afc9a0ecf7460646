/**
 * The training-data form SpecForge (sgl-project/SpecForge) reads for EAGLE-3 draft models: one JSON line per sample,
 * `{"id", "conversations": [{"role", "content"}…]}`, here with the exact ids beside it: `input_ids` (the prompt as
 * the model's chat template renders it, then the completion as the model emitted it) and `loss_mask` (0 over the
 * prompt, 1 over the completion), so training does not re-tokenize text that no longer spells the model's ids.
 */
import type { BatchSample } from './line';

interface Turn {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: { id?: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export function specforgeRecord(o: { line: number; sample: BatchSample; promptIds: number[]; completionIds: number[] }) {
  const { sample } = o;
  const m = sample.response.message;
  const answer: Turn = { role: 'assistant', content: m.content ?? '' };
  if (m.reasoning) answer.reasoning_content = m.reasoning;
  if (m.toolCalls.length) {
    answer.tool_calls = m.toolCalls.map((c) => ({ ...(c.id ? { id: c.id } : {}), type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  const loss = new Array<number>(o.promptIds.length + o.completionIds.length);
  loss.fill(0, 0, o.promptIds.length).fill(1, o.promptIds.length);
  return {
    id: sample.id ?? `line-${o.line}`,
    conversations: [...historyTurns(sample.requestBody), answer],
    input_ids: [...o.promptIds, ...o.completionIds],
    loss_mask: loss,
  };
}

/** The request's messages as conversation turns; content parts are joined into their text. */
function historyTurns(body: unknown): Turn[] {
  const messages = (body as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((raw): Turn[] => {
    if (typeof raw !== 'object' || raw === null) return [];
    const msg = raw as Record<string, unknown>;
    const turn: Turn = { role: typeof msg.role === 'string' ? msg.role : 'user', content: textOf(msg.content) };
    if (typeof msg.reasoning_content === 'string') turn.reasoning_content = msg.reasoning_content;
    if (Array.isArray(msg.tool_calls)) turn.tool_calls = msg.tool_calls as Turn['tool_calls'];
    if (typeof msg.tool_call_id === 'string') turn.tool_call_id = msg.tool_call_id;
    return [turn];
  });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
}
