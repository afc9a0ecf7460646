/**
 * Repair records in words, for `show`, `serve` and the extension (policy records: ../policy/describe.ts). Network text
 * is made terminal-safe.
 */
import type { RepairRecord } from '../model';

/** Control characters (C0, DEL, C1) shown as escapes, so model text cannot drive a terminal. */
export function safe(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** One line: what repair changed. */
export function repairSummary(r: RepairRecord): string {
  const by = (s: string) => r.calls.filter((c) => c.status === s).length;
  const parts = [
    by('delivered') && `${by('delivered')} call${by('delivered') === 1 ? '' : 's'} delivered as tool_calls`,
    by('withheld') && `${by('withheld')} truncated call${by('withheld') === 1 ? '' : 's'} withheld`,
    by('passed-through') && `${by('passed-through')} truncated call${by('passed-through') === 1 ? '' : 's'} left as text`,
    r.removedChars.content && `${r.removedChars.content} chars of markup removed from content`,
    r.removedChars.reasoning && `${r.removedChars.reasoning} from reasoning`,
    r.finishReason && `finish_reason ${r.finishReason.upstream ?? 'none'} → ${r.finishReason.delivered ?? 'none'}`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'text held back at a possible marker and re-sent (no call found)';
}

/** One line per call. */
export function repairCallLines(r: RepairRecord): string[] {
  return r.calls.map((c) => `${c.status} ${safe(c.name || '(no name)')} (id ${safe(c.id)}, from ${c.from}, ${c.family})${c.note ? `: ${safe(c.note)}` : ''}`);
}
