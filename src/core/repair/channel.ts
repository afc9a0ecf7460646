/**
 * One text channel of a streamed turn (`content` or `reasoning`), split into plain text and leaked tool-call markup.
 *
 * Text passes at once. Only from the first character that could begin a tool-call marker (an "opener":
 * `<|tool_calls_section_begin|>`, `<tool_call>`…) is it held back: while it is still a partial marker at the end
 * of what arrived, or, once a whole opener arrived, until the markup closes (the family's parser sees every call and
 * section closed) or the turn ends. A held prefix that turns out not to be a marker is released with the next text.
 */
import { detectFamily, formats, getFamily } from '../families/index';
import type { ModelFormat } from '../families/shared/format';

export interface Opener {
  marker: string;
  format: ModelFormat;
  /** A marker removed on its own (it opens no markup stretch). */
  strip?: boolean;
}

/**
 * Openers of one family, or of every family when the model id names none. Without a model id, only openers that
 * start like markup (`<`, `[`) count: a plain word (Phi-4's `functools[`) would hold back ordinary prose.
 */
export function openersFor(format: ModelFormat | undefined): Opener[] {
  const of = (f: ModelFormat): Opener[] => {
    const { repair } = getFamily(f.id);
    return [
      ...repair.openers.map((marker) => ({ marker, format: f })),
      ...repair.stripped.map((marker) => ({ marker, format: f, strip: true })),
    ];
  };
  return format ? of(format) : formats.flatMap(of).filter((o) => /^[<[]/.test(o.marker));
}

/** A stretch of markup, from its opener to where it closed (or to the end of the turn). */
export interface Region {
  format: ModelFormat;
  raw: string;
  /** False when the turn ended while it was still open. */
  closed: boolean;
  /** A lone marker a correct server removes (see STRIPPED). */
  strip?: boolean;
}

export type Part = { text: string } | { region: Region };

/** Segment kinds that belong to the markup (what a correct server never shows the agent). */
const MARKUP_KINDS = new Set(['section', 'call', 'call-id', 'call-name', 'arguments', 'marker', 'end']);
const OPEN_PROBLEMS = new Set(['section-unclosed', 'call-unclosed', 'marker-truncated']);

export class MarkupChannel {
  /** Text held back because it may be the start of an opener. */
  private pending = '';
  /** The markup stretch in progress (from its opener on), when one is open. */
  private markup: string | undefined;
  private markupFormat: ModelFormat | undefined;
  private readonly longest: number;

  constructor(
    private readonly openers: Opener[],
    /** The family named by the model id; undefined: told by the markup itself. */
    private readonly family: ModelFormat | undefined,
  ) {
    this.longest = Math.max(1, ...openers.map((o) => o.marker.length));
  }

  /** Nothing held back. */
  get idle(): boolean {
    return this.pending === '' && this.markup === undefined;
  }

  /** What can be delivered now, in order. */
  push(text: string): Part[] {
    const parts: Part[] = [];
    let s = this.pending + text;
    this.pending = '';
    for (;;) {
      if (this.markup !== undefined) {
        this.markup += s;
        s = '';
        const format = this.formatOf(this.markup);
        const end = this.closedAt(this.markup, format);
        if (end < 0) return parts;
        parts.push({ region: { format, raw: this.markup.slice(0, end), closed: true } });
        s = this.markup.slice(end);
        this.markup = undefined;
        continue;
      }
      const hit = this.firstOpener(s);
      if (hit) {
        if (hit.at > 0) parts.push({ text: s.slice(0, hit.at) });
        if (hit.strip) {
          parts.push({ region: { format: hit.format, raw: hit.strip, closed: true, strip: true } });
          s = s.slice(hit.at + hit.strip.length);
          continue;
        }
        this.markup = '';
        this.markupFormat = this.family ?? hit.format;
        s = s.slice(hit.at);
        continue;
      }
      const hold = this.partialAt(s);
      if (hold > 0) parts.push({ text: s.slice(0, hold) });
      this.pending = s.slice(hold);
      return parts;
    }
  }

  /** The end of the turn: held text is released, open markup becomes an unclosed region. */
  end(): Part[] {
    const parts: Part[] = [];
    if (this.markup !== undefined) {
      const raw = this.markup;
      parts.push({ region: { format: this.formatOf(raw), raw, closed: false } });
    }
    if (this.pending) parts.push({ text: this.pending });
    this.pending = '';
    this.markup = undefined;
    return parts;
  }

  /** Without a model id, the markup itself tells the family (`<tool_call>` opens Qwen3, Qwen3-Coder and GLM calls). */
  private formatOf(markup: string): ModelFormat {
    return this.family ?? detectFamily(undefined, markup)?.format ?? this.markupFormat!;
  }

  private firstOpener(s: string): { at: number; format: ModelFormat; strip?: string } | undefined {
    let best: { at: number; format: ModelFormat; strip?: string } | undefined;
    for (const o of this.openers) {
      const at = s.indexOf(o.marker);
      if (at >= 0 && (!best || at < best.at)) best = { at, format: o.format, ...(o.strip && { strip: o.marker }) };
    }
    return best;
  }

  /** Where a partial opener starts at the end of `s` (s.length when none). */
  private partialAt(s: string): number {
    for (let j = Math.max(0, s.length - this.longest + 1); j < s.length; j++) {
      const rest = s.slice(j);
      if (this.openers.some((o) => o.marker.length > rest.length && o.marker.startsWith(rest))) return j;
    }
    return s.length;
  }

  /** Where the markup closed: the end of its last markup segment, once the parser sees calls and nothing left open. -1: not yet. */
  private closedAt(markup: string, format: ModelFormat): number {
    const parsed = format.parse(markup);
    if (parsed.message.toolCalls.length === 0 || parsed.problems.some((p) => OPEN_PROBLEMS.has(p.code))) return -1;
    let end = -1;
    for (const seg of parsed.segments) if (MARKUP_KINDS.has(seg.kind) && seg.end > end) end = seg.end;
    return end;
  }
}
