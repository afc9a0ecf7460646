/**
 * The builders a `parse` and a `render` fill: `ParseOut` collects segments, problems and the recovered message;
 * `RenderOut` writes text with exact segments; `closing` says which closing markup a turn cut short still writes;
 * `freeText` reads a content or reasoning region and flags family markers left in it.
 */
import type { AssistantMessage, FamilyId, FormatProblem, NativeText, ParsedNative, Segment, SegmentKind, ToolCall } from '../../model';
import type { RenderOptions } from './format';
import { firstTruncated, textIndex, trimRange, type MarkerHit, type TextIndex } from './text';

/** Accumulates the segments and problems of one parse. */
export class ParseOut {
  readonly segments: Segment[] = [];
  readonly problems: FormatProblem[] = [];
  readonly calls: ToolCall[] = [];
  private readonly reasoning: string[] = [];
  private readonly content: string[] = [];
  /**
   * Inline annotations a correct server takes out of content and reasoning (`TurnGrammar.annotations`: Cohere's
   * citation tags): `freeText` makes them marker segments, and they are left out of the message's text.
   */
  annotations?: RegExp;

  constructor(
    readonly family: FamilyId,
    readonly text: string,
  ) {
    this.index = textIndex(text);
  }

  /** Per marker, the last search: the first occurrence at or after `from` is `at` (-1: none). */
  private readonly seen = new Map<string, { from: number; at: number }>();
  /** The searches themselves: one scan of a long text per distinct first character of the markers. */
  private readonly index: TextIndex;

  /**
   * Earliest complete occurrence of any of `markers` in [from, to); ties go to the longer marker.
   * Parsing moves forward, so each marker's last hit is reused while it still lies ahead: this keeps a
   * parse linear even when a marker that only ends the turn is looked for after every call.
   */
  find(markers: readonly string[], from = 0, to = this.text.length): MarkerHit | undefined {
    let best: MarkerHit | undefined;
    for (const marker of markers) {
      const at = this.next(marker, from);
      if (at < 0 || at + marker.length > to) continue;
      if (!best || at < best.start || (at === best.start && marker.length > best.marker.length)) {
        best = { marker, start: at, end: at + marker.length };
      }
    }
    return best;
  }

  private next(marker: string, from: number): number {
    const last = this.seen.get(marker);
    if (last && last.from <= from && (last.at < 0 || last.at >= from)) return last.at;
    const at = this.index.indexOf(marker, from);
    this.seen.set(marker, { from, at });
    return at;
  }

  seg(kind: SegmentKind, start: number, end: number, callIndex?: number): void {
    if (end > start) this.segments.push(segment(kind, start, end, callIndex));
  }

  problem(code: FormatProblem['code'], message: string, start: number, end: number, extra: Partial<FormatProblem> = {}): void {
    this.problems.push({ code, message, start, end, ...extra });
  }

  addReasoning(s: string): void {
    s = this.unannotated(s);
    if (s.trim()) this.reasoning.push(s.trim());
  }

  addContent(s: string): void {
    s = this.unannotated(s);
    if (s.trim()) this.content.push(s.trim());
  }

  private unannotated(s: string): string {
    return this.annotations ? s.replace(this.annotations, '') : s;
  }

  addCall(name: string, args: string, id?: string): number {
    const index = this.calls.length;
    this.calls.push(id === undefined ? { index, name, arguments: args } : { index, id, name, arguments: args });
    return index;
  }

  finish(): ParsedNative {
    // Several regions (content before and after a section) are joined by a blank line.
    const message: AssistantMessage = {
      ...(this.reasoning.length ? { reasoning: joinParts(this.reasoning) } : {}),
      ...(this.content.length ? { content: joinParts(this.content) } : {}),
      toolCalls: this.calls,
    };
    if (this.reasoning.length > 1 || this.content.length > 1) {
      messageParts.set(message, {
        ...(this.reasoning.length > 1 ? { reasoning: this.reasoning } : {}),
        ...(this.content.length > 1 ? { content: this.content } : {}),
      });
    }
    return {
      family: this.family,
      text: this.text,
      segments: sortSegments(this.segments),
      message,
      problems: this.problems.sort((a, b) => a.start - b.start),
    };
  }
}

/** The separator of the regions of a message's content or reasoning. */
export const PART_SEPARATOR = '\n\n';

/**
 * The regions joined by a blank line. Concatenated rather than `join`ed: the result is the same string, but a long
 * output's regions are not copied into a new one until something reads it whole (a report streams them part by part,
 * `messageParts`).
 */
function joinParts(parts: readonly string[]): string {
  let s = parts[0];
  for (let i = 1; i < parts.length; i++) s = s + PART_SEPARATOR + parts[i];
  return s;
}

const messageParts = new WeakMap<AssistantMessage, { content?: readonly string[]; reasoning?: readonly string[] }>();

/**
 * The regions a parsed message's content and reasoning were joined from (with `PART_SEPARATOR`), when there were
 * several: for output written in pieces, which need not build the joined text.
 */
export function messagePartsOf(m: AssistantMessage): { content?: readonly string[]; reasoning?: readonly string[] } | undefined {
  return messageParts.get(m);
}

/** A segment; `callIndex` only when given, so segments compare equal whichever side built them. */
function segment(kind: SegmentKind, start: number, end: number, callIndex?: number): Segment {
  return callIndex === undefined ? { kind, start, end } : { kind, start, end, callIndex };
}

/** Outer kinds before inner ones at the same start, so a sorted list reads as a tree walk. */
const NEST_RANK: Partial<Record<SegmentKind, number>> = { section: 0, call: 1, 'call-id': 2, 'call-name': 3, arguments: 3 };

function sortSegments(segments: Segment[]): Segment[] {
  return segments.sort((a, b) => a.start - b.start || b.end - a.end || (NEST_RANK[a.kind] ?? 9) - (NEST_RANK[b.kind] ?? 9));
}

/** Builds rendered text with exact segments. */
export class RenderOut {
  text = '';
  readonly segments: Segment[] = [];

  /** Appends `s`; when `kind` is given, `s` becomes one segment of that kind. */
  put(s: string, kind?: SegmentKind, callIndex?: number): this {
    const start = this.text.length;
    this.text += s;
    if (kind && s.length) this.segments.push(segment(kind, start, this.text.length, callIndex));
    return this;
  }

  /** Runs `body`, then records everything it appended as one `kind` segment (section, call, call-id…). */
  wrap(kind: SegmentKind, body: () => void, callIndex?: number): this {
    const start = this.text.length;
    body();
    if (this.text.length > start) this.segments.push(segment(kind, start, this.text.length, callIndex));
    return this;
  }

  done(): NativeText {
    return { text: this.text, segments: sortSegments(this.segments) };
  }
}

/** Non-empty trimmed text, or undefined. */
export function present(s: string | undefined): string | undefined {
  const t = s?.trim();
  return t ? t : undefined;
}

/**
 * A free-text region (content or reasoning) in [start, end): adds the trimmed text to the message, and
 * flags what should not be there. Complete family markers become `marker` segments with a `stray-marker`
 * problem (they split the text segments); cut-short markers get `marker-truncated`.
 */
export function freeText(out: ParseOut, kind: 'content' | 'reasoning', start: number, end: number, markers: readonly string[]): void {
  const { text } = out;
  if (kind === 'content') out.addContent(text.slice(start, end));
  else out.addReasoning(text.slice(start, end));
  let pos = start;
  const piece = (to: number) => {
    if (out.annotations) {
      // Annotations split the text: marker segments between its pieces.
      const re = new RegExp(out.annotations.source, 'g');
      re.lastIndex = pos;
      for (let m = re.exec(text); m && m.index + m[0].length <= to; m = re.exec(text)) {
        if (!m[0]) break;
        const [s, e] = trimRange(text, pos, m.index);
        out.seg(kind, s, e);
        out.seg('marker', m.index, m.index + m[0].length);
        pos = m.index + m[0].length;
      }
    }
    const [s, e] = trimRange(text, pos, to);
    out.seg(kind, s, e);
  };
  while (pos < end) {
    const full = out.find(markers, pos, end);
    const cut = firstTruncated(text, markers, pos, full ? full.start : end);
    const hit = cut ?? full;
    if (!hit) break;
    piece(hit.start);
    out.seg('marker', hit.start, hit.end);
    if (cut) {
      out.problem('marker-truncated', `${hit.marker} is cut short in ${kind}`, hit.start, hit.end, { marker: hit.marker });
    } else {
      out.problem('stray-marker', `${hit.marker} in ${kind}, outside the family's grammar`, hit.start, hit.end, { marker: hit.marker });
    }
    pos = hit.end;
  }
  piece(end);
}

/**
 * Which closing markup a render writes (`RenderOptions.complete`). A complete turn closes everything; a turn cut
 * short closes only what the model provably moved past: the reasoning when content or a call followed it, each call
 * but the last. The last call, its section and the end of turn stay unwritten.
 */
export interface Closing {
  /** The end-of-turn marker, and the section end after the calls. */
  turn: boolean;
  /** The reasoning block's close (`</think>`, Harmony's `<|end|>`). */
  reasoning: boolean;
  /** The close of call `i`. */
  call(i: number): boolean;
}

export function closing(m: AssistantMessage, opts: RenderOptions = {}): Closing {
  const turn = opts.complete ?? true;
  const last = m.toolCalls.length - 1;
  return {
    turn,
    reasoning: turn || present(m.content) !== undefined || m.toolCalls.length > 0,
    call: (i) => turn || i < last,
  };
}
