/**
 * The turn and section grammar engine: `<think>` blocks, the turn loop (free text, starters, end markers),
 * tool-call sections, call bodies and their closers, and the `<think>`-family render opening. A family
 * describes its grammar as data (`TurnGrammar`, `SectionGrammar`) and these walk the text.
 */
import type { AssistantMessage, FamilyId, FormatProblem, ParsedNative } from '../../model';
import type { RenderOptions } from './format';
import { closing, freeText, ParseOut, present, RenderOut, type Closing } from './build';
import { endsInMarker, firstTruncated, jsonValueEnd, markerAt, skipWs, trimRange, truncatedAt, type MarkerHit } from './text';

export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

/** A family's reasoning delimiters (`<think>…</think>` unless it says otherwise: Mistral `[THINK]`, Seed `<seed:think>`). */
export interface ThinkTags {
  open: string;
  close: string;
  /**
   * Spellings of the close that lack a piece the engines need (Kimi K3 `<|close|>think` without its `<|sep|>`). No
   * parser takes one for the close, so the reasoning stays open; Tokenscope shows the reasoning ending there (where
   * the model meant it to end) and reports the close as cut short.
   */
  partial?: readonly string[];
  /** Markers that belong inside reasoning (Seed-OSS `<seed:cot_budget_reflect>` budget notes): not stray there. */
  inner?: readonly string[];
}

export const THINK_TAGS: ThinkTags = { open: THINK_OPEN, close: THINK_CLOSE };

/**
 * A `<think>…</think>` block at `pos` (after optional whitespace). Returns where the rest of the turn starts.
 * - `implicitOpen`: the prompt already ended with `<think>` (Kimi K2.5, DeepSeek R1), so a `</think>`
 *   with no opening marker still closes reasoning that started at `pos`.
 * - `stops`: the turn's structural markers. Without `<think>`, only a `</think>` ahead of all of them proves the text
 *   is reasoning.
 * - `turnEnds` and `reasoningEnds`: the markers that end a block left open: the end of turn, and the starters the
 *   engines' reasoning parsers take as the end of reasoning (K2 Thinking sometimes skips `</think>`, and vLLM and
 *   SGLang both end its reasoning at `<|tool_calls_section_begin|>`); then `reasoning-unclosed` points at that
 *   marker. Other structure inside an open block is reasoning text, as vLLM's and SGLang's reasoning parsers keep it:
 *   calls there are never returned as calls, and the problem says what is stuck in the reasoning (`stuck`). Without
 *   `turnEnds`, every stop ends the block.
 * - A block that was opened and whose `</think>` does come, after tool-call markup, runs to that `</think>`: the
 *   markup sits inside the reasoning (the `markup-in-reasoning` rule reports it, with the calls it holds), and a
 *   section found inside reasoning is not read as the end of the reasoning. Tool markers (`toolMarkers`, else the
 *   stops) stay inside the reasoning text for that rule to see.
 */
export function thinkBlock(
  out: ParseOut,
  pos: number,
  opts: {
    implicitOpen: boolean;
    stops: readonly string[];
    /** End-of-turn markers; with `reasoningEnds`, the only markers that end a block left open (default: every stop). */
    turnEnds?: readonly string[];
    reasoningEnds?: readonly string[];
    markers: readonly string[];
    tags?: ThinkTags;
    toolMarkers?: readonly string[];
  },
): number {
  const { text } = out;
  const tags = opts.tags ?? THINK_TAGS;
  const { open: OPEN, close: CLOSE } = tags;
  const at = skipWs(text, pos);
  const opened = text.startsWith(OPEN, at);
  const bodyStart = opened ? at + OPEN.length : pos;
  const close = text.indexOf(CLOSE, bodyStart);
  const stop = out.find(opts.stops, bodyStart);
  const partial = tags.partial?.length ? out.find(tags.partial, bodyStart) : undefined;
  if (!opened) {
    // Without `<think>` only a `</think>` (or a spelling of it cut short) ahead of any stop proves the text is reasoning.
    const closeAt = close >= 0 ? close : partial ? partial.start : -1;
    if (!opts.implicitOpen || closeAt < 0 || (stop && stop.start < closeAt)) return pos;
  } else {
    out.seg('marker', at, bodyStart);
  }
  const inner = opts.markers.filter((m) => m !== CLOSE && !tags.inner?.includes(m));
  const tool = new Set(opts.toolMarkers ?? opts.stops);
  if (close >= 0 && (opened || !(stop && stop.start < close))) {
    freeText(out, 'reasoning', bodyStart, close, stop && stop.start < close ? inner.filter((m) => !tool.has(m)) : inner);
    out.seg('marker', close, close + CLOSE.length);
    return close + CLOSE.length;
  }
  // Unclosed: reasoning runs to a cut-short `</think>` (read as the broken close), a marker that ends an open block, or
  // the end of the text.
  const implicitEnds = opts.reasoningEnds ?? [];
  const blockEnds = opts.turnEnds ? [...opts.turnEnds, ...implicitEnds] : opts.stops;
  const blockEnd = out.find(blockEnds, bodyStart);
  let end = blockEnd ? blockEnd.start : text.length;
  let cut: MarkerHit | undefined = firstTruncated(text, [CLOSE], bodyStart, end);
  if (partial && partial.start < end && (!cut || partial.start < cut.start)) cut = partial;
  if (cut) end = cut.start;
  // Structure inside the open block is reasoning text (tool markup stays in it for the markup-in-reasoning rule); the
  // problem says what it holds.
  freeText(
    out,
    'reasoning',
    bodyStart,
    end,
    inner.filter((m) => !tool.has(m) && !opts.stops.includes(m)),
  );
  const stuck = stuckAfter(out, {
    bodyStart,
    end,
    cut,
    blockEnd,
    implicitEnds,
    turnEnds: opts.turnEnds,
    stops: opts.stops,
    tool,
    markers: opts.markers,
  });
  // The close belonged where the reasoning ends, or before the first structure it swallowed.
  const [, expectedAt] = trimRange(text, bodyStart, stuck.movedAt ?? end);
  out.problem('reasoning-unclosed', `${CLOSE} never came`, opened ? at : bodyStart, end, {
    expectedAt: Math.max(expectedAt, bodyStart),
    marker: CLOSE,
    ...(stuck.stuck ? { stuck: stuck.stuck } : {}),
  });
  if (!cut) return end;
  out.seg('marker', cut.start, cut.end);
  out.problem('marker-truncated', `${CLOSE} is cut short`, cut.start, cut.end, { marker: CLOSE });
  return cut.end;
}

/**
 * What the engines keep inside a reasoning block left open that the model meant as its answer or its calls (vLLM's
 * and SGLang's `<think>` parsers keep everything after an unmatched open as reasoning):
 * - the block ran over tool-call structure to the end of the turn: its calls;
 * - the model wrote a broken close (`cut`): what it wrote after it, calls or an answer.
 * Nothing when the block ended at a marker the engines take as the end of reasoning, or when only reasoning arrived.
 */
function stuckAfter(
  out: ParseOut,
  b: {
    bodyStart: number;
    end: number;
    cut?: MarkerHit;
    blockEnd?: MarkerHit;
    implicitEnds: readonly string[];
    turnEnds?: readonly string[];
    stops: readonly string[];
    tool: ReadonlySet<string>;
    markers: readonly string[];
  },
): { stuck?: NonNullable<FormatProblem['stuck']>; movedAt?: number } {
  if (!b.turnEnds) return {};
  const turnEnds = b.turnEnds;
  const starts = b.stops.filter((m) => !turnEnds.includes(m) && !b.implicitEnds.includes(m));
  const toolStarts = starts.filter((m) => b.tool.has(m));
  if (!b.cut) {
    if (b.blockEnd && b.implicitEnds.includes(b.blockEnd.marker)) return {};
    // Structure the block ran over: calls, or the channel of an answer (Kimi K3's `<|open|>response<|sep|>`).
    const call = out.find(toolStarts, b.bodyStart, b.end);
    const reply = out.find(
      starts.filter((m) => !b.tool.has(m)),
      b.bodyStart,
      b.end,
    );
    const first = Math.min(call?.start ?? Infinity, reply?.start ?? Infinity);
    if (!call) return reply ? { stuck: 'answer', movedAt: first } : {};
    return { stuck: reply ? 'answer-and-calls' : 'calls', movedAt: first };
  }
  const next = out.find([...b.stops, ...b.implicitEnds], b.cut.end);
  if (next && b.implicitEnds.includes(next.marker)) return {};
  const turnEnd = out.find(turnEnds, b.cut.end);
  const to = turnEnd ? turnEnd.start : out.text.length;
  const call = out.find(toolStarts, b.cut.end, to);
  // The answer: text between the broken close and the calls, once the family's own markers are set aside.
  let answer = out.text.slice(b.cut.end, call ? call.start : to);
  for (const m of b.markers) answer = answer.split(m).join('');
  if (call) return { stuck: answer.trim() ? 'answer-and-calls' : 'calls' };
  return answer.trim() ? { stuck: 'answer' } : {};
}

/** Something that opens a section or a call in free text. */
export interface Starter {
  marker: string;
  /** Where the structure really starts when text before the marker belongs to it (default: the marker). */
  lead?(text: string, from: number, at: number): number;
  /** Parses from `start` (`hit` is the marker found); returns where the structure ends. */
  parse(out: ParseOut, start: number, hit: MarkerHit): number;
}

/** The shape of one assistant turn: optional `<think>` block, then free text, sections/calls, and end markers. */
export interface TurnGrammar {
  family: FamilyId;
  markers: readonly string[];
  /** The prompt may already have opened `<think>`, so a completion can start inside reasoning. */
  implicitThink: boolean;
  starters: readonly Starter[];
  /** End-of-turn markers (`end` segments). */
  ends: readonly string[];
  /** Reasoning delimiters, when not `<think>…</think>`. */
  think?: ThinkTags;
  /**
   * Starters that end a reasoning block left open, because the engines' reasoning parsers end reasoning there (Kimi
   * K2's `<|tool_calls_section_begin|>`). Elsewhere an open block runs to the end of the turn, as vLLM's and SGLang's
   * `<think>` parsers read it: calls inside it stay reasoning and are not returned.
   */
  reasoningEnds?: readonly string[];
  /** The family's tool-call markers: inside a closed reasoning block they stay reasoning text (markup-in-reasoning). */
  toolMarkers?: readonly string[];
  /** Structure found by shape rather than by a marker (Llama's bare JSON call, a pythonic call list). */
  patterns?: readonly PatternStarter[];
  /**
   * Inline annotations a correct server takes out of content and reasoning, leaving the text around them (Cohere's
   * citation tags `<co>` … `</co: 0:[1]>`): marker segments, with no finding.
   */
  annotations?: RegExp;
}

/** A structure that opens without a marker; `find` gives where the next one starts at or after `from` (-1: none). */
export interface PatternStarter {
  find(text: string, from: number): number;
  /** Parses from `start`; returns where the structure ends (past `start`, or `start` when it is not one after all). */
  parse(out: ParseOut, start: number): number;
}

/** The parse loop the families share: reasoning, then content interleaved with structure and end markers. */
export function parseTurn(g: TurnGrammar, text: string): ParsedNative {
  const out = new ParseOut(g.family, text);
  if (g.annotations) out.annotations = g.annotations;
  const structural = [...g.starters.map((s) => s.marker), ...g.ends];
  let pos = thinkBlock(out, 0, {
    implicitOpen: g.implicitThink,
    stops: structural,
    turnEnds: g.ends,
    reasoningEnds: g.reasoningEnds,
    markers: g.markers,
    tags: g.think,
    toolMarkers: g.toolMarkers,
  });
  // Per pattern, its next start as last found (reused while still ahead, so the scan stays linear).
  const ahead = (g.patterns ?? []).map(() => ({ from: -1, at: -1 }));
  const nextPattern = (from: number): { at: number; p: PatternStarter } | undefined => {
    let best: { at: number; p: PatternStarter } | undefined;
    g.patterns?.forEach((p, i) => {
      const a = ahead[i];
      if (a.from < 0 || a.from > from || (a.at >= 0 && a.at < from)) {
        a.from = from;
        a.at = p.find(text, from);
      }
      if (a.at >= 0 && (!best || a.at < best.at)) best = { at: a.at, p };
    });
    return best;
  };
  while (pos < text.length) {
    const next = out.find(structural, pos);
    const pattern = g.patterns ? nextPattern(pos) : undefined;
    if (pattern && (!next || pattern.at < next.start)) {
      const end = pattern.p.parse(out, pattern.at);
      if (end > pattern.at) {
        flushContent(out, pos, pattern.at, g.markers);
        pos = end;
        continue;
      }
      // Not a structure after all: the text up to just past it is content.
      const to = next ? Math.min(next.start, pattern.at + 1) : pattern.at + 1;
      contentRun(out, pos, to);
      pos = to;
      continue;
    }
    if (!next) {
      flushContent(out, pos, text.length, g.markers);
      break;
    }
    const starter = g.starters.find((s) => s.marker === next.marker);
    const start = starter?.lead ? starter.lead(text, pos, next.start) : next.start;
    flushContent(out, pos, start, g.markers);
    if (starter) {
      pos = Math.max(starter.parse(out, start, next), next.end);
    } else {
      out.seg('end', next.start, next.end);
      pos = next.end;
    }
  }
  flushContent(out, text.length, text.length, g.markers);
  return out.finish();
}

/**
 * Content is read in one piece even when a pattern that turned out not to be a structure split the scan: pieces are
 * held back (`contentRun`) and written as one free-text region when the next structure or the end comes.
 */
const pending = new WeakMap<ParseOut, number>();

function contentRun(out: ParseOut, from: number, _to: number): void {
  if (!pending.has(out)) pending.set(out, from);
}

function flushContent(out: ParseOut, from: number, to: number, markers: readonly string[]): void {
  const held = pending.get(out);
  pending.delete(out);
  const start = held ?? from;
  if (to > start || held !== undefined) freeText(out, 'content', start, Math.max(to, start), markers);
}

/** A tool-call section: begin marker, calls, end marker (Kimi, DeepSeek, MiniMax). */
export interface SectionGrammar {
  /** Section end markers; the first is the canonical one reported as missing. */
  ends: readonly string[];
  callBegin: string;
  /** Markers that stop the section without closing it: end of turn, another section. */
  breaks: readonly string[];
  markers: readonly string[];
  /** One call from `start` (its begin marker ends at `bodyStart`); `sectioned` is false when the section had no begin. */
  call(out: ParseOut, start: number, bodyStart: number, sectioned: boolean): number;
  /** Text between calls that is not markup; return a new position when the family reads a call from it. */
  loose?(out: ParseOut, pos: number, sectioned: boolean): number | undefined;
}

/**
 * The section from `start`; `begin` is its begin marker, absent when calls appear without one (then the
 * calls report `malformed-call` and no `section-unclosed` is added). Returns where the section ends.
 * An unclosed section expects its end right after the last call (or at a cut-short end marker).
 */
export function parseSection(out: ParseOut, g: SectionGrammar, start: number, begin?: MarkerHit): number {
  const { text } = out;
  const sectioned = begin !== undefined;
  let pos = begin ? begin.end : start;
  let lastEnd = pos;
  let end: number | undefined;
  let expectedAt: number | undefined;
  for (;;) {
    pos = skipWs(text, pos);
    if (pos >= text.length) {
      expectedAt = lastEnd;
      break;
    }
    const m = markerAt(text, pos, [...g.ends, g.callBegin, ...g.breaks]);
    if (m && g.ends.includes(m.marker)) {
      end = m.end;
      break;
    }
    if (m?.marker === g.callBegin) {
      pos = lastEnd = Math.max(g.call(out, m.start, m.end, sectioned), m.end);
      continue;
    }
    if (m) {
      expectedAt = lastEnd;
      break;
    }
    // Between calls a cut-short fragment is read as the section end, else as the next call's begin.
    const cut = truncatedAt(text, pos, [...g.ends, g.callBegin, ...g.markers]);
    if (cut) {
      out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, { marker: cut.marker });
      expectedAt = cut.start;
      end = cut.end;
      break;
    }
    if (endsInMarker(text, pos, [...g.ends, g.callBegin, ...g.markers])) {
      expectedAt = lastEnd;
      end = text.length;
      break;
    }
    const read = g.loose?.(out, pos, sectioned);
    if (read !== undefined) {
      pos = lastEnd = Math.max(read, pos + 1);
      continue;
    }
    const next = out.find([...g.ends, g.callBegin, ...g.breaks], pos);
    const junkEnd = next ? next.start : text.length;
    const [js, je] = trimRange(text, pos, junkEnd);
    out.problem('malformed-call', 'text inside the tool-call section, outside any call', js, je);
    pos = lastEnd = junkEnd;
  }
  const sectionEnd = end ?? lastEnd;
  out.seg('section', start, sectionEnd);
  if (expectedAt !== undefined && begin) {
    out.problem('section-unclosed', `${begin.marker} never closed by ${g.ends[0]}`, begin.start, sectionEnd, {
      expectedAt,
      marker: g.ends[0],
    });
  }
  return sectionEnd;
}

/** How a call body ended: the marker that stopped it, or a cut-short marker. */
export interface BodyEnd {
  /** The body, trimmed. */
  range: [number, number];
  stop?: MarkerHit;
  cut?: MarkerHit;
}

/**
 * JSON arguments from `from`: the balanced JSON value, then anything up to the first of `stops` (so markers
 * quoted inside JSON strings stay in the arguments). A cut-short marker before the stop ends them.
 */
export function jsonBody(out: ParseOut, from: number, stops: readonly string[], markers: readonly string[]): BodyEnd {
  const jsonEnd = jsonValueEnd(out.text, from);
  return bodyUntil(out, from, jsonEnd >= 0 ? jsonEnd : from, stops, markers);
}

/** A body from `from` up to the first of `stops` searched from `searchFrom`, cut short by a truncated marker. */
export function bodyUntil(out: ParseOut, from: number, searchFrom: number, stops: readonly string[], markers: readonly string[]): BodyEnd {
  const { text } = out;
  const stop = out.find(stops, searchFrom);
  const end = stop ? stop.start : text.length;
  const cut = firstTruncated(text, markers, searchFrom, end);
  return { range: trimRange(text, from, cut ? cut.start : end), stop: cut ? undefined : stop, cut };
}

/**
 * Expects `closers` in order after `pos` (whitespace allowed between). Returns where they end and, when
 * one is missing, which one and where it was expected. A closer that is absent while a later one is
 * present is `skipped` (a malformed call, not a cut-off one). A cut-short closer is `marker-truncated`.
 */
export function expectClosers(
  out: ParseOut,
  pos: number,
  closers: readonly string[],
  markers: readonly string[],
  callIndex?: number,
): { end: number; missing?: string; expectedAt?: number; skipped: string[] } {
  const { text } = out;
  const skipped: string[] = [];
  let end = pos;
  for (let i = 0; i < closers.length; i++) {
    const closer = closers[i];
    const at = skipWs(text, end);
    if (text.startsWith(closer, at)) {
      end = at + closer.length;
      continue;
    }
    const cut = truncatedAt(text, at, [closer, ...markers]);
    if (cut?.marker === closer) {
      out.problem('marker-truncated', `${closer} is cut short`, cut.start, cut.end, { marker: closer, callIndex });
      return { end: cut.end, missing: closer, expectedAt: cut.start, skipped };
    }
    if (closers.slice(i + 1).some((c) => text.startsWith(c, at))) {
      skipped.push(closer);
      continue;
    }
    return { end, missing: closer, expectedAt: end, skipped };
  }
  return { end, skipped };
}

/** Reports call `index` as never closed. */
export function callUnclosed(out: ParseOut, index: number, start: number, end: number, marker: string, expectedAt: number): void {
  out.problem('call-unclosed', `call ${index} never closed by ${marker}`, start, end, { expectedAt, marker, callIndex: index });
}

/**
 * Writes `<think>REASONING</think>` when the message has reasoning (without `</think>` when `closed` is false).
 * `newlines`: the Qwen/MiniMax templates put the reasoning on its own lines (`<think>\nR\n</think>\n\n`).
 */
export function renderThink(
  out: RenderOut,
  reasoning: string | undefined,
  newlines: boolean,
  closed: boolean,
  tags: ThinkTags = THINK_TAGS,
): void {
  if (!present(reasoning)) return;
  const nl = newlines ? '\n' : '';
  out.put(tags.open, 'marker').put(nl).put(reasoning!, 'reasoning');
  if (closed)
    out
      .put(nl)
      .put(tags.close, 'marker')
      .put(nl + nl);
}

/** The start of a `<think>` family's `render`: what it may close, and the text written so far. */
export interface RenderStart {
  out: RenderOut;
  close: Closing;
  /** Whether content was written (calls after it start on a new line in most families). */
  hasContent: boolean;
}

/**
 * Opens a `render` the way every `<think>` family does: the reasoning block (see `renderThink`), then the
 * content as it is. `afterThink` goes between `</think>` and the content (GLM's line break).
 */
export function renderStart(
  m: AssistantMessage,
  opts: RenderOptions | undefined,
  think: { newlines: boolean; afterThink?: string; tags?: ThinkTags },
): RenderStart {
  const close = closing(m, opts);
  const out = new RenderOut();
  renderThink(out, m.reasoning, think.newlines, close.reasoning, think.tags);
  const hasContent = present(m.content) !== undefined;
  if (hasContent) {
    if (think.afterThink && present(m.reasoning)) out.put(think.afterThink);
    out.put(m.content!, 'content');
  }
  return { out, close, hasContent };
}
