import type { Finding } from '../model';
import type { Check } from './types';
import { parsedArguments } from './arguments';
import { leaks, structuralProblems } from './scan';

/**
 * finish_reason against what the turn holds. Decisions:
 * - `tool_calls` without any structured call: error (the agent waits for calls that never come; SGLang#23341).
 * - `stop` (or none) with tool-call markup leaked into content or reasoning: error (the classic lie: the agent ends
 *   the turn; NousResearch/hermes-agent#24534 promotes it to `tool_calls`).
 * - `length` while a call is open or its arguments are cut: error (raise max_tokens; the call is lost).
 * - structured calls with `stop`: info only. Several healthy providers send it, and OpenCode, the AI SDK and the
 *   OpenAI SDK run the calls whatever the finish reason; K2 Vendor Verifier and agents keyed on finish_reason do not.
 * - `length` otherwise: info (the answer is truncated, but nothing structural broke).
 */
const check: Check = {
  id: 'finish-reason-mismatch',
  severity: 'error',
  title: 'finish_reason contradicts the turn',
  why: 'Agents decide from finish_reason whether to run tools or end the turn: a finish reason that contradicts the calls stops the session or leaves it waiting.',
  run: (ctx) => {
    const r = ctx.response;
    if (!r?.finishReason) return [];
    const finish = r.finishReason;
    const said = r.nativeFinishReason && r.nativeFinishReason !== finish ? `${finish} (provider: ${r.nativeFinishReason})` : finish;
    const calls = ctx.message.toolCalls;
    const leaked = leaks(ctx);
    const leakedCalls = leaked.reduce((n, l) => n + l.parsed.message.toolCalls.length, 0);
    const regions = [...new Set(leaked.map((l) => l.region))].join(' and ');
    const found = (severity: Finding['severity'], message: string): Finding[] => [
      { rule: check.id, severity, message, location: 'finish_reason' },
    ];

    if (finish === 'tool_calls' && calls.length === 0) {
      return found(
        'error',
        leaked.length > 0
          ? `finish_reason is ${said} but no structured tool call arrived: the call${leakedCalls === 1 ? ' is' : 's are'} stuck as markup in ${regions}.`
          : `finish_reason is ${said} but the response holds no tool call: the agent waits for calls that do not exist.`,
      );
    }
    if ((finish === 'stop' || finish === 'end_turn') && calls.length === 0 && leaked.length > 0) {
      return found(
        'error',
        `finish_reason is ${said} although the model wrote tool-call markup in ${regions}` +
          `${leakedCalls > 0 ? ` (${leakedCalls} call${leakedCalls > 1 ? 's' : ''})` : ''}: the agent ends the turn as if the model were done.`,
      );
    }
    if (finish === 'length') {
      const open = structuralProblems(ctx).some(
        (p) => p.code === 'section-unclosed' || p.code === 'call-unclosed' || p.code === 'marker-truncated',
      );
      const args = parsedArguments(ctx);
      const lastCut = calls.length > 0 && !args[args.length - 1].ok;
      if (open || lastCut) {
        const which = lastCut ? ` (${calls[calls.length - 1].name || 'the last call'})` : '';
        return found(
          'error',
          `The response hit the output token limit in the middle of a tool call${which}: the call is lost; raise max_tokens.`,
        );
      }
      return found('info', 'The response stopped at the output token limit (finish_reason length); the answer is truncated.');
    }
    if (finish === 'stop' && calls.length > 0) {
      return found(
        'info',
        `${calls.length} tool call${calls.length > 1 ? 's' : ''} arrived with finish_reason ${said} instead of tool_calls; most agents run them anyway, but tools keyed on finish_reason (K2 Vendor Verifier) treat the turn as final.`,
      );
    }
    return [];
  },
};

export default check;
