/**
 * Special ids shown as placeholders: a serving stack whose tokenizer has no name for a marker id writes
 * `<|reserved_token_163595|>` (tiktoken-style vocabularies) where the model emitted `<|tool_calls_section_begin|>`.
 * A family that knows its marker ids reads such a placeholder as the marker it stands for, and reports it as a
 * `marker-placeholder` problem: the calls are recovered, and the user learns why their agent saw none.
 */
import type { FormatProblem, ParsedNative, Segment } from '../../model';

const PLACEHOLDER = /<\|reserved(?:_special)?_token_(\d+)\|>/g;

interface Swap {
  /** Range in the original text. */
  from: number;
  to: number;
  /** Range in the substituted text. */
  subFrom: number;
  subTo: number;
  marker: string;
  id: number;
}

/** `parse`, reading placeholders of the ids in `ids` as their markers (offsets stay those of the original text). */
export function withPlaceholders(
  parse: (text: string) => ParsedNative,
  ids: Readonly<Record<number, string>>,
): (text: string) => ParsedNative {
  return (text) => {
    if (!text.includes('<|reserved')) return parse(text);
    const swaps: Swap[] = [];
    let sub = '';
    let last = 0;
    PLACEHOLDER.lastIndex = 0;
    for (let m = PLACEHOLDER.exec(text); m; m = PLACEHOLDER.exec(text)) {
      const marker = ids[Number(m[1])];
      if (!marker) continue;
      sub += text.slice(last, m.index);
      swaps.push({
        from: m.index,
        to: m.index + m[0].length,
        subFrom: sub.length,
        subTo: sub.length + marker.length,
        marker,
        id: Number(m[1]),
      });
      sub += marker;
      last = m.index + m[0].length;
    }
    if (!swaps.length) return parse(text);
    sub += text.slice(last);
    const p = parse(sub);
    // Substituted offset → original: inside a marker it maps to the placeholder's start (or end, for an end).
    const map = (pos: number, end: boolean): number => {
      let shift = 0;
      for (const s of swaps) {
        if (pos <= s.subFrom) break;
        if (pos < s.subTo) return end ? s.to : s.from;
        shift = s.to - s.subTo;
      }
      return pos + shift;
    };
    const segments: Segment[] = p.segments.map((s) => ({ ...s, start: map(s.start, false), end: map(s.end, true) }));
    const problems: FormatProblem[] = p.problems.map((x) => ({
      ...x,
      start: map(x.start, false),
      end: map(x.end, true),
      ...(x.expectedAt === undefined ? {} : { expectedAt: map(x.expectedAt, false) }),
    }));
    for (const s of swaps) {
      problems.push({
        code: 'marker-placeholder',
        message: `special id ${s.id} written as a placeholder where ${s.marker} belongs`,
        start: s.from,
        end: s.to,
        marker: s.marker,
      });
    }
    problems.sort((a, b) => a.start - b.start);
    return { ...p, text, segments, problems };
  };
}
