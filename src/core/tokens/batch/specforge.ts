/**
 * The training-data form SpecForge (sgl-project/SpecForge) reads for EAGLE-3 draft models, one JSON line per sample,
 * with the exact ids beside it.
 *
 * What SpecForge reads (sgl-project/SpecForge @ a6b6b0230009d15ec2a97a57384e6f53f0f96946):
 * - `scripts/prepare_data.py` writes the schema its training takes: `{"id": str, "conversations": [{"role",
 *   "content"}…]}`;
 * - `specforge/data/preprocessing.py` `build_eagle3_dataset` reads the `conversations` column, pops `id`, and reads
 *   an optional `tools` column (a JSON string or a list), passed to the chat template as `tools=`. Every other
 *   column is handed on to the template as a keyword argument (unused by the templates);
 * - `specforge/data/parse.py` keeps `role`, `content` and `tool_calls` of each message (`tool_calls[].function.
 *   arguments` as a string is parsed to an object), takes `tool` messages after an assistant turn, and produces
 *   `input_ids` with a `loss_mask` of 1 over the assistant's tokens, end-of-turn included.
 *
 * So `conversations` and `tools` are the request and the answer in that form, for SpecForge's own pipeline. And
 * `input_ids` / `loss_mask` are what that pipeline would produce, but exact: the prompt as the model's chat template
 * renders it, then the completion as the model emitted it, with 1 over the completion. Training can take them as
 * they are, rather than re-tokenizing text that may no longer spell the model's ids (reasoning encoded apart, the
 * end-of-turn id, markup returned as text). `reasoning_content` is kept on assistant turns for readers that use it;
 * SpecForge's parser drops it.
 */
import type { Tokenizer } from '../types';
import type { BatchSample } from './line';
import { generationPromptOverlap } from '../stream';

interface Turn {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: { id?: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface SpecforgeInput {
  line: number;
  sample: BatchSample;
  promptIds: number[];
  completionIds: number[];
  tokenizer: Pick<Tokenizer, 'specialName'>;
}

export function specforgeRecord(o: SpecforgeInput) {
  const { sample } = o;
  const m = sample.response.message;
  const answer: Turn = { role: 'assistant', content: m.content ?? '' };
  if (m.reasoning) answer.reasoning_content = m.reasoning;
  if (m.toolCalls.length) {
    answer.tool_calls = m.toolCalls.map((c) => ({
      ...(c.id ? { id: c.id } : {}),
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  const completion = o.completionIds.slice(generationPromptOverlap(o.promptIds, o.completionIds, o.tokenizer));
  const loss = new Array<number>(o.promptIds.length + completion.length);
  loss.fill(0, 0, o.promptIds.length).fill(1, o.promptIds.length);
  const tools = (sample.requestBody as { tools?: unknown } | undefined)?.tools;
  return {
    id: sample.id ?? `line-${o.line}`,
    conversations: [...historyTurns(sample.requestBody), answer],
    // A JSON string, as SpecForge's own generator writes it: one column type whatever each line's tool schemas are.
    ...(Array.isArray(tools) && tools.length ? { tools: JSON.stringify(tools) } : {}),
    input_ids: [...o.promptIds, ...completion],
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
  return content
    .map((p) =>
      typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '',
    )
    .join('');
}
