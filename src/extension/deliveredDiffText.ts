/**
 * The two documents of Raw ⇄ Delivered, built so VS Code's diff editor shows what repair mode changed. Pure (no
 * `vscode` import).
 *
 * A streamed body is compared event by event, by payload: each SSE event's data parsed as JSON (key order and spacing
 * do not count), so an event repair passed through or re-serialized unchanged is equal, and only the events repair
 * held back, rewrote or added differ. Fields every event carries with the same value (`id`, `model`, `created`…) are
 * named once at the top instead of opening every event, and each event is pretty-printed to the width a side of the
 * diff shows (fitJson): a change is highlighted where it can be seen, never off-screen at the end of a long
 * `data: {"id":"gen-…` line. Runs of equal
 * events are folded to one line (the same on both sides), with CONTEXT events kept beside each change. A whole body
 * (not a stream) is pretty-printed JSON on both sides.
 */
import { parseSse } from '../core/wire/sse';

/** Lines are kept to this width where the values allow: a side of a side-by-side diff shows about as much. */
export const WIDTH = 80;
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
    return { event: e.event, comment: e.comment, value, json, key: `${e.comment ? ':' : ''}${e.event ?? ''}\n${json ? canonical(value) : String(value)}` };
  });
}

type Primitive = string | number | boolean | null;
const isPrimitive = (v: unknown): v is Primitive => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** Top-level fields that hold the same primitive value in every JSON event that has them, and are in two or more. */
function envelopeOf(all: readonly Ev[]): Map<string, Primitive> {
  const seen = new Map<string, { value: Primitive; count: number } | null>();
  for (const e of all) {
    if (!e.json || !e.value || typeof e.value !== 'object' || Array.isArray(e.value)) continue;
    for (const [k, v] of Object.entries(e.value as Record<string, unknown>)) {
      const s = seen.get(k);
      if (s === null) continue;
      if (!isPrimitive(v) || (s && s.value !== v)) seen.set(k, null);
      else seen.set(k, { value: v, count: (s?.count ?? 0) + 1 });
    }
  }
  const out = new Map<string, Primitive>();
  for (const [k, s] of seen) if (s && s.count >= 2) out.set(k, s.value);
  return out;
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
  if (v && typeof v === 'object') return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${JSON.stringify(k)}: ${oneLine(x)}`).join(', ')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** One event as shown: its SSE fields, and its payload without the envelope, fitted to WIDTH (fitJson). */
function eventText(e: Ev, envelope: Map<string, Primitive>): string {
  if (e.comment) return `: ${String(e.value)}`;
  const lines = e.event !== undefined ? [`event: ${e.event}`] : [];
  if (!e.json) lines.push(`data: ${String(e.value)}`);
  else {
    let v = e.value;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      v = Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k, x]) => !envelope.has(k) || envelope.get(k) !== x));
    }
    lines.push(`data: ${fitJson(v, WIDTH, 0, 'data: '.length)}`);
  }
  return lines.join('\n');
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
        lcs[i * w + j] = left[start + i] === right[start + j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
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
  const envelope = envelopeOf([...a, ...b]);
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
      if (op.kind === 'removed') (left.push(eventText(a[op.a], envelope)), removed++);
      else (right.push(eventText(b[op.b], envelope)), added++);
      k++;
      continue;
    }
    let run = k;
    while (run < ops.length && ops[run].kind === 'equal') run++;
    const keepBefore = k === 0 ? 0 : CONTEXT; // after a change
    const keepAfter = run === ops.length ? 0 : CONTEXT; // before a change
    const equal = (i: number) => both(eventText(a[(ops[i] as { a: number }).a], envelope));
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
  const changes = removed || added ? `${removed} only upstream (held back or rewritten by repair), ${added} only delivered (written by repair)` : 'the same events, payload for payload';
  const summary = `Raw ⇄ Delivered, event by event: ${counts}; ${changes}.`;
  const env = [...envelope].map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(', ');
  const head = [summary, ...(env ? [`Fields every event shares, not repeated below: ${env}.`] : [])];
  const doc = (shown: string[]) => `${head.join('\n')}\n\n${shown.join('\n\n')}\n`;
  return { upstream: doc(left), delivered: doc(right), summary, removed, added, folded };
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The diff editor's two documents for an exchange's upstream and delivered bytes. */
export function deliveredDiffDocuments(upstream: Uint8Array, delivered: Uint8Array): DiffDocuments {
  const up = decoder.decode(upstream);
  const down = decoder.decode(delivered);
  if (isSse(up) || isSse(down)) return sseDocuments(up, down);
  const left = pretty(up).split('\n');
  const right = pretty(down).split('\n');
  const ops = alignKeys(left, right);
  const removed = ops.filter((o) => o.kind === 'removed').length;
  const added = ops.filter((o) => o.kind === 'added').length;
  const summary = `Raw ⇄ Delivered, the whole body: ${removed || added ? `${plural(removed, 'line')} only upstream, ${plural(added, 'line')} only delivered` : 'the same JSON'}.`;
  return { upstream: `${summary}\n\n${left.join('\n')}\n`, delivered: `${summary}\n\n${right.join('\n')}\n`, summary, removed, added, folded: 0 };
}
