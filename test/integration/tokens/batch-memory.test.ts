/**
 * `tokens --batch - --out -` streams: 200,000 short chat completions are written into its stdin as it takes them, and
 * its stdout is read as it comes, the built binary in its own process, its resident memory sampled from /proc every
 * 100 ms (and its peak read by a preloaded hook, test/helpers/max-rss.cjs).
 * - Flat: the highest RSS over the last 40% of the output is within 40 MB of the highest over 20–50% (when the
 *   collector runs is not ours to set; a peak moves by tens of MB from run to run at load 10), and the least-squares
 *   trend over the last 80% is under 200 bytes per line (the collector's saw-tooth averages out there; a run that
 *   kept each output line, ~330 bytes, showed 363). Measured at load 7–11 with 2 workers: per tenth of 200,000
 *   lines 216–303 MB, trend 46 bytes per line; by hand over 1,000,000 lines 287–337 MB per tenth, no trend.
 * - Backpressure: while the reader stops reading stdout for 3 s, the process stops taking stdin (what it may still
 *   take is the lines in flight: pipe buffers and a few chunks, under 2 MB); a run that kept reading would take
 *   several MB a second here, and keep the output in memory.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { repoRoot } from '../../helpers/shared';
import { kimiTokenizerDir } from '../../unit/tokens/helpers';

const kimi = kimiTokenizerDir();
const bin = join(repoRoot, 'bin', 'tokenscope.js');
const built = ['dist/cli.js', 'dist/tokens-batch-worker.js'].map((f) => join(repoRoot, f));
const sources = [
  join(repoRoot, 'src/cli/commands/tokens-batch.ts'),
  ...readdirSync(join(repoRoot, 'src/core/tokens/batch')).map((f) => join(repoRoot, 'src/core/tokens/batch', f)),
];
const fresh = built.every((b) => existsSync(b) && sources.every((s) => statSync(b).mtimeMs >= statSync(s).mtimeMs));
const skip =
  'skip' in kimi
    ? kimi.skip
    : process.platform !== 'linux'
      ? 'reads the resident memory from /proc (Linux only)'
      : !fresh
        ? 'dist/ is missing or older than the tokens --batch sources: run `npm run build` first'
        : false;

const LINES = 200_000;
const MB = 2 ** 20;
const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-batch-memory-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A short answer as OpenRouter returns it; every 50,000th line is not JSON. */
const line = (i: number) =>
  i % 50_000 === 17
    ? 'not json\n'
    : JSON.stringify({
        id: `gen-${i}`,
        model: 'moonshotai/kimi-k2-0905',
        ...(i % 3 ? { dataset: `set-${i % 5}` } : {}),
        choices: [{ index: 0, message: { role: 'assistant', content: `Hello ${i} world ${(i * 7919) % 100_003}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 6 },
      }) + '\n';

test(`tokens --batch - --out -: RSS flat over ${LINES.toLocaleString('en-US')} short lines; a reader that stops reading stops the input`, {
  skip,
}, async (t) => {
  const summaryFile = join(tmp, 'summary.json');
  const child = spawn(
    process.execPath,
    [
      '-r',
      join(repoRoot, 'test', 'helpers', 'max-rss.cjs'),
      bin,
      'tokens',
      '--batch',
      '-',
      '--out',
      '-',
      '--workers',
      '2',
      '--tokenizer-dir',
      'dir' in kimi ? kimi.dir : '',
      '--data-dir',
      join(tmp, 'data'),
      '--summary-out',
      summaryFile,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));

  // The input, written as the process takes it.
  let next = 0;
  let written = 0;
  const taken = () => written - child.stdin.writableLength; // bytes the process's pipe has accepted
  const feed = () => {
    while (next < LINES) {
      let batch = '';
      for (let k = 0; k < 500 && next < LINES; k++) batch += line(next++);
      written += Buffer.byteLength(batch);
      if (!child.stdin.write(batch)) return void child.stdin.once('drain', feed);
    }
    child.stdin.end();
  };
  child.stdin.on('error', () => undefined);
  feed();

  // The output, counted as it comes; paused for 3 s at half way.
  let out = 0;
  let lastLine = '';
  let pause: { from: number; to?: number } | undefined;
  child.stdout.on('data', (d: Buffer) => {
    for (let p = d.indexOf(10); p !== -1; p = d.indexOf(10, p + 1)) out++;
    lastLine = d.toString('utf8', d.lastIndexOf(10, d.length - 2) + 1);
    if (!pause && out >= LINES / 2) {
      child.stdout.pause();
      const started = performance.now();
      setTimeout(() => {
        // Taken at once: what the process took in the first second of the pause counts as the lines in flight.
        pause = { from: taken() };
        setTimeout(() => {
          pause!.to = taken();
          t.diagnostic(`paused ${((performance.now() - started) / 1000).toFixed(1)} s`);
          child.stdout.resume();
        }, 2000);
      }, 1000);
      pause = { from: -1 };
    }
  });

  const samples: { out: number; rss: number }[] = [];
  const timer = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) samples.push({ out, rss: Number(m[1]) * 1024 });
    } catch {
      // exited
    }
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(timer);

  assert.equal(code, 0, stderr);
  const bad = Math.ceil((LINES - 17) / 50_000);
  assert.equal(out, LINES - bad, 'one output line per good input line');
  assert.equal((JSON.parse(lastLine) as { line: number }).line, LINES);
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
  assert.deepEqual(summary.lines, { read: LINES, processed: LINES - bad, bad, blank: 0, withPromptIds: 0 });

  const mb = (b: number) => `${(b / MB).toFixed(0)} MB`;
  const peak = (from: number, to: number) =>
    Math.max(...samples.filter((s) => s.out >= from * LINES && s.out < to * LINES).map((s) => s.rss));
  // A tenth the output went past between two samples (after the pause) has none.
  const tenths = Array.from({ length: 10 }, (_, k) => peak(k / 10, (k + 1) / 10)).map((b) => (b > 0 ? mb(b) : '-'));
  // Bytes of RSS per output line over the last 80% (least squares over the samples): the garbage collector's saw-tooth
  // averages out, what is kept per line does not.
  const late = samples.filter((s) => s.out >= 0.2 * LINES);
  const mx = late.reduce((a, s) => a + s.out, 0) / late.length;
  const my = late.reduce((a, s) => a + s.rss, 0) / late.length;
  const slope = late.reduce((a, s) => a + (s.out - mx) * (s.rss - my), 0) / late.reduce((a, s) => a + (s.out - mx) ** 2, 0);
  const maxRss = Number(/max-rss-kb (\d+)/.exec(stderr)?.[1]) * 1024;
  const report = `RSS per tenth of the output: ${tenths.join(', ')} (trend ${slope.toFixed(0)} bytes per line); peak ${mb(maxRss)}; stdin taken while stdout was not read: ${((pause!.to! - pause!.from) / 1024).toFixed(0)} kB`;
  t.diagnostic(report);
  assert.ok(peak(0.6, 1.01) <= peak(0.2, 0.5) + 40 * MB, `memory grows with the lines: ${report}`);
  assert.ok(slope < 200, `memory grows with the lines: ${report}`);
  assert.ok(pause?.to !== undefined && pause.to - pause.from < 2 * MB, `the input kept flowing while the output was not read: ${report}`);
});
