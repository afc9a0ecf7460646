/**
 * JSON reports written in pieces: the text of `JSON.stringify(value, null, 2)`, produced field by field and handed to
 * a sink in chunks of about 64 K characters, so a report that holds a whole model output (a 20 MB `content`) is never
 * built as one string, nor encoded as one buffer.
 *
 * One difference from `JSON.stringify`, for the terminal: DEL and the C1 controls (U+007F–U+009F) are written as
 * `\u007f`…`\u009f` escapes, not raw. JSON.stringify already escapes every C0 control, so the output carries no
 * control character at all, stays valid JSON, and needs no terminal guard (terminal.ts) after it.
 */

import type { CheckContext } from '../core/checks/types';
import { messagePartsOf, PART_SEPARATOR } from '../core/families/shared/build';
import type { TurnReport } from '../core/parsed';
import type { CliIO } from './io';

/** About how many characters a chunk handed to the sink holds. */
const CHUNK = 1 << 16;
/** Strings at least this long are escaped in pieces, straight to the sink. */
const LONG = 1 << 12;

/** Characters a JSON string must escape (with the C1 controls and lone surrogates) — one scan finds the next. */
const ESCAPE = /["\\\u0000-\u001f\u007f-\u009f\ud800-\udfff]/g;
const C1 = /[\u007f-\u009f]/;
const C1_ALL = /[\u007f-\u009f]/g;

const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function unicodeEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

function escapeChar(c: string): string {
  return SHORT[c] ?? unicodeEscape(c.charCodeAt(0));
}

/** `JSON.stringify(s)` of a short string, with the C1 controls escaped. */
function quoteShort(s: string): string {
  const q = JSON.stringify(s);
  return C1.test(s) ? q.replace(C1_ALL, escapeChar) : q;
}

/**
 * Writes `JSON.stringify(value, null, 2)` (C1 controls escaped, see above) to `sink` in chunks. Throws what
 * JSON.stringify throws (a BigInt, a cycle); an undefined, function or symbol value writes nothing.
 */
export function writeJson(value: unknown, sink: (chunk: string) => void): void {
  const w = new Writer(sink);
  const v = resolve({ '': value }, '', value);
  if (v === undefined) return;
  w.value(v, '');
  w.flush();
}

/** The JSON text `writeJson` writes, as one string (for callers that print it whole; small reports). */
export function jsonText(value: unknown): string {
  const parts: string[] = [];
  writeJson(value, (c) => parts.push(c));
  return parts.join('');
}

/**
 * A string made of parts: written as the JSON string of `parts.join(separator)` without building it (a 20 MB content
 * in two regions is not copied). Anything else serializing it (`JSON.stringify`) gets the joined string.
 */
export class JoinedText {
  constructor(
    readonly parts: readonly string[],
    readonly separator: string,
  ) {}

  toJSON(): string {
    return this.parts.join(this.separator);
  }
}

/**
 * `lint --json`'s report as written: a content or reasoning the family parse joined from several regions is given as
 * those regions (`JoinedText`), so the joined text is never built. The JSON text is the same.
 */
export function reportJson(report: TurnReport, ctx: CheckContext | undefined): unknown {
  const parsed = ctx?.native.source === 'raw' ? ctx.parsed : undefined;
  const parts = parsed && messagePartsOf(parsed.message);
  if (!parsed || !parts) return report;
  const joined = (value: string | null, from: string | undefined, list: readonly string[] | undefined) =>
    list && value !== null && value === from ? new JoinedText(list, PART_SEPARATOR) : value;
  return {
    ...report,
    content: joined(report.content, parsed.message.content, parts.content),
    reasoning: joined(report.reasoning, parsed.message.reasoning, parts.reasoning),
  };
}

/**
 * The value JSON.stringify serializes for `holder[key]`: `toJSON` applied, boxed primitives unwrapped; undefined for
 * what it leaves out (undefined, functions, symbols).
 */
function resolve(holder: object, key: string, value: unknown): unknown {
  if (value instanceof JoinedText) return value;
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = toJSON.call(value, key);
  }
  if (typeof value === 'object' && value !== null) {
    if (value instanceof Number) return Number(value);
    if (value instanceof String) return String(value);
    if (value instanceof Boolean) return value.valueOf();
  }
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}

class Writer {
  private parts: string[] = [];
  private size = 0;
  private readonly stack: object[] = [];

  constructor(private readonly sink: (chunk: string) => void) {}

  put(s: string): void {
    this.parts.push(s);
    this.size += s.length;
    if (this.size >= CHUNK) this.flush();
  }

  flush(): void {
    if (this.parts.length === 0) return;
    const chunk = this.parts.length === 1 ? this.parts[0] : this.parts.join('');
    this.parts = [];
    this.size = 0;
    if (chunk) this.sink(chunk);
  }

  /** A value already resolved (never undefined). */
  value(v: unknown, indent: string): void {
    if (v === null) return this.put('null');
    switch (typeof v) {
      case 'string':
        return v.length < LONG ? this.put(quoteShort(v)) : this.longString(v);
      case 'number':
        return this.put(Number.isFinite(v) ? String(v) : 'null');
      case 'boolean':
        return this.put(v ? 'true' : 'false');
      case 'bigint':
        JSON.stringify(v); // throws JSON.stringify's own TypeError
        return;
    }
    if (v instanceof JoinedText) return this.joined(v);
    const o = v as object;
    if (this.stack.includes(o)) JSON.stringify(o); // a cycle: throws JSON.stringify's TypeError
    this.stack.push(o);
    const inner = indent + '  ';
    if (Array.isArray(o)) {
      if (o.length === 0) this.put('[]');
      else {
        this.put('[\n' + inner);
        for (let i = 0; i < o.length; i++) {
          if (i > 0) this.put(',\n' + inner);
          const item = resolve(o, String(i), o[i]);
          if (item === undefined) this.put('null');
          else this.value(item, inner);
        }
        this.put('\n' + indent + ']');
      }
    } else {
      const members: [string, unknown][] = [];
      for (const k of Object.keys(o)) {
        const item = resolve(o, k, (o as Record<string, unknown>)[k]);
        if (item !== undefined) members.push([k, item]);
      }
      if (members.length === 0) this.put('{}');
      else {
        this.put('{\n' + inner);
        members.forEach(([k, item], i) => {
          this.put((i > 0 ? ',\n' + inner : '') + quoteShort(k) + ': ');
          this.value(item, inner);
        });
        this.put('\n' + indent + '}');
      }
    }
    this.stack.pop();
  }

  /** A string given as its parts (`JoinedText`), written as the JSON string of the parts joined. */
  joined(t: JoinedText): void {
    const { parts, separator } = t;
    // A surrogate pair split between two parts is one character of the joined text: such text is joined first.
    const pieces = parts.flatMap((p, i) => (i === 0 ? [p] : [separator, p])).filter((p) => p !== '');
    for (let i = 0; i + 1 < pieces.length; i++) {
      const a = pieces[i].charCodeAt(pieces[i].length - 1);
      const b = pieces[i + 1].charCodeAt(0);
      if (a >= 0xd800 && a <= 0xdbff && b >= 0xdc00 && b <= 0xdfff) return this.value(t.toJSON(), '');
    }
    this.put('"');
    for (const p of pieces) this.stringBody(p);
    this.put('"');
  }

  /**
   * A long string, escaped as JSON.stringify escapes it: runs that need no escape go out as slices of the string (no
   * copy is made of them until the sink encodes them), each escape in between.
   */
  private longString(s: string): void {
    this.put('"');
    this.stringBody(s);
    this.put('"');
  }

  /** The escaped characters of `s`, without quotes. */
  private stringBody(s: string): void {
    let from = 0;
    ESCAPE.lastIndex = 0;
    while (ESCAPE.test(s)) {
      const at = ESCAPE.lastIndex - 1;
      const code = s.charCodeAt(at);
      if (code >= 0xd800 && code <= 0xdbff && at + 1 < s.length) {
        const low = s.charCodeAt(at + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          // A surrogate pair is written as it is.
          ESCAPE.lastIndex = at + 2;
          continue;
        }
      }
      this.run(s, from, at);
      this.put(code >= 0xd800 ? unicodeEscape(code) : escapeChar(s[at]));
      from = at + 1;
    }
    this.run(s, from, s.length);
  }

  /** `s[from, to)`, which needs no escaping. */
  private run(s: string, from: number, to: number): void {
    if (to <= from) return;
    if (to - from < CHUNK) return this.put(s.slice(from, to));
    this.flush();
    for (let at = from; at < to; ) {
      let end = Math.min(to, at + CHUNK);
      // Never between the halves of a surrogate pair: the sink encodes each chunk on its own.
      const last = s.charCodeAt(end - 1);
      if (end < to && last >= 0xd800 && last <= 0xdbff) end--;
      this.sink(s.slice(at, end));
      at = end;
    }
  }
}

/**
 * Prints a JSON report and its final newline: streamed to stdout in chunks when the io can write them (`write`), else
 * gathered and printed whole with `out`. The text is the same either way.
 */
export function printJson(io: CliIO, value: unknown): void {
  const write = io.write;
  if (!write) return io.out(jsonText(value));
  writeJson(value, (chunk) => write.call(io, chunk));
  write.call(io, '\n');
}
