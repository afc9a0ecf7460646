/**
 * The findings of one turn as the user reads them, assembled once after every rule ran (analyze.ts `runChecks`):
 * - one finding per span: when rules report the very same range (the lone `</tool_call>` that stray-marker warns about
 *   and markup-residue reports as an error), only the most severe stays;
 * - one finding per repeated defect: the same rule saying the same thing at several places (31 `<tool_call>` openers
 *   in a row, each unclosed; one stray marker 31 times) is one finding, `(repeated 31×)`, at the first place, with
 *   every place listed in `repeated.positions`.
 */
import type { Finding, Severity } from '../model';

/** Where each occurrence of a repeated finding is, the first one included (it is also the finding's own position). */
export interface RepeatedAt {
  start?: number;
  end?: number;
  location: string;
}

/** A finding that stands for `count` identical ones. */
export interface Repeated {
  count: number;
  positions: RepeatedAt[];
}

/** A finding as `runChecks` returns it: a plain `Finding`, plus `repeated` when it stands for several. */
export type CollapsedFinding = Finding & { repeated?: Repeated };

/** The repetition a finding stands for, if it stands for several. */
export function repeatsOf(f: Finding): Repeated | undefined {
  return (f as CollapsedFinding).repeated;
}

const RANK: Record<Severity, number> = { error: 2, warning: 1, info: 0 };

/**
 * What makes two messages "the same defect": the text with the numbers that only say where (offsets, call indexes,
 * events, bytes, JSON positions) left out. Names, markers and values stay, so two different defects never merge.
 */
function sameDefectKey(f: Finding): string {
  const message = f.message.replace(/\b(offsets?|call|event|byte|position|line|column)( \d+)/g, '$1 #').replace(/\[\d+\]/g, '[#]');
  return `${f.rule}\u0000${f.severity}\u0000${message}`;
}

/** Findings in, the findings to show out (order kept: each survivor stays where its first occurrence was). */
export function collapseFindings(findings: Finding[]): CollapsedFinding[] {
  return collapseRepeats(onePerSpan(findings));
}

/**
 * Drops a finding when a more severe finding of another rule covers exactly the same non-empty range at the same
 * location: both describe one piece of text, and the error already says what the warning would.
 */
function onePerSpan(findings: Finding[]): Finding[] {
  const worst = new Map<string, number>();
  const spanKey = (f: Finding): string | undefined =>
    f.start !== undefined && f.end !== undefined && f.end > f.start ? `${f.start}:${f.end}:${f.location}` : undefined;
  for (const f of findings) {
    const k = spanKey(f);
    if (k !== undefined) worst.set(k, Math.max(worst.get(k) ?? -1, RANK[f.severity]));
  }
  return findings.filter((f) => {
    const k = spanKey(f);
    return k === undefined || RANK[f.severity] >= worst.get(k)!;
  });
}

function collapseRepeats(findings: Finding[]): CollapsedFinding[] {
  const groups = new Map<string, Finding[]>();
  for (const f of findings) {
    const k = sameDefectKey(f);
    const g = groups.get(k);
    if (g) g.push(f);
    else groups.set(k, [f]);
  }
  const out: CollapsedFinding[] = [];
  for (const f of findings) {
    const g = groups.get(sameDefectKey(f))!;
    if (g.length === 1) {
      out.push(f);
      continue;
    }
    if (g[0] !== f) continue;
    const positions = g.map((x) => ({
      ...(x.start === undefined ? {} : { start: x.start }),
      ...(x.end === undefined ? {} : { end: x.end }),
      location: x.location,
    }));
    out.push({ ...f, message: `${f.message} (repeated ${g.length}×)`, repeated: { count: g.length, positions } });
  }
  return out;
}
