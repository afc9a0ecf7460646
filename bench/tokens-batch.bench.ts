// `tokens --batch` benchmark (short runs; figures are medians):
// - scaling: lines/s with 2 worker threads vs 1 (goal ≥ 1.6× on a 2-core machine);
// - per core: the batch with 1 worker vs the single-response path (parse + exchangeTokenStream + the JSON record, one
//   thread, no batch machinery) on the same lines (goal ≥ 0.9×);
// - memory: RSS of a `tokenscope tokens --batch` process at several points while 100,000 lines stream through (flat).
// Rates are measured from a quarter of the lines written to the end, so the workers' tokenizer load and warm-up are
// not counted (with 2 workers the second may still be loading when the first chunk is written). On a
// machine others share, wall-clock rates follow the load (reported beside them); CPU time per line does not, so the
// per-core figure is also given in CPU time, and the CPU per line with 2 workers vs 1 shows what scaling costs. The
// main thread's busy time per line shows how little is left outside the workers (line ends, ordering, writing).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { BatchProcessor } from '../src/core/tokens/batch/process';
import { runBatch } from '../src/core/tokens/batch/run';
import { recording } from '../test/helpers/shared';
import { kimiTokenizerDir } from '../test/unit/tokens/helpers';

const root = join(__dirname, '..');
const RUNS = 3;
const LINES = 1600;
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
  /** Main thread busy per line, ms (its event loop's active time): reading, ordering, writing. */
  mainMsPerLine?: number;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function batchRate(input: string, out: string, workers: number, dir: string, cacheDir: string, workerFile: string): Promise<Rate> {
  let first: { t: number; lines: number; cpu: number; elu: EventLoopUtilization } | undefined;
  let last = { t: 0, lines: 0, cpu: 0 };
  let busy = 0;
  await runBatch({
    input,
    output: out,
    workers,
    workerFile,
    tokenizerDir: dir,
    cacheDir,
    onProgress: (p) => {
      const now = { t: performance.now(), lines: p.lines, cpu: cpuMs() };
      if (p.lines >= LINES / 4) first ??= { ...now, elu: performance.eventLoopUtilization() };
      if (first) busy = performance.eventLoopUtilization(first.elu).active;
      last = now;
    },
  });
  const lines = last.lines - first!.lines;
  return { linesPerSecond: lines / ((last.t - first!.t) / 1000), cpuMsPerLine: (last.cpu - first!.cpu) / lines, mainMsPerLine: busy / lines };
}

async function singleRate(lines: string[], dir: string, cacheDir: string): Promise<Rate> {
  const p = new BatchProcessor({ tokenizerDir: dir, cacheDir });
  let t0 = 0;
  let c0 = 0;
  const from = Math.floor(lines.length / 4); // tokenizer load and warm-up, not counted (as in batchRate)
  for (let i = 0; i < lines.length; i++) {
    if (i === from) [t0, c0] = [performance.now(), cpuMs()];
    const r = await p.process(i + 1, lines[i]);
    if (!r.out) throw new Error(`line ${i + 1}: ${r.error}`);
  }
  const n = lines.length - from;
  return { linesPerSecond: n / ((performance.now() - t0) / 1000), cpuMsPerLine: (cpuMs() - c0) / n };
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
    const lines = Array.from({ length: LINES }, (_, i) => samples[i % samples.length]);
    const input = join(tmp, 'in.jsonl');
    writeFileSync(input, lines.join('\n') + '\n');
    const rates: Record<'one' | 'two' | 'single', Rate[]> = { one: [], two: [], single: [] };
    const load = [loadavg()[0]];
    // Alternated run by run, so machine noise (other processes) hits them alike.
    for (let i = 0; i < RUNS; i++) {
      rates.single.push(await singleRate(lines, found.dir, cacheDir));
      rates.one.push(await batchRate(input, join(tmp, 'o1.jsonl'), 1, found.dir, cacheDir, workerFile));
      rates.two.push(await batchRate(input, join(tmp, 'o2.jsonl'), 2, found.dir, cacheDir, workerFile));
    }
    if (readFileSync(join(tmp, 'o1.jsonl'), 'utf8') !== readFileSync(join(tmp, 'o2.jsonl'), 'utf8')) throw new Error('1 and 2 workers wrote different output');
    load.push(loadavg()[0]);
    const wall = (k: keyof typeof rates) => median(rates[k].map((r) => r.linesPerSecond));
    const cpu = (k: keyof typeof rates) => median(rates[k].map((r) => r.cpuMsPerLine));
    const [one, two, single] = [wall('one'), wall('two'), wall('single')];
    const stream = await streamRss(found.dir, tmp);
    const rss = stream.rssMB.map((s) => s.MB);
    return {
      lines: LINES,
      loadAverage1m: load.map((l) => round(l, 1)),
      linesPerSecond: { singleResponsePath: round(single, 0), batch1Worker: round(one, 0), batch2Workers: round(two, 0) },
      cpuMsPerLine: { singleResponsePath: round(cpu('single')), batch1Worker: round(cpu('one')), batch2Workers: round(cpu('two')) },
      mainThreadMsPerLine: { batch1Worker: round(median(rates.one.map((r) => r.mainMsPerLine!)), 3), batch2Workers: round(median(rates.two.map((r) => r.mainMsPerLine!)), 3) },
      scaling: { ratio2vs1: round(two / one), goalRatio: 1.6, meetsGoal: two / one >= 1.6, cpuPerLine1vs2: round(cpu('one') / cpu('two')) },
      perCore: {
        ratioBatch1WorkerVsSingle: round(one / single),
        ratioInCpuTime: round(cpu('single') / cpu('one')),
        goalRatio: 0.9,
        meetsGoal: cpu('single') / cpu('one') >= 0.9,
      },
      stream: { ...stream, rssGrowthMB: round(Math.max(...rss.slice(1)) - rss[1], 0) },
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
};
