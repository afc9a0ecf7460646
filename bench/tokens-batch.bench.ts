// `tokens --batch` benchmark (figures are medians of alternated runs):
// - scaling: lines/s with 2 worker threads vs 1 (goal ≥ 1.6× on a 2-core machine);
// - per core: the batch with 1 worker vs the single-response path (parse + exchangeTokenStream + the JSON record, one
//   thread, no batch machinery, the same esbuild-bundled code in a process of its own) on the same lines (goal ≥ 0.9×);
// - memory: RSS of a `tokenscope tokens --batch` process at several points while 100,000 lines stream through (flat).
// Rates are those of a long run's last 40%: each worker (an isolate of its own) spends its first few thousand
// lines with TurboFan compiling its hot code on V8's helper threads, which is a one-time cost per worker, not the
// throughput a dataset sees; the first half's rate is printed beside it (`warmingUp`). CPU time is split per thread:
// the workers' JavaScript threads, V8's helper threads (concurrent compiler, parallel and concurrent GC) and the main
// thread (line ends, ordering, writing). `coresPerWorker` is all of that over the workers' JavaScript time: how many
// cores one worker keeps busy, which caps what a second worker can add on two cores (2 / coresPerWorker). On a machine
// others share, wall-clock rates follow the load (reported beside them); CPU time per line does not.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { runBatch } from '../src/core/tokens/batch/run';
import { recording } from '../test/helpers/shared';
import { kimiTokenizerDir } from '../test/unit/tokens/helpers';
import { splitTimes, threadTimes } from './threads';

const root = join(__dirname, '..');
const RUNS = Number(process.env.BENCH_BATCH_RUNS ?? 3);
const LINES = Number(process.env.BENCH_BATCH_LINES ?? 40_000);
/** Rates are measured from this fraction of the lines on. */
const FROM = 0.6; // with 2 workers, each has done 12,000 lines by then
const STREAM_LINES = 100_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Kimi answers as a dataset holds them: tool calls, prose with reasoning, a request/response pair. */
function sampleLines(): string[] | undefined {
  const json = recording('17-kimi-fantasy-openrouter-tool-json');
  const prose = recording('23-kimi-fantasy-k25-prose-only');
  if (!json || !prose) return undefined;
  const resp = JSON.parse(json.files['response.json']);
  return [
    JSON.stringify(resp),
    JSON.stringify(JSON.parse(prose.files['response.json'])),
    JSON.stringify({ dataset: 'tools', request: JSON.parse(json.files['request.json']), response: resp }),
  ];
}

interface Rate {
  linesPerSecond: number;
  /** Process CPU (every thread) per line, ms. */
  cpuMsPerLine: number;
  /** The JavaScript thread(s) doing the line work (the workers', or the single path's main thread), per line, ms. */
  jsMsPerLine: number;
  /** V8's helper threads, per line, ms. */
  helpersMsPerLine: number;
  /** The batch main thread, per line, ms. */
  mainMsPerLine?: number;
  /** Lines/s from the first written chunk to FROM (workers still compiling their hot code). */
  warmingUpLinesPerSecond?: number;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function batchRate(input: string, out: string, workers: number, dir: string, cacheDir: string, workerFile: string): Promise<Rate> {
  await stat(input); // libuv's thread pool exists before the thread snapshot, so only worker threads are "later"
  const before = threadTimes();
  type Mark = { t: number; lines: number; cpu: number; threads: ReturnType<typeof threadTimes> };
  const mark = (lines: number): Mark => ({ t: performance.now(), lines, cpu: cpuMs(), threads: threadTimes() });
  let begin: Mark | undefined;
  let half: Mark | undefined;
  let last: Mark | undefined;
  let n = 0;
  await runBatch({
    input,
    output: out,
    workers,
    workerFile,
    tokenizerDir: dir,
    cacheDir,
    onProgress: (p) => {
      n++;
      if (!begin) begin = mark(p.lines);
      else if (!half && p.lines >= LINES * FROM) half = mark(p.lines);
      else if (half && (n % 8 === 0 || p.lines === LINES)) last = mark(p.lines); // workers are alive: their threads still count
    },
  });
  const [b, h, l] = [begin!, half!, last!];
  const lines = l.lines - h.lines;
  const t = splitTimes(before, h.threads, l.threads);
  return {
    linesPerSecond: lines / ((l.t - h.t) / 1000),
    cpuMsPerLine: (l.cpu - h.cpu) / lines,
    jsMsPerLine: t.laterMs / lines,
    helpersMsPerLine: t.helpersMs / lines,
    mainMsPerLine: t.mainMs / lines,
    warmingUpLinesPerSecond: (h.lines - b.lines) / ((h.t - b.t) / 1000),
  };
}

async function singleRate(driver: string, input: string, dir: string, cacheDir: string): Promise<Rate> {
  const child = spawn(process.execPath, [driver, input, dir, cacheDir, String(FROM)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((ok) => child.on('exit', ok));
  if (code !== 0) throw new Error(`single-response path failed: ${stderr.split('\n')[0]}`);
  const r = JSON.parse(stdout) as { lines: number; wallMs: number; cpuMs: number; jsMs: number; helpersMs: number };
  return { linesPerSecond: r.lines / (r.wallMs / 1000), cpuMsPerLine: r.cpuMs / r.lines, jsMsPerLine: r.jsMs / r.lines, helpersMsPerLine: r.helpersMs / r.lines };
}

/** A `tokenscope tokens --batch` process over STREAM_LINES short answers; VmRSS sampled as its output grows. */
async function streamRss(dir: string, tmp: string): Promise<{ lines: number; seconds: number; rssMB: { atPercent: number; MB: number }[] }> {
  const line = JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: 'moonshotai/kimi-k2-0905',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello 世界' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
  });
  const input = join(tmp, 'stream.jsonl');
  writeFileSync(input, (line + '\n').repeat(STREAM_LINES));
  const out = join(tmp, 'stream.out.jsonl');
  const child = spawn(process.execPath, [join(root, 'bin', 'tokenscope.js'), 'tokens', '--batch', input, '--out', out, '--tokenizer-dir', dir, '--data-dir', join(tmp, 'data'), '--workers', '2', '--json'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const samples: { bytes: number; MB: number }[] = [];
  const t0 = performance.now();
  const timer = setInterval(() => {
    try {
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (rss) samples.push({ bytes: existsSync(out) ? statSync(out).size : 0, MB: Number(rss[1]) / 1024 });
    } catch {
      // the process has just exited
    }
  }, 200);
  await new Promise((ok) => child.on('exit', ok));
  clearInterval(timer);
  const seconds = (performance.now() - t0) / 1000;
  const total = statSync(out).size;
  const written = JSON.parse(stdout).lines.processed as number;
  const at = (pct: number) => samples.reduce((best, s) => (Math.abs(s.bytes - total * pct) < Math.abs(best.bytes - total * pct) ? s : best));
  return { lines: written, seconds: round(seconds, 1), rssMB: [0.1, 0.25, 0.5, 0.75, 0.95].map((p) => ({ atPercent: Math.round((at(p).bytes / total) * 100), MB: round(at(p).MB, 0) })) };
}

export default async () => {
  const found = kimiTokenizerDir();
  if ('skip' in found) return { skipped: found.skip };
  const samples = sampleLines();
  if (!samples) return { skipped: 'shared recordings not found' };
  const workerFile = join(root, 'dist', 'tokens-batch-worker.js');
  if (!existsSync(workerFile)) return { skipped: 'dist/tokens-batch-worker.js missing: run npm run build' };
  const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-bench-batch-'));
  try {
    const cacheDir = join(tmp, 'data');
    const driver = join(tmp, 'tokens-single.js');
    await build({ entryPoints: [join(__dirname, 'tokens-single.ts')], outfile: driver, bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: ['libsql'], logLevel: 'warning' });
    const lines = Array.from({ length: LINES }, (_, i) => samples[i % samples.length]);
    const input = join(tmp, 'in.jsonl');
    writeFileSync(input, lines.join('\n') + '\n');
    const rates: Record<'one' | 'two' | 'single', Rate[]> = { one: [], two: [], single: [] };
    const load = [loadavg()[0]];
    // Alternated run by run, so machine noise (other processes) hits them alike.
    for (let i = 0; i < RUNS; i++) {
      rates.single.push(await singleRate(driver, input, found.dir, cacheDir));
      rates.one.push(await batchRate(input, join(tmp, 'o1.jsonl'), 1, found.dir, cacheDir, workerFile));
      rates.two.push(await batchRate(input, join(tmp, 'o2.jsonl'), 2, found.dir, cacheDir, workerFile));
    }
    if (readFileSync(join(tmp, 'o1.jsonl'), 'utf8') !== readFileSync(join(tmp, 'o2.jsonl'), 'utf8')) throw new Error('1 and 2 workers wrote different output');
    load.push(loadavg()[0]);
    const med = (k: keyof typeof rates, f: keyof Rate, d = 3) => round(median(rates[k].map((r) => r[f] as number)), d);
    const [one, two, single] = [med('one', 'linesPerSecond', 0), med('two', 'linesPerSecond', 0), med('single', 'linesPerSecond', 0)];
    const cores = (k: keyof typeof rates) => round(median(rates[k].map((r) => r.cpuMsPerLine / r.jsMsPerLine)), 2);
    const stream = await streamRss(found.dir, tmp);
    const rss = stream.rssMB.map((s) => s.MB);
    return {
      lines: LINES,
      measuredFromLine: LINES * FROM,
      runs: RUNS,
      loadAverage1m: load.map((l) => round(l, 1)),
      linesPerSecond: { singleResponsePath: single, batch1Worker: one, batch2Workers: two },
      warmingUpLinesPerSecond: { batch1Worker: med('one', 'warmingUpLinesPerSecond', 0), batch2Workers: med('two', 'warmingUpLinesPerSecond', 0) },
      cpuMsPerLine: { singleResponsePath: med('single', 'cpuMsPerLine'), batch1Worker: med('one', 'cpuMsPerLine'), batch2Workers: med('two', 'cpuMsPerLine') },
      cpuMsPerLineByThread: Object.fromEntries(
        (['single', 'one', 'two'] as const).map((k) => [
          { single: 'singleResponsePath', one: 'batch1Worker', two: 'batch2Workers' }[k],
          { javascript: med(k, 'jsMsPerLine'), v8Helpers: med(k, 'helpersMsPerLine'), ...(k === 'single' ? {} : { batchMainThread: med(k, 'mainMsPerLine') }) },
        ]),
      ),
      coresPerWorker: { singleResponsePath: cores('single'), batch1Worker: cores('one'), batch2Workers: cores('two') },
      scaling: { ratio2vs1: round(two / one), goalRatio: 1.6, meetsGoal: two / one >= 1.6, warmingUpRatio2vs1: round(med('two', 'warmingUpLinesPerSecond') / med('one', 'warmingUpLinesPerSecond')), cpuPerLine1vs2: round(med('one', 'cpuMsPerLine') / med('two', 'cpuMsPerLine')), ceiling2vs1: round(2 / cores('one')) },
      perCore: {
        ratioBatch1WorkerVsSingle: round(one / single),
        ratioInCpuTime: round(med('single', 'cpuMsPerLine') / med('one', 'cpuMsPerLine')),
        goalRatio: 0.9,
        meetsGoal: one / single >= 0.9 && med('single', 'cpuMsPerLine') / med('one', 'cpuMsPerLine') >= 0.9,
      },
      // Growth from a quarter in (the workers' heaps and compiled code still reaching their working size), and over the
      // second half (what a longer file would add: bounded memory means none).
      stream: { ...stream, rssGrowthMB: round(Math.max(...rss.slice(1)) - rss[1], 0), rssGrowthSecondHalfMB: round(Math.max(...rss.slice(2)) - rss[2], 0) },
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
};
