/**
 * The two documents of Raw ⇄ Delivered, built so VS Code's diff editor shows what repair mode changed. Pure (no
 * `vscode` import).
 *
 * A streamed body is compared event by event, by payload: each SSE event's data parsed as JSON (key order and spacing
 * do not count), so an event repair passed through or re-serialized unchanged is equal, and only the events repair
 * held back, rewrote or added differ. The fields most events share with the same value (`id`, `model`, `created`,
 * `choices[0].index`, a null `finish_reason`…) are named once at the top and left out of the events (sharedFields), so
 * an event is a short line of what sets it apart, pretty-printed to the width a side of the diff shows when longer
 * (fitJson): a change is highlighted where it can be seen, never off-screen at the end of a long `data: {"id":"gen-…`
 * line. Runs of equal
 * events are folded to one line (the same on both sides), with CONTEXT events kept beside each change. A whole body
 * (not a stream) is pretty-printed JSON on both sides.
 */
import { parseSse } from '../core/wire/sse';

/** Lines are kept to this width where the values allow: a side of a side-by-side diff beside the sidebar shows about as much. */
export const WIDTH = 64;
/** Equal events kept beside a change, before and after. */
export const CONTEXT = 1;
/** Above this many pairs (events left × right, past the common start and end) the middle is shown as one change. */
const MAX_ALIGNMENT = 4_000_000;

export interface DiffDocuments {
  upstream: string;
  delivered: string;
  /** One line: what differs (also the first line of both documents). */
  summary: string;
  /** Events (or, for a whole body, lines) only upstream / only delivered. */
  removed: number;
  added: number;
  /** Equal events not shown. */
  folded: number;
}

interface Ev {
  event?: string;
  comment?: boolean;
  /** Parsed JSON data, or the data as text when it is not JSON (`[DONE]`). */
  value: unknown;
  json: boolean;
  /** What two events are compared by: their name and their payload, canonical. */
  key: string;
}

const decoder = new TextDecoder();

function isSse(text: string): boolean {
  return /^\uFEFF?\s*(data|event|id|retry)?:/.test(text);
}

/** JSON with keys sorted at every level: two payloads that differ only in key order or spacing are equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

function parse(data: string): { value: unknown; json: boolean } {
  const t = data.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return { value: JSON.parse(t), json: true };
    } catch {
      /* shown as text */
    }
  }
  return { value: data, json: false };
}

function events(text: string): Ev[] {
  return parseSse(text).map((e) => {
    const { value, json } = e.comment ? { value: e.data, json: false } : parse(e.data);
    return {
      event: e.event,
      comment: e.comment,
      value,
      json,
      key: `${e.comment ? ':' : ''}${e.event ?? ''}\n${json ? canonical(value) : String(value)}`,
    };
  });
}

/** A place in a payload: object keys and array indexes, from the top. */
type Path = (string | number)[];

function pathText(path: Path): string {
  return path
    .map((k, i) => (typeof k === 'number' ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${i ? '.' : ''}${k}` : `[${JSON.stringify(k)}]`))
    .join('');
}

const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => v !== null && typeof v === 'object';

/** Every leaf of a payload (a primitive, or an empty object or array) with its path. */
function leaves(v: unknown, path: Path, out: { path: Path; value: unknown }[]): void {
  if (isContainer(v) && Object.keys(v).length > 0) {
    if (Array.isArray(v)) v.forEach((x, i) => leaves(x, [...path, i], out));
    else for (const [k, x] of Object.entries(v)) leaves(x, [...path, k], out);
  } else out.push({ path, value: v });
}

/**
 * The shared fields: each leaf path whose most frequent value is held by at least half of the JSON events on each side
 * (and two or more), with that value. They are named once at the top and left out of every event that has them, so
 * an event shows only what sets it apart (`{"choices": [{"delta": {"content": "Hi"}}]}`), not its `id`, `model`,
 * `created`, `index`, `role` and null `finish_reason` again. Each side must agree: an empty `content` repair wrote
 * into the events it held back is no shared field of the upstream's.
 */
function sharedFields(sides: readonly (readonly Ev[])[]): Map<string, { path: Path; value: unknown; key: string }> {
  const objects = sides.map((side) => side.filter((e) => e.json && isContainer(e.value) && !Array.isArray(e.value)));
  const counts = new Map<string, { path: Path; values: Map<string, { value: unknown; n: number[] }> }>();
  objects.forEach((side, i) => {
    for (const e of side) {
      const found: { path: Path; value: unknown }[] = [];
      leaves(e.value, [], found);
      for (const { path, value } of found) {
        const p = pathText(path);
        let c = counts.get(p);
        if (!c) counts.set(p, (c = { path, values: new Map() }));
        const key = canonical(value);
        let v = c.values.get(key);
        if (!v) c.values.set(key, (v = { value, n: sides.map(() => 0) }));
        v.n[i]++;
      }
    }
  });
  const out = new Map<string, { path: Path; value: unknown; key: string }>();
  for (const [p, c] of counts) {
    for (const [key, v] of c.values) {
      const everywhere = v.n.every((n, i) => objects[i].length === 0 || (n * 2 >= objects[i].length && n > 0));
      if (everywhere && v.n.reduce((a, b) => a + b, 0) >= 2) {
        out.set(p, { path: c.path, value: v.value, key });
        break;
      }
    }
  }
  return out;
}

type Shared = ReturnType<typeof sharedFields>;
const DROP = Symbol('drop');

/** The payload without its shared fields; DROP when nothing else is left in it. */
function strip(v: unknown, path: Path, shared: Shared): unknown {
  const s = shared.get(pathText(path));
  if (!isContainer(v) || Object.keys(v).length === 0) return s && s.key === canonical(v) ? DROP : v;
  if (Array.isArray(v)) {
    const items = v.map((x, i) => strip(x, [...path, i], shared));
    // Elements keep their places (an index means something): a dropped one stays as {}.
    return items.every((x) => x === DROP) ? DROP : items.map((x) => (x === DROP ? {} : x));
  }
  const kept = Object.entries(v).flatMap(([k, x]) => {
    const y = strip(x, [...path, k], shared);
    return y === DROP ? [] : [[k, y] as const];
  });
  return kept.length ? Object.fromEntries(kept) : DROP;
}

/** Shared fields the event does not have although it has their container: said, since leaving them out says "as above". */
function missingShared(v: unknown, shared: Shared): string[] {
  const out: string[] = [];
  for (const [p, s] of shared) {
    let at: unknown = v;
    for (let i = 0; i < s.path.length; i++) {
      if (!isContainer(at)) break;
      const k = s.path[i];
      const has = Array.isArray(at) ? typeof k === 'number' && k < at.length : Object.hasOwn(at, k);
      if (!has) {
        if (i === s.path.length - 1) out.push(p); // the container is there, the field is not
        break;
      }
      at = (at as Record<string | number, unknown>)[k];
    }
  }
  return out;
}

/** One event as shown: its SSE fields, and its payload without the shared fields, fitted to WIDTH (fitJson). */
function eventText(e: Ev, shared: Shared): string {
  if (e.comment) return `: ${String(e.value)}`;
  const lines = e.event !== undefined ? [`event: ${e.event}`] : [];
  if (!e.json) lines.push(`data: ${String(e.value)}`);
  else {
    const isObject = isContainer(e.value) && !Array.isArray(e.value);
    const v = isObject ? strip(e.value, [], shared) : e.value;
    lines.push(v === DROP ? 'data: {} (the shared fields only)' : `data: ${fitJson(v, WIDTH, 0, 'data: '.length)}`);
    const missing = isObject ? missingShared(e.value, shared) : [];
    if (missing.length) lines.push(`(without ${missing.join(', ')})`);
  }
  return lines.join('\n');
}

/**
 * JSON pretty-printed to `width`: an object or array that fits on the rest of its line stays on it
 * (`"delta": {"role": "assistant", "content": "Hi"}`), a longer one gets a line per member.
 */
export function fitJson(v: unknown, width = WIDTH, indent = 0, used = 0): string {
  const flat = oneLine(v);
  if (used + flat.length <= width || v === null || typeof v !== 'object' || Object.keys(v as object).length === 0) return flat;
  const pad = ' '.repeat(indent + 2);
  const members = Array.isArray(v)
    ? v.map((x) => pad + fitJson(x, width, indent + 2, pad.length))
    : Object.entries(v as Record<string, unknown>).map(([k, x]) => {
        const key = `${pad}${JSON.stringify(k)}: `;
        return key + fitJson(x, width, indent + 2, key.length);
      });
  const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
  return `${open}\n${members.join(',\n')}\n${' '.repeat(indent)}${close}`;
}

/** JSON on one line, spaced as people write it: `{"a": 1, "b": [2, 3]}`. */
function oneLine(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(oneLine).join(', ')}]`;
  if (v && typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${oneLine(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v) ?? 'null';
}

type Op = { kind: 'equal'; a: number; b: number } | { kind: 'removed'; a: number } | { kind: 'added'; b: number };

/** An alignment of two key lists: common start and end, the middle by longest common subsequence when small enough. */
export function alignKeys(left: readonly string[], right: readonly string[]): Op[] {
  let start = 0;
  while (start < left.length && start < right.length && left[start] === right[start]) start++;
  let end = 0;
  while (end < left.length - start && end < right.length - start && left[left.length - 1 - end] === right[right.length - 1 - end]) end++;
  const ops: Op[] = [];
  for (let i = 0; i < start; i++) ops.push({ kind: 'equal', a: i, b: i });
  const n = left.length - start - end;
  const m = right.length - start - end;
  if (n > 0 && m > 0 && n * m <= MAX_ALIGNMENT) {
    // lcs[i][j]: the longest common subsequence of left[start+i…] and right[start+j…], in one flat array.
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] =
          left[start + i] === right[start + j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (left[start + i] === right[start + j]) ops.push({ kind: 'equal', a: start + i++, b: start + j++ });
      else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) ops.push({ kind: 'removed', a: start + i++ });
      else ops.push({ kind: 'added', b: start + j++ });
    }
    while (i < n) ops.push({ kind: 'removed', a: start + i++ });
    while (j < m) ops.push({ kind: 'added', b: start + j++ });
  } else {
    for (let i = 0; i < n; i++) ops.push({ kind: 'removed', a: start + i });
    for (let j = 0; j < m; j++) ops.push({ kind: 'added', b: start + j });
  }
  for (let k = 0; k < end; k++) ops.push({ kind: 'equal', a: left.length - end + k, b: right.length - end + k });
  return ops;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function foldLine(n: number): string {
  return `┄┄ ${plural(n, 'identical event')} folded ┄┄`;
}

function sseDocuments(upstreamText: string, deliveredText: string): DiffDocuments {
  const a = events(upstreamText);
  const b = events(deliveredText);
  const shared = sharedFields([a, b]);
  const ops = alignKeys(
    a.map((e) => e.key),
    b.map((e) => e.key),
  );
  const left: string[] = [];
  const right: string[] = [];
  let removed = 0;
  let added = 0;
  let folded = 0;
  const both = (t: string) => (left.push(t), right.push(t));
  for (let k = 0; k < ops.length; ) {
    const op = ops[k];
    if (op.kind !== 'equal') {
      if (op.kind === 'removed') left.push(eventText(a[op.a], shared)), removed++;
      else right.push(eventText(b[op.b], shared)), added++;
      k++;
      continue;
    }
    let run = k;
    while (run < ops.length && ops[run].kind === 'equal') run++;
    const keepBefore = k === 0 ? 0 : CONTEXT; // after a change
    const keepAfter = run === ops.length ? 0 : CONTEXT; // before a change
    const equal = (i: number) => both(eventText(a[(ops[i] as { a: number }).a], shared));
    if (run - k <= keepBefore + keepAfter + 1) for (let i = k; i < run; i++) equal(i);
    else {
      for (let i = k; i < k + keepBefore; i++) equal(i);
      const n = run - k - keepBefore - keepAfter;
      both(foldLine(n));
      folded += n;
      for (let i = run - keepAfter; i < run; i++) equal(i);
    }
    k = run;
  }
  const counts = `${plural(a.length, 'upstream event')}, ${plural(b.length, 'delivered event')}`;
  const changes =
    removed || added
      ? `${removed} only upstream (held back or rewritten by repair), ${added} only delivered (written by repair)`
      : 'the same events, payload for payload';
  const summary = `Raw ⇄ Delivered, event by event: ${counts}; ${changes}.`;
  const common = [...shared].map(([p, f]) => `  ${p}: ${oneLine(f.value)}`);
  const head = [summary, ...(common.length ? ['Fields most events share, left out of every event below that has them:', ...common] : [])];
  const doc = (shown: string[]) => `${head.join('\n')}\n\n${shown.join('\n')}\n`;
  return { upstream: doc(left), delivered: doc(right), summary, removed, added, folded };
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * The diff editor's two documents for an exchange's upstream and delivered bytes; `repaired` (what repair changed, in
 * the protocol's words: repairSummary) is named under the first line of both.
 */
export function deliveredDiffDocuments(upstream: Uint8Array, delivered: Uint8Array, repaired?: string): DiffDocuments {
  const docs = bodyDocuments(upstream, delivered);
  if (!repaired) return docs;
  const line = (doc: string) => doc.replace('\n', `\nRepaired: ${repaired}.\n`);
  return { ...docs, upstream: line(docs.upstream), delivered: line(docs.delivered) };
}

function bodyDocuments(upstream: Uint8Array, delivered: Uint8Array): DiffDocuments {
  const up = decoder.decode(upstream);
  const down = decoder.decode(delivered);
  if (isSse(up) || isSse(down)) return sseDocuments(up, down);
  const left = pretty(up).split('\n');
  const right = pretty(down).split('\n');
  const ops = alignKeys(left, right);
  const removed = ops.filter((o) => o.kind === 'removed').length;
  const added = ops.filter((o) => o.kind === 'added').length;
  const summary = `Raw ⇄ Delivered, the whole body: ${removed || added ? `${plural(removed, 'line')} only upstream, ${plural(added, 'line')} only delivered` : 'the same JSON'}.`;
  return {
    upstream: `${summary}\n\n${left.join('\n')}\n`,
    delivered: `${summary}\n\n${right.join('\n')}\n`,
    summary,
    removed,
    added,
    folded: 0,
  };
}
