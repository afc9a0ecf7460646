import type { Finding } from '../model';
import type { Check } from './types';
import { idList, requestHistory, type RequestHistory } from './request-history';

/** What each protocol's reference server answers (OpenAI, Anthropic), `{ids}` the ids, `{id}` the first. */
const ERRORS: Record<RequestHistory['protocol'], { unanswered: string; orphan: string }> = {
  'openai-chat': {
    unanswered:
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    orphan: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
  },
  'anthropic-messages': {
    unanswered:
      '`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    orphan:
      'unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
  },
  'openai-responses': {
    unanswered: 'No tool output found for function call {id}.',
    orphan: 'No tool call found for function call output with call_id {id}.',
  },
};

const WORDS: Record<RequestHistory['protocol'], { call: string; result: string }> = {
  'openai-chat': { call: 'tool call', result: 'tool message' },
  'anthropic-messages': { call: 'tool_use block', result: 'tool_result block' },
  'openai-responses': { call: 'function_call item', result: 'function_call_output item' },
};

/**
 * Every tool call in the history needs its result, and every result a call: agents that compact or trim a long
 * history cut between the two (itmisx/deepx-code#94), a crash leaves a call unanswered, a rewritten id orphans its
 * result. Providers refuse the whole request with a 400, turn after turn, until the history is fixed. Results whose
 * call is in a part of the conversation the server keeps (Responses `previous_response_id`) are not judged.
 */
const check: Check = {
  id: 'history-tool-result-missing',
  severity: 'error',
  title: 'Tool call without a result, or result without a call',
  why: 'Providers reject a history in which a tool call has no result, or a result answers no call, with a 400 on every later turn: the agent is stuck until the history is repaired.',
  run: (ctx) => {
    const h = requestHistory(ctx.request);
    if (!h) return [];
    const calls = h.turns.flatMap((t) => t.calls.filter((c) => c.id !== undefined).map((c) => ({ id: c.id!, at: c.at })));
    const results = h.turns.flatMap((t) => t.results.filter((r) => r.id !== undefined).map((r) => ({ id: r.id!, at: r.at })));
    const callIds = new Set(calls.map((c) => c.id));
    const resultIds = new Set(results.map((r) => r.id));
    const out: Finding[] = [];
    const words = WORDS[h.protocol];
    const error = (template: string, ids: string[]) => template.replace('{ids}', ids.join(', ')).replace('{id}', ids[0]);

    const flag = (items: { id: string; at: string }[], message: (ids: string[], n: number, first: string) => string) => {
      if (items.length === 0) return;
      const ids = items.map((x) => x.id);
      out.push({ rule: check.id, severity: check.severity, message: message(ids, ids.length, items[0].at), location: items[0].at });
    };

    flag(
      calls.filter((c) => !resultIds.has(c.id)),
      (ids, n, first) =>
        `${n} ${words.call}${n > 1 ? 's' : ''} in the request history ${n > 1 ? 'have' : 'has'} no result (${idList(ids)}, first at ${first}): providers answer 400 ("${error(ERRORS[h.protocol].unanswered, ids)}"). Send a result for every call, even one saying the tool did not run.`,
    );
    flag(
      h.partial ? [] : results.filter((r) => !callIds.has(r.id)),
      (ids, n, first) =>
        `${n} ${words.result}${n > 1 ? 's' : ''} in the request history answer${n > 1 ? '' : 's'} no call in it (${idList(ids)}, first at ${first}): providers answer 400 ("${error(ERRORS[h.protocol].orphan, ids)}"). The call was dropped (a trimmed or compacted history) or its id rewritten.`,
    );
    return out;
  },
};

export default check;
