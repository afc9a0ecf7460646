/**
 * What `tokenscope tokens` prints for one response, the readable view and the JSON, written out in pieces of whole
 * lines as they are made: a 200 MB stream's millions of tokens never become one string (its JSON runs to hundreds of
 * MB), nor an object apiece (the tokens are read from their columns, ../core/tokens/table.ts).
 */
import type { FamilyId, SegmentKind } from '../core/model';
import { plural } from '../core/tokens/accounting';
import type { TokenStream } from '../core/tokens/stream';
import { SEGMENT_KINDS, SPECIAL, MARKER_AS_TEXT, TOKEN_KINDS, tableOf, type TokenTable } from '../core/tokens/table';
import { palette, safeLine, type Palette } from './terminal';

/** Receives the output a piece at a time; each piece is whole lines, joined by `\n`, without the last line end. */
export type Emit = (lines: string) => void;

/** A piece goes out once it holds about this many characters. */
const PIECE = 1 << 20;

/** Gathers lines into pieces of about PIECE characters. */
class Pieces {
  private lines: string[] = [];
  private size = 0;
  constructor(private readonly emit: Emit) {}

  line(s: string): void {
    this.lines.push(s);
    this.size += s.length + 1;
    if (this.size >= PIECE) this.flush();
  }

  flush(): void {
    if (this.lines.length) this.emit(this.lines.join('\n'));
    this.lines = [];
    this.size = 0;
  }
}

/** The prompt side of `--json`, when the request's prompt was rendered. */
export interface PromptJson {
  ids: readonly number[];
  counted: number;
  billed: number | null;
  delta: number | null;
  mismatch: boolean;
}

/**
 * The `--json` document, `JSON.stringify(…, null, 2)` byte for byte: {"source","tokenizer","family","tokens",
 * "accounting","findings","ids","prompt"}. Everything but the two per-token arrays is stringified whole (it is small);
 * those are written an element at a time.
 */
export function writeJson(
  t: TokenTable,
  family: FamilyId | undefined,
  ids: ArrayLike<number>,
  prompt: PromptJson | null,
  emit: Emit,
): void {
  const marks = { tokens: `\u0000tokens-${Math.random()}`, ids: `\u0000ids-${Math.random()}` };
  const skeleton = JSON.stringify({ ...jsonHead(t, family, marks.tokens), ids: marks.ids, prompt }, null, 2);
  const out = new Pieces(emit);
  for (const line of skeleton.split('\n')) {
    const tokens = arrayAt(line, 'tokens', marks.tokens);
    const idList = arrayAt(line, 'ids', marks.ids);
    if (tokens) writeArray(out, tokens, t.columns.length, (i) => tokenJson(t, i));
    else if (idList) writeArray(out, idList, ids.length, (i) => `    ${ids[i]}`);
    else out.line(line);
  }
  out.flush();
}

/** The members of the JSON before the per-token arrays' contents (stable: scripts consume them). */
function jsonHead(s: TokenTable, family: FamilyId | undefined, tokens: unknown) {
  return {
    source: s.source,
    tokenizer: s.tokenizer,
    family: family ?? null,
    tokens,
    accounting: {
      counted: s.accounting.counted,
      countedReasoning: s.accounting.countedReasoning,
      billed: s.accounting.billed ?? null,
      billedReasoning: s.accounting.billedReasoning ?? null,
      delta: s.accounting.delta ?? null,
      mismatch: s.accounting.mismatch,
    },
    findings: s.findings.map((f) => ({
      rule: f.finding.rule,
      severity: f.finding.severity,
      message: f.finding.message,
      tokens: f.tokens ?? null,
      ...(f.expectedBefore === undefined ? {} : { expectedBefore: f.expectedBefore, expectedMarker: f.finding.expectedMarker ?? null }),
    })),
  };
}

/** The skeleton line holding an array's mark: its key part and the comma after it, if any. */
function arrayAt(line: string, key: string, mark: string): { open: string; comma: string } | undefined {
  const at = line.indexOf(JSON.stringify(mark));
  if (at < 0 || !line.startsWith(`  "${key}": `)) return undefined;
  return { open: line.slice(0, at), comma: line.slice(at + JSON.stringify(mark).length) };
}

function writeArray(out: Pieces, a: { open: string; comma: string }, n: number, element: (i: number) => string): void {
  if (n === 0) return out.line(`${a.open}[]${a.comma}`);
  out.line(`${a.open}[`);
  for (let i = 0; i < n; i++) out.line(i + 1 < n ? `${element(i)},` : element(i));
  out.line(`  ]${a.comma}`);
}

const jsonLabels = new WeakMap<TokenTable, string[]>();

/** Token `i` as `JSON.stringify` writes it two levels deep: {id,text,kind,segment,callIndex?,start,end,bytes?}. */
function tokenJson(t: TokenTable, i: number): string {
  const c = t.columns;
  let texts = jsonLabels.get(t);
  if (!texts) jsonLabels.set(t, (texts = []));
  const slot = c.label[i];
  const label = c.labels[slot];
  const text = (texts[slot] ??= JSON.stringify(label.text));
  const segment = SEGMENT_KINDS[c.segments[i]];
  let s = `    {\n      "id": ${c.ids[i]},\n      "text": ${text},\n      "kind": "${TOKEN_KINDS[c.kinds[i]]}",\n      "segment": ${segment ? `"${segment}"` : 'null'},`;
  if (c.calls[i] >= 0) s += `\n      "callIndex": ${c.calls[i]},`;
  s += `\n      "start": ${c.starts[i]},\n      "end": ${c.ends[i]}`;
  if (label.bytes)
    s += label.bytes.length
      ? `,\n      "bytes": [\n${label.bytes.map((b) => `        ${b}`).join(',\n')}\n      ]`
      : `,\n      "bytes": []`;
  return `${s}\n    }`;
}

const SOURCE_LABEL: Record<TokenTable['source'], string> = {
  server: "the server's own token ids",
  reconstructed: 'reconstructed: the structured response rendered in the native format and encoded',
  text: 'encoded from the raw text',
};

const WIDTH = 100;

/**
 * The readable view: one block per run of tokens in the same segment, tokens separated by spaces (a space
 * inside a token shows as `·`), special tokens as `[name]`, markers spelled as text as `«piece»`.
 */
export function writeText(label: string, s: TokenTable, p: Palette, emit: Emit): void {
  const out = new Pieces(emit);
  const c = s.columns;
  out.line(`${safeLine(label)}: ${plural(c.length, 'token')}, ${s.tokenizer}`);
  out.line(`source: ${SOURCE_LABEL[s.source]}`);
  const starts = new Map<number, string[]>();
  const ghosts = new Map<number, string[]>();
  s.findings.forEach((f, i) => {
    if (f.tokens && f.tokens[1] > f.tokens[0]) (starts.get(f.tokens[0]) ?? starts.set(f.tokens[0], []).get(f.tokens[0])!).push(`#${i + 1}`);
    if (f.expectedBefore !== undefined) {
      (ghosts.get(f.expectedBefore) ?? ghosts.set(f.expectedBefore, []).get(f.expectedBefore)!).push(
        f.finding.expectedMarker ?? `#${i + 1}`,
      );
    }
  });
  out.line('');
  const wrap = new Wrap(out);
  const words = labelWords(s);
  let segment: string | undefined;
  for (let i = 0; i < c.length; i++) {
    const seg = segmentLabel(SEGMENT_KINDS[c.segments[i]], c.calls[i] < 0 ? undefined : c.calls[i]);
    if (seg !== segment) {
      wrap.end();
      wrap.start(seg.padEnd(13));
      segment = seg;
    }
    for (const g of ghosts.get(i) ?? []) wrap.word(`⟨missing ${g}⟩`);
    for (const m of starts.get(i) ?? []) wrap.word(`⟦${m}⟧`);
    wrap.word(words(i));
  }
  wrap.end();
  for (const g of ghosts.get(c.length) ?? []) out.line(`${''.padEnd(13)} ⟨missing ${g}⟩`);
  out.line('');
  out.line('[x] special token   «x» marker spelled as ordinary text   ⟦#n⟧ finding n starts   · space   ↵ newline');

  const a = s.accounting;
  out.line('');
  out.line(`accounting: ${plural(a.counted, 'completion token')} counted${a.countedReasoning ? ` (${a.countedReasoning} reasoning)` : ''}`);
  if (s.notEmitted)
    out.line(`            the first ${plural(s.notEmitted, 'token')} are the prompt's generation prompt, not the model's: not counted`);
  if (a.billed !== undefined) {
    const reasoning = a.billedReasoning !== undefined ? ` (${a.billedReasoning} reasoning)` : '';
    out.line(
      `            ${a.billed} billed${reasoning}, difference ${a.delta! > 0 ? '+' : ''}${a.delta}${a.mismatch ? '  MISMATCH' : ''}`,
    );
  } else {
    out.line('            the response reports no completion token usage');
  }
  const pa = a.prompt;
  if (pa) {
    const billed =
      pa.billed === undefined
        ? 'the response reports no prompt token usage'
        : `${pa.billed} billed, difference ${pa.delta! > 0 ? '+' : ''}${pa.delta}${pa.mismatch ? '  MISMATCH' : ''}`;
    out.line(`prompt:     ${plural(pa.counted, 'token')} rendered with the model's chat template; ${billed}`);
  }
  if (s.findings.length) out.line('');
  s.findings.forEach((f, i) => {
    const where = f.tokens && f.tokens[1] > f.tokens[0] ? ` tokens ${f.tokens[0]}–${f.tokens[1] - 1}` : '';
    out.line(`#${i + 1} ${p.severity(f.finding.severity, f.finding.severity.padEnd(7))} ${p.rule(f.finding.rule)}${where}`);
    out.line(`   ${safeLine(f.finding.message)}`);
  });
  out.flush();
}

/** The readable view as one string (a stream of token objects, or a table). */
export function formatStream(label: string, s: TokenStream | TokenTable, p: Palette = palette(false)): string {
  const pieces: string[] = [];
  writeText(label, 'columns' in s ? s : tableOf(s), p, (t) => pieces.push(t));
  return pieces.join('\n');
}

/** Lines of words wrapped at WIDTH after a prefix (the segment's label, then as many spaces), a word at a time. */
class Wrap {
  private prefix = 0;
  private line: string | undefined;
  constructor(private readonly out: Pieces) {}

  start(prefix: string): void {
    this.prefix = prefix.length;
    this.line = prefix;
  }

  word(w: string): void {
    if (this.line === undefined) return;
    if (this.line.length > this.prefix && this.line.length + 1 + w.length > WIDTH) {
      this.out.line(this.line);
      this.line = ' '.repeat(this.prefix);
    }
    this.line += ` ${w}`;
  }

  end(): void {
    if (this.line !== undefined) this.out.line(this.line);
    this.line = undefined;
  }
}

function segmentLabel(segment: SegmentKind | undefined, callIndex: number | undefined): string {
  if (!segment) return '';
  return callIndex === undefined || segment === 'section' ? segment : `${segment}[${callIndex}]`;
}

/** Token `i`'s word in the view: `[special]`, `«marker piece»`, or its text; made once per label and kind. */
function labelWords(s: TokenTable): (i: number) => string {
  const c = s.columns;
  const made = new Map<number, string>();
  return (i) => {
    const key = c.label[i] * 4 + c.kinds[i];
    let w = made.get(key);
    if (w === undefined) {
      const text = safeLine(c.labels[c.label[i]].text, 200);
      w = c.kinds[i] === SPECIAL ? `[${text}]` : c.kinds[i] === MARKER_AS_TEXT ? `«${text}»` : text;
      made.set(key, w);
    }
    return w;
  };
}
