import type { Finding } from '../model';
import type { Check, CheckContext } from './types';
import { getFamily } from '../families/index';
import type { HistoryFacts } from '../families/types';
import { modelKey } from '../families/shared/text';
import { requestHistory, thinkingParam, type HistoryTurn, type RequestHistory } from './request-history';

/** What the reasoning of an assistant turn is called in each protocol. */
const REASONING: Record<RequestHistory['protocol'], string> = {
  'openai-chat': 'reasoning_content',
  'anthropic-messages': 'thinking block',
  'openai-responses': 'reasoning item',
};

/**
 * Thinking models that called tools need their reasoning back in the history: Kimi K2 thinking and K2.5 ("thinking is
 * enabled but reasoning_content is missing in assistant tool call message at index N", mastra-ai/mastra#12592,
 * cloudwego/eino-ext#700), DeepSeek's thinking mode (anomalyco/opencode#9397), Anthropic's extended thinking for the
 * last assistant turn of a tool loop, OpenAI reasoning models for a `function_call` item sent with its id. Which
 * families demand it comes from the family module (`history`); the rule speaks only when the request shows thinking
 * is on (a parameter, the model's default, or other turns that carry reasoning), never on non-thinking use.
 */
const check: Check = {
  id: 'history-reasoning-missing',
  severity: 'error',
  title: 'Tool-call turn sent back without its reasoning',
  why: 'Thinking models need the reasoning of their earlier tool-call turns back in the history: providers refuse the request with a 400, or the model loses the thread of its own plan.',
  run: (ctx) => {
    const h = requestHistory(ctx.request);
    if (!h || !ctx.request) return [];
    const facts = familyFacts(ctx);
    const familyFinding = facts ? familyCheck(ctx, h, facts) : undefined;
    if (familyFinding) return [familyFinding];
    if (h.protocol === 'anthropic-messages') return anthropicCheck(ctx, h);
    if (h.protocol === 'openai-responses' && !facts) return responsesCheck(ctx, h);
    return [];
  },
};

/** The family's history facts, when they hold for the request's model. */
function familyFacts(ctx: CheckContext): HistoryFacts | undefined {
  if (!ctx.format) return undefined;
  let facts: HistoryFacts | undefined;
  try {
    facts = getFamily(ctx.format.id).history;
  } catch {
    return undefined;
  }
  if (!facts) return undefined;
  if (facts.models) {
    const model = modelOf(ctx);
    if (!model || !facts.models.test(modelKey(model))) return undefined;
  }
  return facts;
}

/** The model the request was for: the request's own id, else the one the response names. */
function modelOf(ctx: CheckContext): string | undefined {
  return ctx.request?.model ?? ctx.response?.model;
}

/** Whether thinking is on, and what shows it; undefined when nothing does. */
function thinkingOn(ctx: CheckContext, h: RequestHistory, facts?: HistoryFacts): string | undefined {
  const param = thinkingParam(ctx.request!);
  if (param) return param.on ? `the request sets ${param.how}` : undefined;
  const model = modelOf(ctx);
  if (model && facts?.thinksByDefault?.test(modelKey(model))) return `${model} thinks unless the request turns it off`;
  const n = h.turns.filter((t) => t.role === 'assistant' && t.reasoning).length;
  return n > 0 ? `${n} other assistant turn${n > 1 ? 's' : ''} carr${n > 1 ? 'y' : 'ies'} ${REASONING[h.protocol]}` : undefined;
}

function turnList(turns: HistoryTurn[]): string {
  return (
    turns
      .slice(0, 3)
      .map((t) => t.at)
      .join(', ') + (turns.length > 3 ? ', …' : '')
  );
}

/** The family's servers: every assistant turn that made tool calls needs its reasoning. */
function familyCheck(ctx: CheckContext, h: RequestHistory, facts: HistoryFacts): Finding | undefined {
  const missing = h.turns.filter((t) => t.role === 'assistant' && t.calls.length > 0 && !t.reasoning);
  if (missing.length === 0) return undefined;
  const why = thinkingOn(ctx, h, facts);
  if (!why) return undefined;
  const n = missing.length;
  const what = REASONING[h.protocol];
  return {
    rule: check.id,
    severity: check.severity,
    message: `${n} assistant turn${n > 1 ? 's' : ''} that made tool calls ${n > 1 ? 'are' : 'is'} sent back without ${n > 1 ? 'their' : 'its'} ${what} (${turnList(missing)}) while thinking is on (${why}): ${facts.api}'s API answers 400 ("${facts.error.replace('{index}', String(missing[0].index))}"), and servers that take the request show the model a history without its own plan. Send each tool-call turn's ${what} back as the model wrote it, or turn thinking off.`,
    location: missing[0].at,
  };
}

/** Anthropic extended thinking: the last assistant turn, when it made tool calls, must open with its thinking block. */
function anthropicCheck(ctx: CheckContext, h: RequestHistory): Finding[] {
  const param = thinkingParam(ctx.request!);
  if (!param?.on) return [];
  const last = [...h.turns].reverse().find((t) => t.role === 'assistant');
  if (!last || last.calls.length === 0 || last.firstBlock === 'thinking' || last.firstBlock === 'redacted_thinking') return [];
  return [
    {
      rule: check.id,
      severity: check.severity,
      message: `The last assistant turn (${last.at}) made tool calls but does not open with its thinking block while the request sets ${param.how}: Anthropic answers 400 ("messages.${last.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${last.firstBlock ?? 'nothing'}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block"). Send the thinking blocks back unchanged, signature included.`,
      location: `${last.at}.content[0]`,
    },
  ];
}

/** OpenAI reasoning models: a `function_call` item sent with its own id (`fc_…`) needs the reasoning item it came with. */
function responsesCheck(ctx: CheckContext, h: RequestHistory): Finding[] {
  const why = thinkingOn(ctx, h);
  if (!why) return [];
  const bare = h.turns
    .filter((t) => t.role === 'assistant' && !t.reasoning)
    .flatMap((t) => t.calls.filter((c) => c.itemId?.startsWith('fc_')));
  if (bare.length === 0) return [];
  const n = bare.length;
  return [
    {
      rule: check.id,
      severity: 'warning',
      message: `${n} function_call item${n > 1 ? 's' : ''} sent with ${n > 1 ? 'their' : 'its'} item id (${bare[0].itemId}${n > 1 ? ', …' : ''}, first at ${bare[0].at}) without the reasoning item of ${n > 1 ? 'their' : 'its'} turn while thinking is on (${why}): OpenAI answers 400 when that call came with reasoning ("Item '${bare[0].itemId}' of type 'function_call' was provided without its required 'reasoning' item"). Send the reasoning items back, or drop the item id and keep only call_id.`,
      location: bare[0].at,
    },
  ];
}

export default check;
