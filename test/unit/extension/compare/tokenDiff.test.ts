import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignTokenStreams, editScript, type EditOp } from '../../../../src/extension/compare/tokenDiff';
import type { TokenStreamView } from '../../../../webview/protocol';

/** b rebuilt from a and the script (proves the script is a correct edit). */
function apply(a: number[], b: number[], ops: EditOp[]): number[] {
  const out: number[] = [];
  let ai = 0;
  let bi = 0;
  for (const o of ops) {
    assert.equal(o.a, ai, 'runs are contiguous in a');
    assert.equal(o.b, bi, 'runs are contiguous in b');
    if (o.op === 'equal') {
      for (let i = 0; i < o.length; i++) assert.equal(a[o.a + i], b[o.b + i]);
      out.push(...a.slice(o.a, o.a + o.length));
      ai += o.length;
      bi += o.length;
    } else if (o.op === 'delete') ai += o.length;
    else {
      out.push(...b.slice(o.b, o.b + o.length));
      bi += o.length;
    }
  }
  assert.equal(ai, a.length);
  return out;
}

function lcs(a: number[], b: number[]): number {
  const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) dp[i][j] = a[i - 1] === b[j - 1] ? dp[i - 1][j - 1] + 1 : Math.max(dp[i - 1][j], dp[i][j - 1]);
  return dp[a.length][b.length];
}

/** Deterministic pseudo-random numbers (xorshift), so a failure reproduces. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('editScript (Myers)', () => {
  it('finds a shortest edit script: matches a reference LCS on 300 random pairs', () => {
    const r = rng(42);
    for (let t = 0; t < 300; t++) {
      const gen = () => Array.from({ length: Math.floor(r() * 25) }, () => Math.floor(r() * 4));
      const a = gen();
      const b = gen();
      const ops = editScript(a, b)!;
      assert.deepEqual(apply(a, b, ops), b, `case ${t}: ${a} → ${b}`);
      const edits = ops.filter((o) => o.op !== 'equal').reduce((n, o) => n + o.length, 0);
      assert.equal(edits, a.length + b.length - 2 * lcs(a, b), `case ${t}: not minimal`);
    }
  });

  it('handles empty sides', () => {
    assert.deepEqual(editScript([], []), []);
    assert.deepEqual(editScript([1, 2], []), [{ op: 'delete', a: 0, b: 0, length: 2 }]);
    assert.deepEqual(editScript([], [7]), [{ op: 'insert', a: 0, b: 0, length: 1 }]);
  });

  it('gives up past its edit budget', () => {
    const a = Array.from({ length: 100 }, (_, i) => i);
    const b = Array.from({ length: 100 }, (_, i) => 1000 + i);
    assert.equal(editScript(a, b, 50), undefined);
    assert.ok(editScript(a, b, 200));
  });
});

const SPECIAL = 163595; // <|tool_calls_section_begin|> as a real special id

/** A token stream view of (id, text, kind) triples. */
function stream(tokens: [number, string, number?][], tokenizer = 'kimi-k2 (tiktoken)'): TokenStreamView {
  return {
    tokenizer,
    source: 'reconstructed',
    ids: tokens.map((t) => t[0]),
    texts: tokens.map((t) => t[1]),
    starts: tokens.map(() => 0),
    ends: tokens.map(() => 0),
    kinds: tokens.map((t) => t[2] ?? 0),
    segments: tokens.map(() => 0),
    accounting: [],
    findings: [],
  };
}

const words = (n: number, from = 0): [number, string][] => Array.from({ length: n }, (_, i) => [from + i, ` w${from + i}`]);

describe('alignTokenStreams', () => {
  it('shows a marker sent as a real special id on one side and spelled as text on the other as one change', () => {
    const left = stream([
      [1, 'I'],
      [2, ' will'],
      [SPECIAL, '<|tool_calls_section_begin|>', 1],
      [3, 'end'],
    ]);
    const right = stream([
      [1, 'I'],
      [2, ' will'],
      [27, '<|', 2],
      [9000, 'tool_calls_section_begin', 2],
      [91, '|>', 2],
      [3, 'end'],
    ]);
    const d = alignTokenStreams(
      { label: 'fireworks #1', exchangeId: 'a', stream: left },
      { label: 'chutes #1', exchangeId: 'b', stream: right },
    );
    assert.equal(d.firstDifference, 2);
    assert.deepEqual([d.same, d.onlyLeft, d.onlyRight], [3, 1, 3]);
    assert.equal(d.coarse, undefined);
    const change = d.hunks.find((x) => x.kind === 'change');
    assert.ok(change && change.kind === 'change');
    assert.deepEqual(
      change.left.map((t) => [t.id, t.kind]),
      [[SPECIAL, 1]],
    );
    assert.deepEqual(
      change.right.map((t) => t.text),
      ['<|', 'tool_calls_section_begin', '|>'],
    );
    assert.deepEqual(d.left, { label: 'fireworks #1', exchangeId: 'a', tokenizer: 'kimi-k2 (tiktoken)', tokens: 4, reason: undefined });
  });

  it('folds long identical runs, keeping context around each change', () => {
    const common = words(100);
    const left = stream([...common, [5000, ' left'], ...words(100, 200)]);
    const right = stream([...common, [6000, ' right'], ...words(100, 200)]);
    const d = alignTokenStreams(
      { label: 'l', exchangeId: 'a', stream: left },
      { label: 'r', exchangeId: 'b', stream: right },
      { context: 4 },
    );
    assert.deepEqual(
      d.hunks.map((x) =>
        x.kind === 'skip'
          ? `skip ${x.count}`
          : x.kind === 'equal'
            ? `equal ${x.tokens.length}`
            : `change ${x.left.length}/${x.right.length}`,
      ),
      ['skip 96', 'equal 4', 'change 1/1', 'equal 4', 'skip 96'],
    );
    assert.equal(d.same, 200);
    assert.equal(d.firstDifference, 100);
  });

  it('reports identical streams', () => {
    const s = stream(words(5));
    const d = alignTokenStreams({ label: 'l', exchangeId: 'a', stream: s }, { label: 'r', exchangeId: 'b', stream: s });
    assert.equal(d.firstDifference, undefined);
    assert.deepEqual([d.same, d.onlyLeft, d.onlyRight], [5, 0, 0]);
    assert.deepEqual(
      d.hunks.map((x) => x.kind),
      ['equal'],
    );
  });

  it('aligns only the common start and end when the streams differ beyond the budget, and cuts overlong changes', () => {
    const left = stream([...words(3), ...words(50, 100), ...words(2, 900)]);
    const right = stream([...words(3), ...words(60, 500), ...words(2, 900)]);
    const d = alignTokenStreams(
      { label: 'l', exchangeId: 'a', stream: left },
      { label: 'r', exchangeId: 'b', stream: right },
      { maxEdits: 10, maxChange: 20 },
    );
    assert.equal(d.coarse, true);
    assert.deepEqual([d.same, d.onlyLeft, d.onlyRight, d.firstDifference], [5, 50, 60, 3]);
    const change = d.hunks.find((x) => x.kind === 'change');
    assert.ok(change && change.kind === 'change');
    assert.deepEqual([change.left.length, change.right.length, change.omitted], [20, 20, [30, 40]]);
  });

  it('says why a side has no token stream and shows the other side whole', () => {
    const d = alignTokenStreams(
      { label: 'l', exchangeId: 'a', reason: 'No tokenizer' },
      { label: 'r', exchangeId: 'b', stream: stream(words(3)) },
    );
    assert.equal(d.left.reason, 'No tokenizer');
    assert.equal(d.left.tokens, 0);
    assert.deepEqual([d.same, d.onlyLeft, d.onlyRight, d.firstDifference], [0, 0, 3, 0]);
  });
});
