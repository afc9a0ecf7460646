/** Helpers for the repair tests: streams built from deltas, a stage fed in pieces, and what a client accumulates. */
import { getFormat } from '../../../src/core/families/index';
import type { FamilyId, ToolDef } from '../../../src/core/model';
import { SseRepair } from '../../../src/core/repair/sse';
import { turnContext, type TruncatedMode, type TurnContext } from '../../../src/core/repair/turn';

export const READ: ToolDef = { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };
export const WRITE: ToolDef = {
  name: 'write',
  parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
};

export function ctxFor(
  family: FamilyId | undefined,
  opts: { truncated?: TruncatedMode; tools?: ToolDef[]; historyCalls?: number } = {},
): TurnContext {
  return turnContext(
    family ? getFormat(family) : undefined,
    { tools: opts.tools ?? [READ, WRITE], historyCalls: opts.historyCalls ?? 0, seed: 'seed' },
    opts.truncated ?? 'withhold',
  );
}

type Delta = { content?: string | null; reasoning?: string; tool_calls?: unknown[] };

/** An OpenRouter-shaped stream: a comment, one chunk per delta, the finish chunk, a usage chunk and [DONE]. */
export function stream(deltas: Delta[], finish = 'stop'): string {
  const chunk = (choices: unknown[]) =>
    `data: ${JSON.stringify({ id: 'gen-1', provider: 'Chutes', model: 'm', object: 'chat.completion.chunk', created: 1, choices })}\n\n`;
  return (
    ': OPENROUTER PROCESSING\n\n' +
    deltas.map((d) => chunk([{ index: 0, delta: { role: 'assistant', ...d }, finish_reason: null }])).join('') +
    chunk([{ index: 0, delta: { content: '' }, finish_reason: finish }]) +
    `data: ${JSON.stringify({ id: 'gen-1', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } })}\n\n` +
    'data: [DONE]\n\n'
  );
}

/** Feeds `pieces` through a fresh stage; returns every output piece (one per input piece, then the end). */
export function feed(ctx: TurnContext, pieces: (string | Uint8Array)[]): { outs: Buffer[]; text: string; repair: SseRepair } {
  const repair = new SseRepair(ctx);
  const outs = pieces.map((p) => repair.push(Buffer.from(p)));
  outs.push(repair.end());
  return { outs, text: Buffer.concat(outs).toString('utf8'), repair };
}

export interface ClientView {
  content: string;
  reasoning: string;
  calls: { index: number; id?: string; name: string; arguments: string }[];
  finish?: string | null;
  /** Every delta carrying a tool call, in order (to check id/name before arguments). */
  callDeltas: any[];
}

/** What an OpenAI-style client accumulates from an SSE text. */
export function clientView(sse: string): ClientView {
  const v: ClientView = { content: '', reasoning: '', calls: [], callDeltas: [] };
  for (const block of sse.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (!data || data === '[DONE]') continue;
    const obj = JSON.parse(data);
    for (const c of obj.choices ?? []) {
      const d = c.delta ?? {};
      if (typeof d.content === 'string') v.content += d.content;
      if (typeof d.reasoning === 'string') v.reasoning += d.reasoning;
      for (const t of d.tool_calls ?? []) {
        v.callDeltas.push(t);
        let call = v.calls.find((x) => x.index === t.index);
        if (!call) v.calls.push((call = { index: t.index, name: '', arguments: '' }));
        if (t.id) call.id = t.id;
        if (t.function?.name) call.name += t.function.name;
        if (t.function?.arguments) call.arguments += t.function.arguments;
      }
      if (c.finish_reason != null) v.finish = c.finish_reason;
    }
  }
  return v;
}

/** `text` cut into pieces of `n` characters. */
export function pieces(text: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
  return out;
}
