/**
 * Repair records in words, for `show`, `serve` and the extension (policy records: ../policy/describe.ts). Network text
 * is made terminal-safe.
 */
import type { RepairRecord } from '../model';

/**
 * Control characters (C0, DEL, C1) and the noncharacters U+FDD0–U+FDEF (the CLI's colour markers are made of them)
 * shown as escapes, so model text cannot drive a terminal.
 */
export function safe(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\ufdd0-\ufdef]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** What each protocol calls a delivered call, the text markup was removed from, and the turn's end. */
const WORDS: Record<NonNullable<RepairRecord['protocol']>, { calls: string; content: string; end: string; error: string }> = {
  'openai-chat': { calls: 'tool_calls', content: 'content', end: 'finish_reason', error: 'error' },
  'anthropic-messages': { calls: 'tool_use blocks', content: 'text', end: 'stop_reason', error: 'an error event (turn failed)' },
  'openai-responses': { calls: 'function_call items', content: 'output_text', end: 'status', error: 'failed' },
};

/** The words of `r`'s protocol (a record kept before the protocol was recorded is Chat Completions). */
export function repairWords(r: Pick<RepairRecord, 'protocol'>): (typeof WORDS)[keyof typeof WORDS] {
  return WORDS[r.protocol ?? 'openai-chat'] ?? WORDS['openai-chat'];
}

/**
 * One line: what repair changed, in the protocol's words (`1 call delivered as tool_use blocks, …, stop_reason
 * end_turn → tool_use`).
 */
export function repairSummary(r: RepairRecord): string {
  const w = repairWords(r);
  const by = (s: string) => r.calls.filter((c) => c.status === s).length;
  const end = (v: string | null) => (v === null ? 'none' : v === 'error' ? w.error : v);
  const parts = [
    by('delivered') && `${by('delivered')} call${by('delivered') === 1 ? '' : 's'} delivered as ${w.calls}`,
    by('withheld') && `${by('withheld')} truncated call${by('withheld') === 1 ? '' : 's'} withheld`,
    by('passed-through') && `${by('passed-through')} truncated call${by('passed-through') === 1 ? '' : 's'} left as text`,
    r.removedChars.content && `${r.removedChars.content} chars of markup removed from ${w.content}`,
    r.removedChars.reasoning && `${r.removedChars.reasoning} from reasoning`,
    r.finishReason && `${w.end} ${r.finishReason.upstream ?? 'none'} → ${end(r.finishReason.delivered)}`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'text held back at a possible marker and re-sent (no call found)';
}

/** One line per call. */
export function repairCallLines(r: RepairRecord): string[] {
  return r.calls.map(
    (c) => `${c.status} ${safe(c.name || '(no name)')} (id ${safe(c.id)}, from ${c.from}, ${c.family})${c.note ? `: ${safe(c.note)}` : ''}`,
  );
}
