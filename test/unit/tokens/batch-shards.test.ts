/**
 * The batch runner's stdin/stream input, stream output and `--shard K/N`, and the merge of shard summaries, on random
 * inputs through a worker that echoes lines (echo-batch-worker.ts): no tokenizer, so every case runs, quickly. The
 * shards of an input together write exactly the lines one run writes, under the same line numbers, and their JSON
 * summaries merge (in any order) into the one run's summary, byte for byte.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { build } from 'esbuild';
import { parseShard } from '../../../src/cli/commands/tokens-batch';
import { mergeShardSummaries, type SummaryPart } from '../../../src/core/tokens/batch/merge';
import { runBatch } from '../../../src/core/tokens/batch/run';
import { prng, randomSplit } from '../../helpers/prng';

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-shards-'));
const workerFile = join(tmp, 'echo-batch-worker.js');
before(() =>
  build({
    entryPoints: [join(__dirname, 'echo-batch-worker.ts')],
    outfile: workerFile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  }),
);
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A random JSONL-ish input: text lines (multi-byte too), bad lines, blank and space-only lines, LF and CRLF ends. */
function randomInput(seed: number, lines: number, opts: { long?: boolean; noFinalNewline?: boolean } = {}): Buffer {
  const rand = prng(seed);
  const alphabet = 'abcdefgé世xyz0123';
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const r = rand();
    let text: string;
    if (r < 0.08) text = '';
    else if (r < 0.1) text = '   ';
    else if (r < 0.2) text = `bad ${i}`;
    else text = Array.from({ length: 1 + Math.floor(rand() * 30) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    if (opts.long && i === Math.floor(lines / 2)) text = 'L' + 'q'.repeat(1_300_000); // longer than one 1 MB read
    out.push(text + (rand() < 0.2 ? '\r\n' : '\n'));
  }
  let s = out.join('');
  if (opts.noFinalNewline) s = s.replace(/\r?\n$/, '');
  return Buffer.from(s);
}

/** Collects what is written. */
function collector(): { stream: Writable; text(): string; ended(): boolean } {
  const parts: Buffer[] = [];
  let ended = false;
  const stream = new Writable({
    write(chunk: Buffer, _e, done) {
      parts.push(Buffer.from(chunk));
      setImmediate(done); // a reader that takes its time
    },
    final(done) {
      ended = true;
      done();
    },
  });
  return { stream, text: () => Buffer.concat(parts).toString('utf8'), ended: () => ended };
}

interface Run {
  out: string;
  summary: ReturnType<Awaited<ReturnType<typeof runBatch>>['summary']['toJSON']>;
  text: string;
}

/** One run: from a file, or from a stream cut at random places (stdin); always into a stream (stdout). */
async function run(
  input: Buffer,
  o: { shard?: { index: number; count: number }; workers?: number; chunkLines?: number; stream?: number },
): Promise<Run> {
  const sink = collector();
  let source: string | Readable;
  if (o.stream === undefined) {
    source = join(tmp, `in-${Math.random().toString(36).slice(2)}.jsonl`);
    writeFileSync(source, input);
  } else source = Readable.from(randomSplit(input, prng(o.stream), 40).map((p) => Buffer.from(p)));
  const r = await runBatch({
    input: source,
    output: sink.stream,
    workers: o.workers ?? 1,
    workerFile,
    shard: o.shard,
    chunkLines: o.chunkLines,
  });
  assert.equal(r.interrupted, false);
  assert.ok(sink.ended(), 'the output stream is ended');
  return { out: sink.text(), summary: r.summary.toJSON(), text: r.summary.text() };
}

const lineOf = (l: string) => (JSON.parse(l) as { line: number }).line;
const sortedByLine = (outs: string[]) =>
  outs
    .flatMap((o) => o.split('\n').filter(Boolean))
    .sort((a, b) => lineOf(a) - lineOf(b))
    .map((l) => l + '\n')
    .join('');

describe('tokens --batch shards and streams (echo worker)', () => {
  test('the shards of an input write exactly the lines one run writes, under their input line numbers; their summaries merge into its summary', async () => {
    for (const [seed, opts] of [
      [1, { long: true }],
      [2, { noFinalNewline: true }],
      [3, {}],
    ] as const) {
      const input = randomInput(seed, 400, opts);
      const whole = await run(input, {});
      const lines = whole.out.split('\n').filter(Boolean);
      assert.ok(lines.length > 250, `${lines.length} lines`);
      assert.equal(whole.summary.shard.inputLines, 400);
      for (const count of [1, 2, 3, 7]) {
        const shards: Run[] = [];
        for (let index = 0; index < count; index++) {
          // From a stream cut at random places, two workers, small chunks: replies come back out of order.
          const r = await run(input, { shard: { index, count }, workers: 2, chunkLines: 4, stream: seed * 100 + index });
          const numbers = r.out.split('\n').filter(Boolean).map(lineOf);
          assert.ok(
            numbers.every((n) => (n - 1) % count === index),
            `shard ${index}/${count}: only its own lines`,
          );
          assert.deepEqual(
            numbers,
            [...numbers].sort((a, b) => a - b),
            'in input order',
          );
          assert.deepEqual(r.summary.shard, { index, count, inputLines: 400 });
          assert.ok(
            r.summary.badLines.every((b) => (b.line - 1) % count === index),
            'bad lines under their input line numbers',
          );
          shards.push(r);
        }
        const what = `seed ${seed}, ${count} shards`;
        assert.equal(sortedByLine(shards.map((s) => s.out)), whole.out, what);
        // As files: JSON, then read back; in any order.
        const parts: SummaryPart[] = shards.map((s, i) => ({
          name: `s${i}.json`,
          value: JSON.parse(JSON.stringify({ interrupted: false, ...s.summary })),
        }));
        const rand = prng(seed + count);
        parts.sort(() => rand() - 0.5);
        const merged = mergeShardSummaries(parts);
        assert.equal(merged.interrupted, false);
        assert.equal(JSON.stringify(merged.summary.toJSON()), JSON.stringify(whole.summary), what);
        assert.equal(merged.summary.text(), whole.text, what);
      }
    }
  });

  test('one worker and three, a file or a stream cut anywhere: the same bytes', async () => {
    const input = randomInput(7, 600, { noFinalNewline: true });
    const one = await run(input, {});
    for (const o of [
      { workers: 3, chunkLines: 3 },
      { workers: 3, stream: 5 },
      { workers: 1, stream: 9, chunkLines: 2 },
    ]) {
      const r = await run(input, o);
      assert.equal(r.out, one.out, JSON.stringify(o));
      assert.equal(JSON.stringify(r.summary), JSON.stringify(one.summary));
    }
  });

  test('line ends and numbers from a stream: CRLF, blank lines, a last line without newline, a shard with no line of its own', async () => {
    const input = Buffer.from('a1\r\n\nbad x\n  \r\nb2\nc3');
    const whole = await run(input, { stream: 1 });
    assert.equal(whole.out, '{"line":1,"text":"a1"}\n{"line":5,"text":"b2"}\n{"line":6,"text":"c3"}\n');
    assert.deepEqual(whole.summary.lines, { read: 6, processed: 3, bad: 1, blank: 2, withPromptIds: 1 });
    assert.deepEqual(whole.summary.badLines, [{ line: 3, error: 'bad: bad x' }]);
    const last = await run(input, { shard: { index: 5, count: 6 }, stream: 2 });
    assert.equal(last.out, '{"line":6,"text":"c3"}\n', 'the last line, without its newline');
    const none = await run(input, { shard: { index: 3, count: 9 }, stream: 3 });
    assert.equal(none.out, '');
    assert.deepEqual(none.summary.lines, { read: 1, processed: 0, bad: 0, blank: 1, withPromptIds: 0 });
    const beyond = await run(input, { shard: { index: 7, count: 9 } });
    assert.deepEqual([beyond.out, beyond.summary.lines.read, beyond.summary.shard.inputLines], ['', 0, 6], 'a shard past the last line');
    const empty = await run(Buffer.alloc(0), { shard: { index: 0, count: 2 }, stream: 4 });
    assert.deepEqual([empty.out, empty.summary.shard.inputLines], ['', 0]);
  });
});

describe('merging shard summaries', () => {
  /** Shard summaries of a small input, as JSON. */
  async function shardParts(count: number): Promise<SummaryPart[]> {
    const input = randomInput(11, 60);
    const parts: SummaryPart[] = [];
    for (let index = 0; index < count; index++) {
      const r = await run(input, { shard: { index, count } });
      parts.push({ name: `part-${index}.json`, value: JSON.parse(JSON.stringify({ interrupted: false, ...r.summary })) });
    }
    return parts;
  }

  test('a missing, repeated or foreign shard, or shards of different inputs: a one-line error, never a silent sum', async () => {
    const three = await shardParts(3);
    assert.throws(() => mergeShardSummaries([three[0], three[2]]), {
      name: 'UserError',
      message: 'shard 1/3 missing: merge every shard of the split',
    });
    assert.throws(() => mergeShardSummaries([three[0], three[1], three[1], three[2]]), {
      message: 'part-1.json and part-1.json are both shard 1/3: give each shard once',
    });
    const two = await shardParts(2);
    assert.throws(() => mergeShardSummaries([...three, two[1]]), {
      message: 'part-0.json is shard 0/3 but part-1.json is shard 1/2: merge the shards of one split',
    });
    const other = structuredClone(three[1]);
    (other.value as { shard: { inputLines: number } }).shard.inputLines = 61;
    assert.throws(() => mergeShardSummaries([three[0], other, three[2]]), {
      message: 'part-0.json read 60 input lines but part-1.json read 61: the shards were not run over the same input',
    });
    // An interrupted shard covers a prefix: merged, and said.
    (other.value as { interrupted: boolean }).interrupted = true;
    assert.equal(mergeShardSummaries([three[0], other, three[2]]).interrupted, true);
    assert.throws(() => mergeShardSummaries([]), /needs the summary files/);
  });

  test('a file that is not a shard summary is refused with what is wrong', async () => {
    const [part] = await shardParts(1);
    const broken = (edit: (v: Record<string, any>) => void) => {
      const value = structuredClone(part.value) as Record<string, any>;
      edit(value);
      return () => mergeShardSummaries([{ name: 'x.json', value }]);
    };
    assert.throws(
      broken((v) => delete v.shard),
      /^UserError: x\.json is not a tokens --batch summary: it has no "shard" and "firstSeen"/,
    );
    assert.throws(
      broken((v) => (v.lines.bad = -1)),
      { message: 'x.json is not a tokens --batch summary: lines.bad is missing or not a count' },
    );
    assert.throws(
      broken((v) => (v.lines.read += 1)),
      /lines\.read is not processed \+ bad \+ blank/,
    );
    assert.throws(
      broken((v) => (v.samples.withoutDataset += 1)),
      /the per-dataset rows do not add up to the totals/,
    );
    assert.throws(
      broken((v) => (v.accounting.completion.differences['0'] = 'x')),
      /accounting\.completion\.differences\["0"\] is missing or not a count/,
    );
    assert.throws(
      broken((v) => (v.firstSeen.rules = {})),
      /firstSeen\.rules lacks "rule-/,
    );
    assert.throws(
      broken((v) => (v.shard.index = 4)),
      /shard 4\/1 is not a shard/,
    );
    assert.throws(
      () => mergeShardSummaries([{ name: 'x.json', value: [1] }]),
      /x\.json is not a tokens --batch summary: the file is missing or not an object/,
    );
    // Unchanged, it merges to itself.
    const { interrupted: _, ...summary } = part.value as Record<string, unknown>;
    assert.equal(JSON.stringify(mergeShardSummaries([part]).summary.toJSON()), JSON.stringify(summary));
  });
});

test('--shard K/N: shard K (from 0) of N; anything else is refused in one line', () => {
  assert.deepEqual(parseShard('0/1'), { index: 0, count: 1 });
  assert.deepEqual(parseShard('3/4'), { index: 3, count: 4 });
  assert.equal(parseShard(undefined), undefined);
  for (const [bad, why] of [
    ['4/4', ': K must be less than N'],
    ['0/0', ': N must be at least 1'],
    ['1', ''],
    ['-1/2', ''],
    ['1/2/3', ''],
    ['a/b', ''],
    ['1.5/4', ''],
    ['0/100001', ': N must be at most 100,000'],
  ]) {
    assert.throws(() => parseShard(bad), {
      name: 'UserError',
      message: `--shard must be K/N, shard K (from 0) of N, with 0 ≤ K < N (e.g. --shard 0/4); got "${bad}"${why}`,
    });
  }
});
