import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LineStats } from '../../../src/core/tokens/batch/process';
import { BatchSummary } from '../../../src/core/tokens/batch/summary';

const stats = (s: Partial<LineStats>): LineStats => ({
  tools: false,
  promptMarkup: false,
  contentMarkup: false,
  structuredCalls: false,
  completion: { counted: 10, billed: 10 },
  rules: [],
  ...s,
});

test('batch summary: datasets, tool-call markup, accounting buckets and percent, findings by rule, bad lines', () => {
  const s = new BatchSummary();
  s.add({ line: 1, stats: stats({ dataset: 'a', tools: true, structuredCalls: true, prompt: { counted: 100, billed: 100 } }) });
  s.add({
    line: 2,
    stats: stats({ dataset: 'a', contentMarkup: true, completion: { counted: 12, billed: 10 }, rules: ['markup-in-content'] }),
  });
  s.add({
    line: 3,
    stats: stats({
      dataset: 'b',
      promptMarkup: true,
      completion: { counted: 30, billed: 10 },
      prompt: { counted: 100, billed: 130 },
      rules: ['prompt-token-mismatch'],
    }),
  });
  s.add({ line: 4, error: 'not valid JSON' });
  s.add({ line: 5, stats: stats({ completion: { counted: 7 } }) });
  const j = s.toJSON();
  assert.deepEqual(j.lines, { read: 5, processed: 4, bad: 1, blank: 0, withPromptIds: 2 });
  assert.deepEqual(j.badLines, [{ line: 4, error: 'not valid JSON' }]);
  assert.deepEqual(j.samples, { total: 4, byDataset: { a: 2, b: 1 }, withoutDataset: 1 });
  assert.deepEqual([j.toolCalls.withTools, j.toolCalls.promptMarkup, j.toolCalls.contentMarkup, j.toolCalls.structuredCalls], [1, 1, 1, 1]);
  const c = j.accounting.completion;
  assert.deepEqual([c.compared, c.exact, c.counted, c.billed, c.percent], [3, 1, 52, 30, 73.333]);
  assert.deepEqual([c.differences['0'], c.differences['+2'], c.differences['> +10']], [1, 1, 1]);
  const p = j.accounting.prompt;
  assert.deepEqual([p.compared, p.exact, p.differences['> +10'], p.percent], [2, 1, 1, 15]);
  assert.deepEqual(j.findingsByRule, { 'markup-in-content': 1, 'prompt-token-mismatch': 1 });
  const text = s.text();
  assert.match(text, /4 samples processed, 1 bad line/);
  assert.match(text, /completion accounting: 1 of 3 exact; 52 counted vs 30 billed \(\+73\.333%\)/);
  assert.match(text, /prompt accounting: 1 of 2 exact; 200 rendered vs 230 billed \(\+15%\)/);
  // Every sample has a row: the one without a dataset field too, so the rows add up to the samples.
  assert.match(text, /^ {2}\(no dataset field\) +1 +0 +0 +0 +0$/m);
});

test('bad lines on the terminal: by line number, lines that fail for one reason share a line, at most five reasons', async () => {
  const { badLineReport } = await import('../../../src/cli/commands/tokens-batch');
  const missing = 'no tokenizer for acme/x in /d';
  const r = badLineReport([
    { line: 1, error: missing },
    { line: 2, error: 'not valid JSON' },
    { line: 3, error: missing },
    { line: 4, error: 'bad \u001b[2J escape' },
  ]);
  assert.deepEqual(r, { lines: [`lines 1, 3: ${missing}`, 'line 2: not valid JSON', 'line 4: bad \\e[2J escape'], count: 4 });
  const many = badLineReport(Array.from({ length: 8 }, (_, i) => ({ line: i + 1, error: `reason ${i}` })));
  assert.equal(many.lines.length, 5);
  assert.equal(many.count, 5, 'the rest are counted by the caller as "… and 3 more bad lines"');
});

test('batch summary: chunk counts merged in input order give the summary of one pass over the lines, in the same order', () => {
  // 30 lines: datasets, families, rules and skip reasons first seen in different chunks, 11 bad lines (10 are kept).
  const results = Array.from({ length: 30 }, (_, i) => {
    const line = i + 1;
    if (i % 4 === 3 || i >= 25) return { line, error: `reason ${i % 3}` };
    return {
      line,
      stats: stats({
        dataset: i % 4 === 0 ? undefined : `set-${(i * 7) % 5}`,
        family: i % 3 ? 'kimi-k2' : 'qwen3',
        tools: i % 2 === 0,
        contentMarkup: i % 6 === 1,
        completion: { counted: 10 + (i % 7) - 3, billed: i % 9 ? 10 : undefined },
        prompt: i % 2 ? { counted: 100, billed: 100 + (i % 4) } : undefined,
        promptSkipped: i % 2 ? undefined : `no request ${i % 3}`,
        rules: i % 3 === 2 ? ['rule-b', `rule-${i % 4}`] : [],
      }),
    };
  });
  const whole = new BatchSummary();
  results.forEach((r) => whole.add(r));
  whole.blank = 2;
  const merged = new BatchSummary();
  for (const [from, to] of [
    [0, 1],
    [1, 4],
    [4, 11],
    [11, 11],
    [11, 30],
  ]) {
    const chunk = new BatchSummary();
    results.slice(from, to).forEach((r) => chunk.add(r));
    if (from === 4) chunk.blank = 2;
    // What a worker posts is structured-cloned on the way.
    merged.merge(structuredClone(chunk.counts()));
  }
  assert.equal(JSON.stringify(merged.toJSON()), JSON.stringify(whole.toJSON()), 'the same figures, keys in the same order');
  assert.equal(merged.text(), whole.text());
  assert.deepEqual(
    merged.badLines.map((b) => b.line),
    [4, 8, 12, 16, 20, 24, 26, 27, 28, 29],
    'the first ten, by line',
  );
  assert.equal(merged.bad, 11);
  assert.deepEqual([...merged.byDataset.keys()], ['set-2', 'set-4', 'set-0', 'set-3', 'set-1'], 'datasets in first-seen order');
});
