/**
 * A token stream in columns (`TokenTable`): ids, character ranges, kinds and segments in typed arrays, and each
 * distinct token's label once. A 200 MB stream's millions of tokens cost about 22 bytes each this way instead of an
 * object apiece, and the columns cross to another thread without a copy. `TokenStream` (one object per token) is
 * the same stream materialized, for callers that want objects (`streamOf`).
 */
import type { SegmentKind } from '../model';
import type { StreamToken, TokenKind, TokenStream } from './stream';

/** `TokenColumns.kinds` values. */
export const TOKEN_KINDS: readonly TokenKind[] = ['ordinary', 'special', 'marker-as-text'];
export const ORDINARY = 0;
export const SPECIAL = 1;
export const MARKER_AS_TEXT = 2;

/** `TokenColumns.segments` values: 0 for none. */
export const SEGMENT_KINDS: readonly (SegmentKind | undefined)[] = [
  undefined,
  'reasoning',
  'content',
  'section',
  'call',
  'call-id',
  'call-name',
  'arguments',
  'marker',
  'end',
];
const SEGMENT_INDEX = new Map(SEGMENT_KINDS.map((k, i) => [k, i]));

/** What every token with one id shares: its visible text, and its raw bytes when they are not complete UTF-8. */
export interface TokenLabel {
  text: string;
  bytes?: number[];
}

/** One entry per token in each array, `length` of them (the arrays may be longer). */
export interface TokenColumns {
  length: number;
  ids: Uint32Array;
  /** Character range [start, end) in the native text. */
  starts: Uint32Array;
  ends: Uint32Array;
  /** Index into `labels`. */
  label: Uint32Array;
  /** Index into TOKEN_KINDS. */
  kinds: Uint8Array;
  /** Index into SEGMENT_KINDS. */
  segments: Uint8Array;
  /** The segment's call index; -1 for none. */
  calls: Int32Array;
  labels: TokenLabel[];
}

/** A `TokenStream` whose tokens are in columns. */
export type TokenTable = Omit<TokenStream, 'tokens'> & { columns: TokenColumns };

export function segmentIndex(kind: SegmentKind | undefined): number {
  return SEGMENT_INDEX.get(kind) ?? 0;
}

/** The most tokens `ColumnsBuilder.reset` keeps room for (about 22 bytes each). */
const RESET_KEEP = 1 << 16;

/** Appends tokens to columns that grow as needed. */
export class ColumnsBuilder {
  readonly columns: TokenColumns;
  private readonly slots = new Map<number, number>();

  constructor(capacity = 16) {
    this.columns = { length: 0, ...arrays(capacity), labels: [] };
  }

  /**
   * Empties the columns for the next stream, keeping their arrays (for a caller that reads each table before it
   * builds the next: `tokens --batch`). Arrays grown past RESET_KEEP tokens are let go, so one long line does not
   * pin its memory for the rest of the run.
   */
  reset(): void {
    const c = this.columns;
    if (c.ids.length > RESET_KEEP) Object.assign(c, arrays(16));
    c.length = 0;
    c.labels.length = 0;
    this.slots.clear();
  }

  /** Room for `n` more tokens. */
  reserve(n: number): void {
    const c = this.columns;
    if (c.length + n <= c.ids.length) return;
    const next = arrays(Math.max(c.length + n, c.ids.length * 2));
    for (const k of Object.keys(next) as (keyof typeof next)[]) (next[k] as Uint32Array).set((c[k] as Uint32Array).subarray(0, c.length));
    Object.assign(c, next);
  }

  /** Adds one token (after `reserve`); `label` gives the id's label the first time the id is seen. */
  push(id: number, kind: number, start: number, end: number, label: () => TokenLabel): void {
    const c = this.columns;
    let slot = this.slots.get(id);
    if (slot === undefined) {
      slot = c.labels.push(label()) - 1;
      this.slots.set(id, slot);
    }
    const i = c.length++;
    c.ids[i] = id;
    c.kinds[i] = kind;
    c.starts[i] = start;
    c.ends[i] = end;
    c.label[i] = slot;
    c.segments[i] = 0;
    c.calls[i] = -1;
  }
}

function arrays(n: number) {
  return {
    ids: new Uint32Array(n),
    starts: new Uint32Array(n),
    ends: new Uint32Array(n),
    label: new Uint32Array(n),
    kinds: new Uint8Array(n),
    segments: new Uint8Array(n),
    calls: new Int32Array(n),
  };
}

/** Token `i` as an object. */
export function tokenAt(c: TokenColumns, i: number): StreamToken {
  const l = c.labels[c.label[i]];
  const t: StreamToken = { id: c.ids[i], text: l.text, kind: TOKEN_KINDS[c.kinds[i]], start: c.starts[i], end: c.ends[i] };
  if (l.bytes) t.bytes = l.bytes.slice();
  const segment = SEGMENT_KINDS[c.segments[i]];
  if (segment) t.segment = segment;
  if (c.calls[i] >= 0) t.callIndex = c.calls[i];
  return t;
}

/** The table with one object per token. */
export function streamOf(table: TokenTable): TokenStream {
  const { columns, ...rest } = table;
  const tokens = new Array<StreamToken>(columns.length);
  for (let i = 0; i < columns.length; i++) tokens[i] = tokenAt(columns, i);
  return { ...rest, tokens };
}

/** A stream of token objects in columns (a stream built elsewhere, to render it like a table). */
export function tableOf(stream: TokenStream): TokenTable {
  const { tokens, ...rest } = stream;
  const b = new ColumnsBuilder(tokens.length);
  b.reserve(tokens.length);
  const c = b.columns;
  for (const t of tokens) {
    const i = c.length;
    // Labels by id: a stream of objects gives each id one text.
    b.push(t.id, Math.max(0, TOKEN_KINDS.indexOf(t.kind)), t.start, t.end, () =>
      t.bytes ? { text: t.text, bytes: t.bytes } : { text: t.text },
    );
    c.segments[i] = segmentIndex(t.segment);
    if (t.callIndex !== undefined) c.calls[i] = t.callIndex;
  }
  return { ...rest, columns: c };
}
