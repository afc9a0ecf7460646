/**
 * Two token streams aligned for a side-by-side view. Pure (no `vscode` import).
 *
 * Tokens are compared by id: two providers of the same model share a tokenizer, so the same id is the same token,
 * and a marker that one provider sends as a real special id while another spells it out as text shows up as a
 * change — exactly what a user comparing providers needs to see.
 *
 * The alignment is Myers' O(ND) shortest edit script after stripping the common start and end. Two samples of a
 * sampled model can differ almost everywhere; past `maxEdits` the alignment stops and only the common start and end
 * are aligned (`coarse`), which keeps the host responsive on 200,000-token streams. Long identical runs are folded,
 * and overlong changes are cut, so what is posted to the webview stays small.
 */
import type { DiffHunk, DiffToken, TokenDiffSide, TokenDiffView } from '../../../webview/compare/protocol';
import type { TokenStreamView } from '../../../webview/protocol';

export type EditOp = { op: 'equal' | 'delete' | 'insert'; a: number; b: number; length: number };

/**
 * The shortest edit script turning `a` into `b`, as runs: `equal` a[a..a+length) = b[b..b+length), `delete`
 * a[a..a+length), `insert` b[b..b+length). Undefined when more than `maxEdits` insertions + deletions are needed.
 */
export function editScript(a: ArrayLike<number>, b: ArrayLike<number>, maxEdits = 2000): EditOp[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] = v over diagonals [-d, d] after step d, for the backtrack.
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  if (found < 0) return undefined;

  // Backtrack from (n, m) to (0, 0), one edit per step, collecting single moves in reverse.
  const moves: ('equal' | 'delete' | 'insert')[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1];
    const at = (k: number) => prev[k + d - 1];
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    // The snake after the move: diagonal steps back until one coordinate reaches the move's end point.
    while (x > prevX && y > prevY) {
      moves.push('equal');
      x--;
      y--;
    }
    moves.push(down ? 'insert' : 'delete');
    x = prevX;
    y = prevY;
  }
  for (; x > 0 && y > 0; x--, y--) moves.push('equal');

  const ops: EditOp[] = [];
  let ai = 0;
  let bi = 0;
  for (let i = moves.length - 1; i >= 0; i--) {
    const op = moves[i];
    const last = ops[ops.length - 1];
    if (last && last.op === op) last.length++;
    else ops.push({ op, a: ai, b: bi, length: 1 });
    if (op !== 'insert') ai++;
    if (op !== 'delete') bi++;
  }
  return ops;
}

export interface AlignOptions {
  /** Edit budget of the alignment (see editScript). */
  maxEdits?: number;
  /** Identical tokens kept on each side of a change; longer identical runs are folded. */
  context?: number;
  /** Most tokens shown per side of one change. */
  maxChange?: number;
}

interface Side {
  label: string;
  exchangeId: string;
  stream?: TokenStreamView;
  reason?: string;
}

function token(s: TokenStreamView, i: number): DiffToken {
  return { id: s.ids[i], text: s.texts[i], kind: s.kinds[i], segment: s.segments[i] };
}

function sideInfo(s: Side): TokenDiffSide {
  return {
    label: s.label,
    exchangeId: s.exchangeId,
    tokenizer: s.stream?.tokenizer,
    tokens: s.stream?.ids.length ?? 0,
    reason: s.stream ? undefined : s.reason,
  };
}

/** The aligned view of two token streams (a side without a stream counts as empty and says why). */
export function alignTokenStreams(left: Side, right: Side, opts: AlignOptions = {}): TokenDiffView {
  const context = opts.context ?? 8;
  const maxChange = opts.maxChange ?? 2000;
  const a = left.stream?.ids ?? [];
  const b = right.stream?.ids ?? [];
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;

  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const middle = editScript(midA, midB, opts.maxEdits);
  const ops: EditOp[] = [];
  if (pre) ops.push({ op: 'equal', a: 0, b: 0, length: pre });
  if (middle) for (const o of middle) ops.push({ ...o, a: o.a + pre, b: o.b + pre });
  else {
    if (midA.length) ops.push({ op: 'delete', a: pre, b: pre, length: midA.length });
    if (midB.length) ops.push({ op: 'insert', a: a.length - suf, b: pre, length: midB.length });
  }
  if (suf) ops.push({ op: 'equal', a: a.length - suf, b: b.length - suf, length: suf });

  const hunks: DiffHunk[] = [];
  let same = 0;
  let onlyLeft = 0;
  let onlyRight = 0;
  let firstDifference: number | undefined;
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i];
    if (o.op === 'equal') {
      same += o.length;
      const keepHead = i === 0 ? 0 : context;
      const keepTail = i === ops.length - 1 ? 0 : context;
      const range = (from: number, to: number) => Array.from({ length: to - from }, (_, j) => token(left.stream!, o.a + from + j));
      // Fold only when it hides a worthwhile amount (a one-token "skip" row would cost more than it saves).
      if (o.length - keepHead - keepTail > context) {
        if (keepHead) hunks.push({ kind: 'equal', tokens: range(0, keepHead) });
        hunks.push({ kind: 'skip', count: o.length - keepHead - keepTail });
        if (keepTail) hunks.push({ kind: 'equal', tokens: range(o.length - keepTail, o.length) });
      } else hunks.push({ kind: 'equal', tokens: range(0, o.length) });
      continue;
    }
    // A change is a run of deletions and insertions between two equal runs.
    let del: EditOp | undefined;
    let ins: EditOp | undefined;
    for (; i < ops.length && ops[i].op !== 'equal'; i++) {
      if (ops[i].op === 'delete') del = ops[i];
      else ins = ops[i];
    }
    i--;
    firstDifference ??= del?.a ?? ins!.a;
    const nl = del?.length ?? 0;
    const nr = ins?.length ?? 0;
    onlyLeft += nl;
    onlyRight += nr;
    const take = (s: TokenStreamView | undefined, op: EditOp | undefined, at: 'a' | 'b') =>
      op && s ? Array.from({ length: Math.min(op.length, maxChange) }, (_, j) => token(s, op[at] + j)) : [];
    const hunk: DiffHunk = { kind: 'change', left: take(left.stream, del, 'a'), right: take(right.stream, ins, 'b') };
    if (nl > maxChange || nr > maxChange) hunk.omitted = [Math.max(0, nl - maxChange), Math.max(0, nr - maxChange)];
    hunks.push(hunk);
  }
  return {
    left: sideInfo(left),
    right: sideInfo(right),
    hunks,
    same,
    onlyLeft,
    onlyRight,
    firstDifference,
    coarse: middle ? undefined : true,
  };
}
