import { callMismatches, turnParse, type CallMismatch, type TurnParse } from '../parsed';
import type { Finding } from '../model';
import { segmentFor } from './scan';
import type { Check, CheckContext } from './types';

/**
 * What the provider returned as structured `tool_calls` differs from what a correct parser extracts from the text the
 * model wrote. The text is only known when the response carries it: per-token logprobs that spell the whole output
 * with its markers, or markup that leaked into content beside the structured calls. A response with neither is not
 * judged (parsed.ts says why), so a healthy structured response never reaches this rule with anything to compare.
 * vLLM #48020 (DeepSeek streaming drops a call whose begin and end land in one delta), SGLang PR #29947 (a split end
 * marker leaked into streamed arguments), anchors-2026.md §1.
 */
const check: Check = {
  id: 'provider-parse-mismatch',
  severity: 'error',
  title: "Provider's tool_calls differ from the model's output",
  why: "The provider's tool-call parser dropped a call, changed its arguments or invented one: the agent acts on calls the model did not make, or never runs one it did.",
  run: (ctx) => {
    const p = turnParse(ctx);
    return callMismatches(p).map((m) => finding(ctx, p, m));
  },
};

const FROM: Record<TurnParse['source'], string> = {
  raw: 'the model text',
  logprobs: 'the output its logprobs spell',
  reconstruction: 'the markup left in content',
};

function finding(ctx: CheckContext, p: TurnParse, m: CallMismatch): Finding {
  const parsed = m.parsedIndex === undefined ? undefined : p.calls[m.parsedIndex];
  const delivered = m.providerIndex === undefined ? undefined : p.providerCalls?.[m.providerIndex];
  const name = m.name || '(no name)';
  const from = FROM[p.source];
  let message: string;
  let range: { start?: number; end?: number } = {};
  let location = 'tool_calls';
  switch (m.kind) {
    case 'dropped':
      message = `The model wrote a complete call to ${name} (${short(parsed?.arguments ?? '')}), found in ${from}, but the provider's tool_calls do not hold it: the agent never runs it.`;
      if (parsed && parsed.start !== null && parsed.end !== null) range = { start: parsed.start, end: parsed.end };
      break;
    case 'arguments-changed':
      message = `Call ${m.providerIndex} (${name}) arrived with arguments ${short(delivered?.arguments ?? '')}, but the model wrote ${short(parsed?.arguments ?? '')} (in ${from}): the provider changed them, and the agent runs the call with values the model did not choose.`;
      location = `tool_calls[${m.providerIndex}].arguments`;
      range = segmentRange(ctx, 'arguments', m.providerIndex);
      break;
    case 'not-in-text':
      message = `Call ${m.providerIndex} (${name}) is in the provider's tool_calls, but ${from} holds no such call: the agent runs a call the model did not make.`;
      location = `tool_calls[${m.providerIndex}]`;
      range = segmentRange(ctx, 'call', m.providerIndex);
      break;
  }
  return { rule: check.id, severity: check.severity, message, location, ...range };
}

function segmentRange(ctx: CheckContext, kind: 'call' | 'arguments', index: number | undefined): { start?: number; end?: number } {
  const seg = index === undefined ? undefined : segmentFor(ctx, kind, index);
  return seg ? { start: seg.start, end: seg.end } : {};
}

/** Arguments for a message: cut to `max` characters, on one line, in backticks. */
function short(s: string, max = 80): string {
  const one = s.replace(/\s*\n\s*/g, ' ');
  return `\`${one.length > max ? `${one.slice(0, max - 1)}…` : one}\``;
}

export default check;
