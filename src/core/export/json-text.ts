/**
 * JSON text for exports, whatever the nesting. A captured request is the agent's own JSON: a tool schema can nest
 * thousands of levels (10,000 nested objects is a 300 KB body), and `JSON.stringify` recurses: past a few thousand
 * levels it throws "Maximum call stack size exceeded". The native call runs first (it is the fast path, and the
 * output is the same); only a value too deep for it is written by the loop below, with an explicit stack.
 */

/** `JSON.stringify(value, null, space)` for JSON data (objects, arrays, strings, numbers, booleans, null). */
export function jsonText(value: unknown, space = 0): string {
  try {
    return JSON.stringify(value, null, space);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return deepJsonText(value, space);
  }
}

/** How many levels of objects and arrays a value nests (iterative; stops counting at `limit`). */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const d = depth + 1;
    if (d > max) max = d;
    if (max >= limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, d]);
  }
  return max;
}

type Frame =
  | { kind: 'array'; items: unknown[]; i: number; indent: string; level: number }
  | { kind: 'object'; entries: [string, unknown][]; i: number; indent: string; level: number; wrote: boolean };

/**
 * Levels written indented, with `space`; deeper ones are written compact (indenting 10,000 levels would be hundreds of
 * megabytes of spaces, past the longest string JavaScript holds).
 */
const INDENTED_LEVELS = 64;

/**
 * The same text as `JSON.stringify(value, null, space)`, written with a stack instead of recursion (past
 * INDENTED_LEVELS levels without indentation: the same JSON value).
 */
export function deepJsonText(value: unknown, space = 0): string {
  const spaces = ' '.repeat(Math.min(10, Math.max(0, Math.floor(space))));
  const pretty = (level: number) => spaces !== '' && level <= INDENTED_LEVELS;
  const colon = (level: number) => (pretty(level) ? ': ' : ':');
  const out: string[] = [];
  const stack: Frame[] = [];
  /** A scalar's text, or undefined for what JSON leaves out (undefined, functions, symbols). */
  const scalar = (v: unknown): string | undefined => {
    if (v === null) return 'null';
    if (typeof v === 'object') return undefined;
    if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
    if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
    if (typeof v === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
    return undefined;
  };
  /** Writes `v` (a JSON value: `toJSON` applied, writable) at `indent`: a scalar at once, a container as a new frame. */
  const open = (v: unknown, indent: string, level: number) => {
    const s = scalar(v);
    if (s !== undefined) return void out.push(s);
    if (Array.isArray(v)) {
      if (v.length === 0) return void out.push('[]');
      out.push('[');
      stack.push({ kind: 'array', items: v, i: 0, indent, level });
    } else {
      const entries = Object.entries(v as object)
        .map(([k, x]): [string, unknown] => [k, toJsonValue(x)])
        .filter(([, x]) => writable(x));
      if (entries.length === 0) return void out.push('{}');
      out.push('{');
      stack.push({ kind: 'object', entries, i: 0, indent, level, wrote: false });
    }
  };
  const top = toJsonValue(value);
  if (!writable(top)) return undefined as unknown as string;
  open(top, '', 1);
  while (stack.length > 0) {
    const f = stack[stack.length - 1];
    const nl = pretty(f.level) ? '\n' : '';
    const inner = pretty(f.level) ? f.indent + spaces : '';
    const close = pretty(f.level) ? f.indent : '';
    if (f.kind === 'array') {
      if (f.i === f.items.length) {
        stack.pop();
        out.push(`${nl}${close}]`);
        continue;
      }
      const item = toJsonValue(f.items[f.i++]);
      out.push(`${f.i > 1 ? ',' : ''}${nl}${inner}`);
      if (writable(item)) open(item, inner, f.level + 1);
      else out.push('null');
    } else {
      if (f.i === f.entries.length) {
        stack.pop();
        out.push(`${nl}${close}}`);
        continue;
      }
      const [k, item] = f.entries[f.i++];
      out.push(`${f.wrote ? ',' : ''}${nl}${inner}${JSON.stringify(k)}${colon(f.level)}`);
      f.wrote = true;
      open(item, inner, f.level + 1);
    }
  }
  return out.join('');
}

/** What JSON.stringify writes for `v`: its `toJSON()` when it has one (a Date). */
function toJsonValue(v: unknown): unknown {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function'
    ? (v as { toJSON(): unknown }).toJSON()
    : v;
}

function writable(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
}
