import type { Finding } from '../model';
import type { Check } from './types';
import { requestHistory, type HistoryTurn, type RequestHistory } from './request-history';

/** How a result is out of place. */
type Kind = 'separated' | 'before-call' | 'not-next' | 'not-first';

interface Issue {
  kind: Kind;
  id: string;
  callAt: string;
  resultAt: string;
  /** `separated`: the message that comes between the call and its result. */
  between?: HistoryTurn;
}

const CHAT_ERROR = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'";

/** What providers answer, per protocol and kind (DeepSeek, OpenAI, Anthropic wording). */
function providerError(protocol: RequestHistory['protocol'], kind: Kind, issues: Issue[]): string {
  if (protocol === 'anthropic-messages') {
    if (kind === 'not-first') {
      return `Did not find ${issues.length} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`;
    }
    return `\`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${issues.map((i) => i.id).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  if (protocol === 'openai-responses' && kind === 'before-call')
    return `No tool call found for function call output with call_id ${issues[0].id}.`;
  return CHAT_ERROR;
}

/**
 * A tool result must come right after the assistant turn that made the call: in Chat Completions the tool messages
 * follow the assistant message with `tool_calls` before any other message (DeepSeek, OpenAI and most OpenAI-compatible
 * servers refuse anything else with a 400); in Anthropic Messages the `tool_result` blocks open the very next user
 * message. Parallel calls answered in any order, and Responses' call/output pairs interleaved, are fine.
 */
const check: Check = {
  id: 'history-tool-order',
  severity: 'error',
  title: 'Tool results out of order in the history',
  why: 'A tool result that does not directly follow the turn that made the call (a user message between them, a result before its call) makes providers refuse the request with a 400 on every later turn.',
  run: (ctx) => {
    const h = requestHistory(ctx.request);
    if (!h) return [];
    const issues = h.protocol === 'anthropic-messages' ? anthropicIssues(h) : flatIssues(h);
    const byKind = new Map<Kind, Issue[]>();
    for (const i of issues) byKind.set(i.kind, [...(byKind.get(i.kind) ?? []), i]);
    const out: Finding[] = [];
    for (const [kind, list] of byKind) {
      const first = list[0];
      const more = list.length > 1 ? ` (and ${list.length - 1} more result${list.length > 2 ? 's' : ''} out of place)` : '';
      // The Responses API pairs items by call_id; servers that read them as chat messages are the ones that refuse.
      const severity = h.protocol === 'openai-responses' && kind === 'separated' ? 'warning' : 'error';
      out.push({
        rule: check.id,
        severity,
        message: `${describe(h, first)}${more}: ${severity === 'error' ? 'providers answer' : 'providers that read the items as chat messages answer'} 400 ("${providerError(h.protocol, kind, list)}"). ${advice(kind)}`,
        location: first.resultAt,
      });
    }
    return out;
  },
};

function describe(h: RequestHistory, i: Issue): string {
  const id = JSON.stringify(i.id);
  switch (i.kind) {
    case 'separated':
      return `The result of tool call ${id} (${i.resultAt}) does not follow the assistant turn that made the call (${i.callAt}): the ${i.between?.role ?? 'other'} ${h.protocol === 'openai-responses' ? 'item' : 'message'} at ${i.between?.at} comes between them`;
    case 'before-call':
      return `The result of tool call ${id} (${i.resultAt}) comes before the call (${i.callAt})`;
    case 'not-next':
      return `The tool_result for ${id} (${i.resultAt}) is not in the user message right after the tool_use (${i.callAt})`;
    case 'not-first':
      return `The tool_result for ${id} (${i.resultAt}) comes after other content in its user message; tool_result blocks must open it`;
  }
}

function advice(kind: Kind): string {
  if (kind === 'not-first') return 'Put the tool_result blocks first, then any text.';
  if (kind === 'before-call') return 'Put each result after the call it answers.';
  return 'Keep each result right after the turn that made the call; a message the user sent meanwhile goes after the results.';
}

/** Chat Completions and Responses: results answer the calls of the latest assistant turn, with nothing else between. */
function flatIssues(h: RequestHistory): Issue[] {
  const callAt = new Map<string, { at: string; index: number }>();
  for (const t of h.turns)
    for (const c of t.calls) if (c.id !== undefined && !callAt.has(c.id)) callAt.set(c.id, { at: c.at, index: t.index });
  const issues = new Map<string, Issue>();
  const answered = new Set<string>();
  const interruptedBy = new Map<string, HistoryTurn>();
  let open = new Set<string>();
  for (const t of h.turns) {
    if (t.role === 'tool') {
      for (const r of t.results) {
        if (r.id === undefined || answered.has(r.id)) continue;
        answered.add(r.id);
        if (open.delete(r.id)) continue;
        const call = callAt.get(r.id);
        if (!call) continue; // answers no call at all: history-tool-result-missing
        const kind: Kind = call.index < t.index ? 'separated' : 'before-call';
        issues.set(r.id, {
          kind,
          id: r.id,
          callAt: call.at,
          resultAt: r.at,
          ...(kind === 'separated' && { between: interruptedBy.get(r.id) }),
        });
      }
      continue;
    }
    // Responses items of built-in tools neither answer nor interrupt a function call.
    if (t.role === 'other' && h.protocol === 'openai-responses') continue;
    for (const id of open) interruptedBy.set(id, t);
    open = new Set();
    if (t.role === 'assistant') for (const c of t.calls) if (c.id !== undefined && !answered.has(c.id)) open.add(c.id);
  }
  return [...issues.values()];
}

/** Anthropic Messages: the `tool_result` blocks for an assistant message's `tool_use` open the next user message. */
function anthropicIssues(h: RequestHistory): Issue[] {
  const callAt = new Map<string, { at: string; index: number }>();
  const resultAt = new Map<string, { at: string; index: number }>();
  for (const t of h.turns) {
    for (const c of t.calls) if (c.id !== undefined && !callAt.has(c.id)) callAt.set(c.id, { at: c.at, index: t.index });
    for (const r of t.results) if (r.id !== undefined && !resultAt.has(r.id)) resultAt.set(r.id, { at: r.at, index: t.index });
  }
  const issues = new Map<string, Issue>();
  h.turns.forEach((t, i) => {
    if (t.role === 'assistant' && t.calls.length > 0) {
      const next = h.turns[i + 1];
      const nextResults = next?.role === 'user' ? next.results : [];
      for (const c of t.calls) {
        if (c.id === undefined) continue;
        const r = nextResults.find((x) => x.id === c.id);
        if (r) {
          if (r.afterOther) issues.set(c.id, { kind: 'not-first', id: c.id, callAt: c.at, resultAt: r.at });
          continue;
        }
        const elsewhere = resultAt.get(c.id);
        if (elsewhere)
          issues.set(c.id, {
            kind: elsewhere.index < t.index ? 'before-call' : 'not-next',
            id: c.id,
            callAt: c.at,
            resultAt: elsewhere.at,
          });
      }
    }
    if (t.role === 'user') {
      const prev = h.turns[i - 1];
      const prevIds = new Set(prev?.role === 'assistant' ? prev.calls.map((c) => c.id) : []);
      for (const r of t.results) {
        if (r.id === undefined || prevIds.has(r.id) || issues.has(r.id)) continue;
        const call = callAt.get(r.id);
        if (call) issues.set(r.id, { kind: call.index < t.index ? 'not-next' : 'before-call', id: r.id, callAt: call.at, resultAt: r.at });
      }
    }
  });
  return [...issues.values()];
}

export default check;
