import type { Finding, NativeText, Segment, SegmentKind, Usage } from '../model';
import { accountTokens, type TokenAccounting } from './accounting';
import { literalAlternation } from './specials';
import { ColumnsBuilder, MARKER_AS_TEXT, ORDINARY, SPECIAL, segmentIndex, streamOf, type TokenColumns, type TokenTable } from './table';
import type { Tokenizer } from './types';
import { isCompleteUtf8, visibleBytes } from './visible';

export { decodeIds, idsFromLogprobs } from './server-ids';

/**
 * The token stream of one assistant turn: every token with its id, a visible label, what kind it is, which
 * segment of the native text it belongs to, and its character range in that text; findings mapped onto
 * token ranges; and the token accounting against what the provider billed.
 */

export type TokenKind =
  /** One id of the tokenizer's special (added) tokens. */
  | 'special'
  /** Part of a special-token string spelled out as ordinary tokens: the model (or provider) wrote the marker as text. */
  | 'marker-as-text'
  | 'ordinary';

/** Where the ids come from: the server's own ids, a re-encoding of the structured response, or raw native text. */
export type TokenSource = 'server' | 'reconstructed' | 'text';

export interface StreamToken {
  id: number;
  /** The token's bytes made visible (see visible.ts); a special token's name. */
  text: string;
  /** The raw bytes, only when they are not complete UTF-8 on their own (then `text` shows them as `\xNN`). */
  bytes?: number[];
  kind: TokenKind;
  /** Innermost segment of the native text the token starts in. */
  segment?: SegmentKind;
  callIndex?: number;
  /** Character range [start, end) in the native text. Empty for a token that only starts a character the next token completes. */
  start: number;
  end: number;
}

/** A finding placed on the tokens. */
export interface TokenFinding {
  finding: Finding;
  /** Token index range [first, last) the finding covers; absent when the finding has no text range. */
  tokens?: [number, number];
  /** Index of the token before which the missing marker belongs (`tokens.length` = after the last one). */
  expectedBefore?: number;
}

export interface TokenStream {
  source: TokenSource;
  /** Name of the tokenizer used. */
  tokenizer: string;
  /** The native text the token ranges index into. */
  text: string;
  segments: Segment[];
  tokens: StreamToken[];
  findings: TokenFinding[];
  accounting: TokenAccounting;
  /** Leading tokens that are the generation prompt's, not the model's (see TokenStreamInput `generationPrompt`). */
  notEmitted?: number;
}

export interface TokenStreamInput {
  tokenizer: Tokenizer;
  /**
   * The native text and its segments. With `ids`, it must be their decoding (`decodeIds`), parsed by the family
   * module; otherwise the tokens are encoded from it.
   */
  native: NativeText;
  /** Exact ids from the server (SGLang `output_ids`, or logprob tokens mapped with `idsFromLogprobs`). */
  ids?: number[];
  /**
   * Without `ids`: `reconstructed` for text rendered from a structured response (marker strings inside its
   * free-text fields are text the provider returned), `text` for raw native text (every marker string is its id).
   */
  source?: 'reconstructed' | 'text';
  /** Findings whose ranges index into `native.text` (the accounting finding, when any, is added after them). */
  findings?: readonly Finding[];
  /** What the provider billed. */
  usage?: Usage;
  /**
   * Without `ids`: the text the family's rendering opens with that the prompt's generation prompt already holds
   * (Format `generationPrompt`); its tokens are shown but not counted, and left out of `emittedIds`.
   */
  generationPrompt?: string;
  /**
   * Without `ids`: the request's prompt ids as the model's chat template renders them. When the rendered turn opens
   * with ids the prompt already ends with (a generation prompt that opens `<think>`, as thinking-mode templates
   * write it), those are the prompt's, not the model's: shown, not counted, left out of `emittedIds`.
   */
  promptIds?: readonly number[];
  /** Columns to build into (emptied first) instead of new ones, for a caller that reads each table before the next. */
  columns?: ColumnsBuilder;
}

/** Segment kinds that hold free text written by the model: a special-token string there was written as text. */
const FREE_TEXT: ReadonlySet<SegmentKind> = new Set(['content', 'reasoning', 'arguments']);

export function buildTokenStream(input: TokenStreamInput): TokenStream {
  return streamOf(buildTokenTable(input));
}

/** `buildTokenStream` with the tokens in columns (./table.ts): what a large response is built as. */
export function buildTokenTable(input: TokenStreamInput): TokenTable {
  const { tokenizer, native } = input;
  const source: TokenSource = input.ids ? 'server' : (input.source ?? 'text');
  const builder = input.columns ?? new ColumnsBuilder();
  if (input.columns) builder.reset();
  if (input.ids) {
    placeTokens(tokenizer, input.ids, 0, native.text.length, builder);
  } else if (source === 'reconstructed') {
    encodeReconstruction(tokenizer, native, builder);
  } else {
    // Raw native text was decoded with its special tokens: every marker string in it stands for its id.
    placeTokens(tokenizer, tokenizer.encode(native.text), 0, native.text.length, builder);
  }
  const columns = builder.columns;
  const spelled = markMarkersAsText(tokenizer, native.text, columns);
  assignSegments(columns, native.segments);
  // Server ids are counted as they are (a marker the model spelled out really cost its tokens). A text source
  // counts the turn as the model emitted it: a marker the provider returned as text was one special token. In
  // every family, reasoning is delimited by special tokens, so a reasoning segment encodes on its own exactly
  // as it does within the whole turn: total and reasoning come from the same encoding.
  const asEmitted = source !== 'server' && spelled;
  const prompt = input.generationPrompt;
  // The generation prompt ends at a special token (the turn's own header follows), so it encodes apart.
  const notEmitted =
    source === 'server'
      ? 0
      : prompt && native.text.startsWith(prompt)
        ? leadingTokens(columns, prompt.length)
        : input.promptIds
          ? generationPromptOverlap(input.promptIds, columns.ids.subarray(0, columns.length), tokenizer)
          : 0;
  const accounting = accountTokens({
    source,
    counted: (asEmitted ? tokenizer.encode(native.text).length : columns.length) - notEmitted,
    countedReasoning: asEmitted ? encodedLength(tokenizer, native, 'reasoning') : countIn(columns, 'reasoning'),
    hasReasoningText: native.segments.some((s) => s.kind === 'reasoning'),
    usage: input.usage,
  });
  const findings = placeFindings(input.findings ?? [], columns.length, columns.starts, columns.ends);
  if (accounting.finding) findings.push({ finding: accounting.finding });
  return {
    source,
    tokenizer: tokenizer.name,
    text: native.text,
    segments: native.segments,
    columns,
    findings,
    accounting,
    ...(notEmitted ? { notEmitted } : {}),
  };
}

/**
 * How many leading completion ids the prompt already ends with: the generation prompt's part of the turn that the
 * reconstruction writes out too (gpt-oss: every message header in full, so the prompt's `<|start|>assistant` opens
 * the completion as well; a template whose generation prompt opens `<think>`). Only a run that starts with a special
 * token counts, so ordinary text that happens to repeat the prompt's last token is never dropped.
 */
export function generationPromptOverlap(
  prompt: ArrayLike<number>,
  completion: ArrayLike<number>,
  tokenizer: Pick<Tokenizer, 'specialName'>,
): number {
  if (!completion.length || tokenizer.specialName(completion[0]) === undefined) return 0;
  for (let k = Math.min(prompt.length, completion.length, 8); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = prompt[prompt.length - k + i] === completion[i];
    if (same) return k;
  }
  return 0;
}

/** How many leading tokens lie wholly within the first `chars` characters. */
function leadingTokens(c: TokenColumns, chars: number): number {
  let n = 0;
  while (n < c.length && c.starts[n] < chars && c.ends[n] <= chars) n++;
  return n;
}

/**
 * The completion as the model emitted it, as ids: the ids the accounting counts (without the generation prompt's
 * leading tokens, `notEmitted`). Server ids are the stream's own. A
 * re-encoded turn whose provider returned markers as text (tool-call markup in `content`) shows those markers as
 * ordinary tokens in `tokens`, for the user to see; the model emitted each as its one special id, so here the
 * whole turn is encoded with every marker string as its id. Reasoning and content stay apart: a special token sits
 * between them, and encoding never merges across one.
 */
export function emittedIds(tokenizer: Tokenizer, stream: Pick<TokenStream, 'source' | 'text' | 'tokens' | 'notEmitted'>): number[] {
  const skip = stream.notEmitted ?? 0;
  if (stream.source !== 'server' && stream.tokens.some((t) => t.kind === 'marker-as-text'))
    return tokenizer.encode(stream.text).slice(skip);
  return stream.tokens.slice(skip).map((t) => t.id);
}

/** `emittedIds` of a table. */
export function emittedTableIds(
  tokenizer: Tokenizer,
  table: Pick<TokenTable, 'source' | 'text' | 'columns' | 'notEmitted'>,
): ArrayLike<number> {
  const skip = table.notEmitted ?? 0;
  const c = table.columns;
  if (table.source !== 'server' && c.kinds.subarray(0, c.length).includes(MARKER_AS_TEXT)) return tokenizer.encode(table.text).slice(skip);
  return c.ids.subarray(Math.min(skip, c.length), c.length);
}

/**
 * Encodes a turn rendered from a structured response: the markers the family module wrote are special ids,
 * but a special-token string inside a free-text field (content, reasoning, arguments) came back from the
 * provider as text, so those fields are encoded ordinarily. Only the fields that hold such a string are encoded
 * apart, so everywhere else the ids are those of one encode of the whole text.
 */
function encodeReconstruction(tokenizer: Tokenizer, native: NativeText, out: ColumnsBuilder): void {
  const specials = specialPattern(tokenizer);
  const spelled = specials
    ? native.segments.filter((s) => FREE_TEXT.has(s.kind) && testAt(specials, native.text.slice(s.start, s.end)))
    : [];
  let pos = 0;
  for (const s of spelled.sort((a, b) => a.start - b.start)) {
    if (s.start < pos) continue; // nested free-text segments are covered by the outer one
    if (s.start > pos) placeTokens(tokenizer, tokenizer.encode(native.text.slice(pos, s.start)), pos, s.start, out);
    placeTokens(tokenizer, tokenizer.encodeOrdinary(native.text.slice(s.start, s.end)), s.start, s.end, out);
    pos = s.end;
  }
  if (pos < native.text.length) {
    placeTokens(tokenizer, tokenizer.encode(pos ? native.text.slice(pos) : native.text), pos, native.text.length, out);
  }
}

/**
 * Appends tokens for `ids`, whose bytes spell the text starting at character `base`. Character ranges follow
 * a streaming UTF-8 decode, so a token holding half a character gets an empty range and the token that
 * completes it gets the character. Offsets are clamped to `limit` (a normalizing tokenizer may spell a
 * slightly different text than it was given).
 *
 * While every token so far is whole UTF-8 and the decoder has written something (so a leading BOM has been
 * dealt with), the decoder holds no pending bytes and each token decodes to its own label's length: the decoder
 * is only called again once a token is not whole UTF-8 (then for the rest of the ids), which saves a string per token.
 */
function placeTokens(tokenizer: Tokenizer, ids: readonly number[], base: number, limit: number, out: ColumnsBuilder): void {
  const decoder = new TextDecoder();
  const labels = labelsOf(tokenizer);
  let at = base;
  let whole = true;
  let wrote = false;
  out.reserve(ids.length);
  for (const id of ids) {
    let label = labels.get(id);
    if (!label) {
      label = labelFor(tokenizer, id);
      labels.set(id, label);
    }
    if (label.units < 0) whole = false;
    let units: number;
    if (whole && wrote) units = label.units;
    else {
      units = decoder.decode(label.raw, { stream: true }).length;
      if (units > 0) wrote = true;
    }
    const end = Math.min(limit, at + units);
    const l = label;
    out.push(id, l.special ? SPECIAL : ORDINARY, at, end, () =>
      l.partial ? { text: l.text, bytes: Array.from(l.raw) } : { text: l.text },
    );
    at = end;
  }
}

interface Label {
  text: string;
  raw: Uint8Array;
  special: boolean;
  /** Not complete UTF-8 on its own. */
  partial: boolean;
  /** UTF-16 length of the raw bytes decoded on their own, a BOM kept; -1 when they are not whole UTF-8. */
  units: number;
}

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });

function labelFor(tokenizer: Tokenizer, id: number): Label {
  const special = tokenizer.specialName(id);
  const raw = tokenizer.tokenBytes(id) ?? new Uint8Array(0);
  const whole = isCompleteUtf8(raw);
  return {
    text: special ?? (raw.length ? visibleBytes(raw) : `<unknown id ${id}>`),
    raw,
    special: special !== undefined,
    partial: special === undefined && !whole,
    units: whole ? keepBom.decode(raw).length : -1,
  };
}

const labelCache = new WeakMap<Tokenizer, Map<number, Label>>();

/** Labels are computed once per id and tokenizer: a turn repeats the same few thousand tokens. */
function labelsOf(tokenizer: Tokenizer): Map<number, Label> {
  let m = labelCache.get(tokenizer);
  if (!m) labelCache.set(tokenizer, (m = new Map()));
  return m;
}

/** Marks ordinary tokens that overlap a special-token string in the text; true when there was any. */
function markMarkersAsText(tokenizer: Tokenizer, text: string, c: TokenColumns): boolean {
  const re = specialPattern(tokenizer);
  if (!re) return false;
  re.lastIndex = 0;
  let t = 0;
  let marked = false;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    while (t < c.length && c.ends[t] <= start && c.ends[t] > c.starts[t]) t++;
    for (let i = t; i < c.length && c.starts[i] < end; i++) {
      if (c.kinds[i] === ORDINARY && c.ends[i] > start) {
        c.kinds[i] = MARKER_AS_TEXT;
        marked = true;
      }
    }
  }
  return marked;
}

/**
 * Gives each token the innermost segment that holds most of it (`.read` in `functions.read:0` belongs to the
 * call name, though its dot belongs to the id), or, failing that, the innermost one holding its first character.
 * One sweep: segments (sorted by start) join the open set as tokens reach them and leave it once passed.
 */
function assignSegments(c: TokenColumns, segments: readonly Segment[]): void {
  const open: Segment[] = [];
  let next = 0;
  for (let k = 0; k < c.length; k++) {
    const tokenStart = c.starts[k];
    const tokenEnd = c.ends[k];
    while (next < segments.length && (segments[next].start < tokenEnd || segments[next].start <= tokenStart)) open.push(segments[next++]);
    for (let i = open.length - 1; i >= 0; i--) if (open[i].end <= tokenStart && open[i].end < tokenEnd) open.splice(i, 1);
    const len = tokenEnd - tokenStart;
    let best: Segment | undefined;
    let fallback: Segment | undefined;
    for (const s of open) {
      const size = s.end - s.start;
      const overlap = Math.min(s.end, tokenEnd) - Math.max(s.start, tokenStart);
      if (len > 0 && overlap * 2 > len && (!best || size <= best.end - best.start)) best = s;
      if (s.start <= tokenStart && tokenStart < s.end && (!fallback || size <= fallback.end - fallback.start)) fallback = s;
    }
    const seg = best ?? fallback;
    if (seg) {
      c.segments[k] = segmentIndex(seg.kind);
      if (seg.callIndex !== undefined) c.calls[k] = seg.callIndex;
    }
  }
}

/** Tokens of the segments of one kind, each encoded with its marker strings as special ids. */
function encodedLength(tokenizer: Tokenizer, native: NativeText, kind: SegmentKind): number {
  let n = 0;
  for (const s of native.segments) if (s.kind === kind) n += tokenizer.encode(native.text.slice(s.start, s.end)).length;
  return n;
}

function countIn(c: TokenColumns, kind: SegmentKind): number {
  const want = segmentIndex(kind);
  let n = 0;
  for (let i = 0; i < c.length; i++) if (c.segments[i] === want) n++;
  return n;
}

/** Places finding ranges (native-text offsets) on token indexes. */
export function mapFindings(findings: readonly Finding[], tokens: readonly StreamToken[]): TokenFinding[] {
  return placeFindings(
    findings,
    tokens.length,
    tokens.map((t) => t.start),
    tokens.map((t) => t.end),
  );
}

/** `mapFindings` over `n` tokens' ranges [starts[i], ends[i]). */
function placeFindings(findings: readonly Finding[], n: number, starts: ArrayLike<number>, ends: ArrayLike<number>): TokenFinding[] {
  const find = (from: number, pred: (i: number) => boolean) => {
    for (let i = from; i < n; i++) if (pred(i)) return i;
    return -1;
  };
  return findings.map((f) => {
    const out: TokenFinding = { finding: f };
    if (f.start !== undefined) {
      const start = f.start;
      const end = f.end ?? start;
      let first = find(0, (i) => ends[i] > start || (ends[i] === starts[i] && starts[i] >= start));
      if (first < 0) first = n;
      let last = first;
      while (last < n && (starts[last] < end || last === first)) last++;
      out.tokens = [Math.min(first, n), Math.min(last, n)];
    }
    if (f.expectedAt !== undefined) {
      const at = f.expectedAt;
      const i = find(0, (k) => starts[k] >= at && ends[k] > starts[k]);
      out.expectedBefore = i < 0 ? n : i;
    }
    return out;
  });
}

const patterns = new WeakMap<Tokenizer, RegExp | null>();

/** The regex matching every special-token string of a tokenizer, built once per tokenizer. */
function specialPattern(tokenizer: Tokenizer): RegExp | undefined {
  let re = patterns.get(tokenizer);
  if (re === undefined) {
    re = literalAlternation(tokenizer.specials.keys()) ?? null;
    patterns.set(tokenizer, re);
  }
  return re ?? undefined;
}

function testAt(re: RegExp, s: string): boolean {
  re.lastIndex = 0;
  return re.test(s);
}
