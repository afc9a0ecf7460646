// `tokens --batch` benchmark. Three parts:
// - paired (the goals' figures): one process of its own (bench/tokens-paired.ts) holds the single-response path on
//   its main thread and two warm batch workers (dist/tokens-batch-worker.js, as shipped), and runs them by turns on
//   the same lines in short blocks (the order changes every round), so the machine's other load hits every side
//   alike. Per round: per core, the CPU time per line of the single path's thread over that of one batch worker's
//   thread (goal ≥ 0.9×), beside the wall-time and whole-process ratios of the same blocks (the thread figure must
//   not hide a worse wall time); scaling, the wall time of a block on one worker over that on two (goal ≥ 1.6× on a
//   2-core machine). Figures are medians over the rounds, with the spread (quartiles) beside them.
// - end to end: `runBatch` itself (reading, ordering, writing) with 1 and 2 workers, alternated run by run, rates over
//   a long run's last 40% (each new worker spends its first few thousand lines with TurboFan compiling its hot code,
//   a one-time cost per worker; the first half's rate is printed beside it as `warmingUp`), CPU time split per thread
//   (the workers' JavaScript, V8's helper threads, the batch main thread), and RSS while 100,000 lines stream through
//   a `tokenscope tokens --batch` process (flat).
// - startup (workers that pay off early): a process of its own (bench/tokens-batch-startup.ts, plain Node) runs
//   `runBatch` whole, new workers and all, over 3,000 and 30,000 lines with 1 and 2 workers by turns, the workers
//   started as shipped (compiled from the V8 code cache in the data dir) and, beside them, compiled from source; per
//   size the median wall times and 2 workers over 1 (goals ≥ 1.6× at 3,000 lines and ≥ 1.8× at 30,000 on a 2-core
//   machine), and the same ratio in CPU time: 2 × CPU(1 worker) / CPU(2 workers), the speed-up two idle cores give
//   when nothing waits (on a shared machine the wall-time ratio follows the load, this one much less); beside them the
//   machine's ceiling, 2 threads of pure computation over 1 in the same rounds (the most any 2-worker ratio could be).
// BENCH_BATCH_PARTS (default paired,endToEnd,startup,stream) runs only the parts named.
// The load average is printed beside each part: on a machine others share, wall-clock figures follow the load.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { runBatch } from '../src/core/tokens/batch/run';
import { recording } from '../test/helpers/shared';
import { kimiTokenizerDir } from '../test/unit/tokens/helpers';
import { splitTimes, threadTimes } from './threads';
import type { StartupMode, StartupOutput, StartupRun } from './tokens-batch-startup';
import type { Block, Side } from './tokens-paired';

const root = join(__dirname, '..');
const RUNS = Number(process.env.BENCH_BATCH_RUNS ?? 3);
/** Paired part: rounds, lines per block, warm-up lines per side. */
const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? 16);
const BLOCK = Number(process.env.BENCH_BATCH_BLOCK ?? 1024); // 4 chunks: two for each of 2 workers
const WARM = Number(process.env.BENCH_BATCH_WARM ?? 6000);
const LINES = Number(process.env.BENCH_BATCH_LINES ?? 40_000);
/** Rates are measured from this fraction of the lines on. */
const FROM = 0.6; // with 2 workers, each has done 12,000 lines by then
const STREAM_LINES = 100_000;
/** Startup part: file sizes (lines) and runs per size and worker count. */
const STARTUP_SIZES = (process.env.BENCH_BATCH_STARTUP_SIZES ?? '3000,30000').split(',').map(Number);
const STARTUP_RUNS = Number(process.env.BENCH_BATCH_STARTUP_RUNS ?? 5);
const STARTUP_MODES = (process.env.BENCH_BATCH_STARTUP_MODES ?? 'codeCache,noCodeCache').split(',') as StartupMode[];
const PARTS = new Set((process.env.BENCH_BATCH_PARTS ?? 'paired,endToEnd,startup,stream').split(','));
/** 2 workers over 1, on the whole run with every start-up cost, at each size (a 2-core machine). */
const STARTUP_GOALS: Record<number, number> = { 3000: 1.6, 30000: 1.8 };

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  return s[Math.floor(at)] + (s[Math.ceil(at)] - s[Math.floor(at)]) * (at - Math.floor(at));
};
const median = (xs: number[]) => quantile(xs, 0.5);
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
  /** The workers' JavaScript threads, per line, ms. */
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

/** The paired part: bench/tokens-paired.ts bundled and run as a process of its own. */
async function pairedBlocks(driver: string, input: string, dir: string, cacheDir: string, workerFile: string): Promise<Block[]> {
  const config = JSON.stringify({ block: BLOCK, rounds: ROUNDS, warm: WARM });
  const child = spawn(process.execPath, [driver, input, dir, cacheDir, workerFile, config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((ok) => child.on('exit', ok));
  if (code !== 0) throw new Error(`paired run failed: ${stderr.split('\n')[0]}`);
  return (JSON.parse(stdout) as { blocks: Block[] }).blocks;
}

/**
 * The startup part: bench/tokens-batch-startup.ts bundled and run as a process of its own over files of each size,
 * `runBatch` whole with 1 and 2 new workers by turns; per size the median wall times and their ratio, and each pair's.
 */
async function startupFigures(tmp: string, samples: string[], dir: string, cacheDir: string, workerFile: string) {
  const driver = join(tmp, 'tokens-batch-startup.js');
  await build({
    entryPoints: [join(__dirname, 'tokens-batch-startup.ts')],
    outfile: driver,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['libsql'],
    logLevel: 'warning',
  });
  const inputs = STARTUP_SIZES.map((n) => {
    const file = join(tmp, `startup-${n}.jsonl`);
    writeFileSync(file, Array.from({ length: n }, (_, i) => samples[i % samples.length]).join('\n') + '\n');
    return file;
  });
  // Copies of the shipped bundles, so a build during the bench changes nothing (the code cache is of one bundle).
  const dist = join(tmp, 'startup-dist');
  mkdirSync(dist);
  const [boot, worker] = ['tokens-batch-boot.js', 'tokens-batch-worker.js'].map((f) => join(dist, f));
  copyFileSync(join(root, 'dist', 'tokens-batch-boot.js'), boot);
  copyFileSync(workerFile, worker);
  // A data dir of its own: the first run of the driver writes the code cache there, as a first `tokens --batch` does.
  const data = join(cacheDir, 'startup');
  const load = [round(loadavg()[0], 1)];
  const config = JSON.stringify({ runs: STARTUP_RUNS, boot, modes: STARTUP_MODES });
  const child = spawn(process.execPath, [driver, inputs.join(','), dir, data, worker, config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((ok) => child.on('exit', ok));
  if (code !== 0) throw new Error(`startup run failed: ${stderr.split('\n')[0]}`);
  load.push(round(loadavg()[0], 1));
  const { runs: bySize, ceiling } = JSON.parse(stdout) as StartupOutput;
  const figures = (runs: StartupRun[], goal: number | undefined) => {
    const one = runs.filter((r) => r.workers === 1);
    const two = runs.filter((r) => r.workers === 2);
    const ratio = round(median(one.map((r) => r.wallMs)) / median(two.map((r) => r.wallMs)));
    const cpuRatio = round((2 * median(one.map((r) => r.cpuMs))) / median(two.map((r) => r.cpuMs)));
    return {
      wallMs: { batch1Worker: round(median(one.map((r) => r.wallMs)), 0), batch2Workers: round(median(two.map((r) => r.wallMs)), 0) },
      processCpuMs: { batch1Worker: round(median(one.map((r) => r.cpuMs)), 0), batch2Workers: round(median(two.map((r) => r.cpuMs)), 0) },
      ratio2vs1: ratio,
      // 2 × CPU(1 worker) / CPU(2 workers): the ratio two otherwise idle cores give.
      cpuRatio2vs1: cpuRatio,
      // Each 2-worker run over the 1-worker run of the same round.
      everyPair: one.map((r, i) => round(r.wallMs / two[i].wallMs)),
      ...(goal ? { goalRatio: goal, meetsGoal: ratio >= goal } : {}),
    };
  };
  const sizes = Object.fromEntries(
    Object.entries(bySize).map(([lines, runs]) => [
      lines,
      {
        ...(Object.fromEntries(
          STARTUP_MODES.map((m) => [
            m,
            figures(
              runs.filter((r) => r.mode === m),
              m === 'codeCache' ? STARTUP_GOALS[Number(lines)] : undefined,
            ),
          ]),
        ) as Partial<Record<StartupMode, ReturnType<typeof figures>>>),
        // What 2 threads gave over 1 on pure computation in the same rounds: the most any 2-worker ratio could be.
        machineCeiling2vs1: { median: round(median(ceiling[lines])), everyRound: ceiling[lines].map((x) => round(x)) },
      },
    ]),
  );
  return { runs: STARTUP_RUNS, loadAverage1m: load, lines: sizes };
}

/** Per round, `f` of the round's blocks; the median and quartiles over the rounds. */
function overRounds(blocks: Block[], f: (b: Record<Side, Block>) => number) {
  const rounds = new Map<number, Record<Side, Block>>();
  for (const b of blocks) rounds.set(b.round, { ...rounds.get(b.round), [b.side]: b } as Record<Side, Block>);
  const xs = [...rounds.values()].map(f);
  return { median: round(median(xs)), quartiles: [round(quantile(xs, 0.25)), round(quantile(xs, 0.75))] };
}

function pairedFigures(blocks: Block[]) {
  if (blocks.some((b) => b.side === 'two' && b.perWorkerLines!.some((n) => n < b.lines / 4)))
    throw new Error('a 2-worker block was not shared by both workers');
  const perLine = (side: Side, f: (b: Block) => number) =>
    round(median(blocks.filter((b) => b.side === side).map((b) => f(b) / b.lines)), 4);
  const threadCpu = overRounds(blocks, (r) => r.single.workMs / r.single.lines / (r.one.workMs / r.one.lines));
  const wall = overRounds(blocks, (r) => r.single.wallMs / r.one.wallMs);
  const processCpu = overRounds(blocks, (r) => r.single.processMs / r.one.processMs);
  const scaling = overRounds(blocks, (r) => r.one.wallMs / r.two.wallMs);
  const side = (s: Side) => ({
    threadCpuMsPerLine: perLine(s, (b) => b.workMs),
    wallMsPerLine: perLine(s, (b) => b.wallMs),
    processCpuMsPerLine: perLine(s, (b) => b.processMs),
    v8HelpersMsPerLine: perLine(s, (b) => b.helpersMs),
    ...(s === 'single' ? {} : { batchMainThreadMsPerLine: perLine(s, (b) => b.mainMs) }),
  });
  return {
    rounds: ROUNDS,
    linesPerBlock: BLOCK,
    warmUpLinesPerSide: WARM,
    medianPerBlock: { singleResponsePath: side('single'), batch1Worker: side('one'), batch2Workers: side('two') },
    perCore: {
      ratioInThreadCpu: threadCpu,
      ratioInWallTime: wall,
      ratioInProcessCpu: processCpu,
      goalRatio: 0.9,
      meetsGoal: threadCpu.median >= 0.9 && wall.median >= 0.9,
    },
    scaling: {
      ratio2vs1: scaling,
      goalRatio: 1.6,
      meetsGoal: scaling.median >= 1.6,
      threadCpuPerLine1vs2: overRounds(blocks, (r) => r.one.workMs / r.one.lines / (r.two.workMs / r.two.lines)),
    },
  };
}

/** A `tokenscope tokens --batch` process over STREAM_LINES short answers; VmRSS sampled as its output grows. */
async function streamRss(
  dir: string,
  tmp: string,
): Promise<{ lines: number; seconds: number; rssMB: { atPercent: number; MB: number }[] }> {
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
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin', 'tokenscope.js'),
      'tokens',
      '--batch',
      input,
      '--out',
      out,
      '--tokenizer-dir',
      dir,
      '--data-dir',
      join(tmp, 'data'),
      '--workers',
      '2',
      '--json',
    ],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
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
  const at = (pct: number) =>
    samples.reduce((best, s) => (Math.abs(s.bytes - total * pct) < Math.abs(best.bytes - total * pct) ? s : best));
  return {
    lines: written,
    seconds: round(seconds, 1),
    rssMB: [0.1, 0.25, 0.5, 0.75, 0.95].map((p) => ({ atPercent: Math.round((at(p).bytes / total) * 100), MB: round(at(p).MB, 0) })),
  };
}

export default async () => {
  const found = kimiTokenizerDir();
  if ('skip' in found) return { skipped: found.skip };
  const samples = sampleLines();
  if (!samples) return { skipped: 'shared recordings not found' };
  const workerFile = join(root, 'dist', 'tokens-batch-worker.js');
  if (!existsSync(workerFile) || !existsSync(join(root, 'dist', 'tokens-batch-boot.js')))
    return { skipped: 'dist/tokens-batch-worker.js or dist/tokens-batch-boot.js missing: run npm run build' };
  const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-bench-batch-'));
  try {
    const cacheDir = join(tmp, 'data');
    // Paired: the single path and the batch workers by turns, in one process. End to end: `runBatch` with 1 and 2
    // workers, alternated. Startup: whole runs over short files. Stream: RSS of a long run.
    const paired = PARTS.has('paired') ? await pairedPart(tmp, samples, found.dir, cacheDir, workerFile) : undefined;
    const endToEnd = PARTS.has('endToEnd') ? await endToEndPart(tmp, samples, found.dir, cacheDir, workerFile) : undefined;
    const startup = PARTS.has('startup') ? await startupFigures(tmp, samples, found.dir, cacheDir, workerFile) : undefined;
    const stream = PARTS.has('stream') ? await streamPart(found.dir, tmp) : undefined;
    return {
      goals: {
        ...(paired && {
          perCore: {
            ratioInThreadCpu: paired.perCore.ratioInThreadCpu.median,
            ratioInWallTime: paired.perCore.ratioInWallTime.median,
            goalRatio: 0.9,
            meetsGoal: paired.perCore.meetsGoal,
            loadAverage1m: paired.loadAverage1m,
          },
        }),
        ...(paired &&
          endToEnd && {
            scaling: {
              ratio2vs1Paired: paired.scaling.ratio2vs1.median,
              ratio2vs1EndToEnd: endToEnd.scaling.ratio2vs1,
              goalRatio: 1.6,
              meetsGoal: paired.scaling.meetsGoal && endToEnd.scaling.ratio2vs1 >= 1.6,
              loadAverage1m: [...paired.loadAverage1m, ...endToEnd.loadAverage1m],
            },
          }),
        ...(stream && { rssGrowthSecondHalfMB: stream.rssGrowthSecondHalfMB }),
        ...(startup && {
          startupScaling: {
            ...Object.fromEntries(
              Object.entries(startup.lines).map(([n, s]) => {
                const c = (s.codeCache ?? s.noCodeCache)!;
                return [
                  `lines${n}`,
                  {
                    ratio2vs1: c.ratio2vs1,
                    cpuRatio2vs1: c.cpuRatio2vs1,
                    machineCeiling2vs1: s.machineCeiling2vs1.median,
                    goalRatio: c.goalRatio,
                    meetsGoal: c.meetsGoal,
                    ...(s.noCodeCache &&
                      s.codeCache && {
                        withoutCodeCache: { ratio2vs1: s.noCodeCache.ratio2vs1, cpuRatio2vs1: s.noCodeCache.cpuRatio2vs1 },
                      }),
                  },
                ];
              }),
            ),
            loadAverage1m: startup.loadAverage1m,
          },
        }),
      },
      paired,
      endToEnd,
      startup,
      stream,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
};

const load = () => round(loadavg()[0], 1);

async function pairedPart(tmp: string, samples: string[], dir: string, cacheDir: string, workerFile: string) {
  const driver = join(tmp, 'tokens-paired.js');
  await build({
    entryPoints: [join(__dirname, 'tokens-paired.ts')],
    outfile: driver,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['libsql'],
    logLevel: 'warning',
  });
  const few = join(tmp, 'few.jsonl');
  writeFileSync(few, Array.from({ length: 300 }, (_, i) => samples[i % samples.length]).join('\n') + '\n');
  const pairedLoad = [load()];
  const blocks = await pairedBlocks(driver, few, dir, cacheDir, workerFile);
  pairedLoad.push(load());
  return { loadAverage1m: pairedLoad, ...pairedFigures(blocks) };
}

async function endToEndPart(tmp: string, samples: string[], dir: string, cacheDir: string, workerFile: string) {
  // End to end: runBatch with 1 and 2 workers, alternated (1, 2, then 2, 1, …).
  const lines = Array.from({ length: LINES }, (_, i) => samples[i % samples.length]);
  const input = join(tmp, 'in.jsonl');
  writeFileSync(input, lines.join('\n') + '\n');
  const rates: Record<'one' | 'two', Rate[]> = { one: [], two: [] };
  const e2eLoad = [load()];
  for (let i = 0; i < RUNS; i++) {
    for (const k of i % 2 ? (['two', 'one'] as const) : (['one', 'two'] as const)) {
      rates[k].push(await batchRate(input, join(tmp, `o-${k}.jsonl`), k === 'one' ? 1 : 2, dir, cacheDir, workerFile));
    }
  }
  if (readFileSync(join(tmp, 'o-one.jsonl'), 'utf8') !== readFileSync(join(tmp, 'o-two.jsonl'), 'utf8'))
    throw new Error('1 and 2 workers wrote different output');
  e2eLoad.push(load());
  const med = (k: keyof typeof rates, f: keyof Rate, d = 3) => round(median(rates[k].map((r) => r[f] as number)), d);
  const cores = (k: keyof typeof rates) => round(median(rates[k].map((r) => r.cpuMsPerLine / r.jsMsPerLine)), 2);
  const pairRatios = rates.one.map((r, i) => rates.two[i].linesPerSecond / r.linesPerSecond);
  const endToEnd = {
    lines: LINES,
    measuredFromLine: LINES * FROM,
    runs: RUNS,
    loadAverage1m: e2eLoad,
    linesPerSecond: { batch1Worker: med('one', 'linesPerSecond', 0), batch2Workers: med('two', 'linesPerSecond', 0) },
    warmingUpLinesPerSecond: {
      batch1Worker: med('one', 'warmingUpLinesPerSecond', 0),
      batch2Workers: med('two', 'warmingUpLinesPerSecond', 0),
    },
    cpuMsPerLine: { batch1Worker: med('one', 'cpuMsPerLine'), batch2Workers: med('two', 'cpuMsPerLine') },
    cpuMsPerLineByThread: Object.fromEntries(
      (['one', 'two'] as const).map((k) => [
        { one: 'batch1Worker', two: 'batch2Workers' }[k],
        { javascript: med(k, 'jsMsPerLine'), v8Helpers: med(k, 'helpersMsPerLine'), batchMainThread: med(k, 'mainMsPerLine', 4) },
      ]),
    ),
    coresPerWorker: { batch1Worker: cores('one'), batch2Workers: cores('two') },
    // Each 2-worker run over the 1-worker run beside it: the median, and every pair.
    scaling: {
      ratio2vs1: round(median(pairRatios)),
      everyPair: pairRatios.map((x) => round(x)),
      warmingUpRatio2vs1: round(med('two', 'warmingUpLinesPerSecond') / med('one', 'warmingUpLinesPerSecond')),
      ceiling2vs1: round(2 / cores('one')),
    },
  };
  return endToEnd;
}

async function streamPart(dir: string, tmp: string) {
  const stream = await streamRss(dir, tmp);
  const rss = stream.rssMB.map((s) => s.MB);
  // Growth from a quarter in (the workers' heaps and compiled code still reaching their working size), and over the
  // second half (what a longer file would add: bounded memory means none).
  const streamFigures = {
    loadAverage1m: load(),
    ...stream,
    rssGrowthMB: round(Math.max(...rss.slice(1)) - rss[1], 0),
    rssGrowthSecondHalfMB: round(Math.max(...rss.slice(2)) - rss[2], 0),
  };
  return streamFigures;
}
