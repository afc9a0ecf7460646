// Tokenizer benchmark: Kimi K2 cold load (with and without the rank cache) and encode throughput on a ~1 MB mixed
// corpus, beside two baselines in the same run: tiktoken WASM (Rust core) with the same ranks and pattern, and
// Tokenscope's encoder splitting with the regex (the pattern the hand-written pre-tokenizer stands for).
// Cold loads run in fresh Node processes (one per sample) so no JIT or module state carries over; figures are medians.
// `firstMBps` is the first encode on a fresh tokenizer (its piece cache empty, its code not yet optimized),
// `medianMBps` the median of all runs in wall time, `perCoreMBps` the median in the CPU time of the encoding thread
// (what one core does, whatever else the machine runs). Goal: Kimi ≥ 25 MB/s per core.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tiktoken } from 'tiktoken';
import { TiktokenBpe } from '../src/core/tokens/bpe';
import { KIMI_PAT_STR, KIMI_PATTERN, loadKimiTokenizer } from '../src/core/tokens/kimi';
import { loadRanks } from '../src/core/tokens/rank-cache';
import { mixedCorpus } from '../test/unit/tokens/corpus';
import { kimiTokenizerDir } from '../test/unit/tokens/helpers';

const LOAD_RUNS = 5;
const ENCODE_RUNS = Number(process.env.BENCH_ENCODE_RUNS ?? 7);
const GOAL_MB_PER_S = 25;
const root = join(__dirname, '..');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

interface LoadSample {
  ms: number;
  heapMB: number;
  externalMB: number;
}

/** One cold load in a fresh process: `engine` is `kimi` (our loader) or `tiktoken` (WASM from the rank text). */
function coldLoad(engine: 'kimi' | 'tiktoken', dir: string, cacheDir: string | null): LoadSample {
  const script = `
    const { readFileSync } = require('node:fs');
    const kimi = require('./src/core/tokens/kimi.ts');
    const specials = kimi.kimiSpecials(163584, JSON.parse(readFileSync(${JSON.stringify(join(dir, 'tokenizer_config.json'))}, 'utf8')));
    const tiktoken = ${engine === 'tiktoken'} ? require('tiktoken') : undefined;
    global.gc(); const m0 = process.memoryUsage();
    const t0 = performance.now();
    const tok = tiktoken
      ? new tiktoken.Tiktoken(readFileSync(${JSON.stringify(join(dir, 'tiktoken.model'))}, 'utf8'), Object.fromEntries(specials), kimi.KIMI_PAT_STR)
      : kimi.loadKimiTokenizer({ dir: ${JSON.stringify(dir)}, cacheDir: ${JSON.stringify(cacheDir)} ?? undefined });
    const ms = performance.now() - t0;
    global.gc(); const m1 = process.memoryUsage();
    if (tok.encode('Hello').length !== 1) throw new Error('bad tokenizer');
    process.stdout.write(JSON.stringify({ ms, heapMB: (m1.heapUsed - m0.heapUsed) / 2 ** 20, externalMB: (m1.external - m0.external) / 2 ** 20 }));
  `;
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '-e', script], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out) as LoadSample;
}

function summarize(samples: LoadSample[]) {
  return {
    ms: round(median(samples.map((s) => s.ms))),
    heapMB: round(median(samples.map((s) => s.heapMB))),
    externalMB: round(median(samples.map((s) => s.externalMB))),
  };
}

/** CPU ms of this thread so far: /proc/thread-self/schedstat (ns on a core), else the process's CPU time. */
function threadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
}

interface Throughput {
  tokens: number;
  firstMBps: number;
  medianMBps: number;
  perCoreMBps: number;
}

/** Times the engines in alternation, run by run, so machine noise (other processes) hits them alike. */
function throughput(engines: Record<string, () => number>, mb: number): Record<string, Throughput> {
  const ms: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const tokens: Record<string, number> = {};
  for (let i = 0; i < ENCODE_RUNS; i++) {
    for (const [name, encode] of Object.entries(engines)) {
      const [t0, c0] = [performance.now(), threadCpuMs()];
      tokens[name] = encode();
      (ms[name] ??= []).push(performance.now() - t0);
      (cpu[name] ??= []).push(threadCpuMs() - c0);
    }
  }
  return Object.fromEntries(
    Object.keys(engines).map((name) => [
      name,
      {
        tokens: tokens[name],
        firstMBps: round(mb / (ms[name][0] / 1000), 2),
        medianMBps: round(mb / (median(ms[name]) / 1000), 2),
        perCoreMBps: round(mb / (median(cpu[name]) / 1000), 2),
      },
    ]),
  );
}

export default async () => {
  const found = kimiTokenizerDir();
  if ('skip' in found) return { skipped: found.skip };
  const { dir } = found;
  const cacheDir = mkdtempSync(join(tmpdir(), 'tokenscope-bench-'));
  try {
    loadKimiTokenizer({ dir, cacheDir }); // writes the rank cache the cached samples read
    const noCache = summarize(Array.from({ length: LOAD_RUNS }, () => coldLoad('kimi', dir, null)));
    const cached = summarize(Array.from({ length: LOAD_RUNS }, () => coldLoad('kimi', dir, cacheDir)));
    const wasm = summarize(Array.from({ length: LOAD_RUNS }, () => coldLoad('tiktoken', dir, null)));

    const corpus = mixedCorpus();
    const mb = Buffer.byteLength(corpus) / 1e6;
    const kimi = loadKimiTokenizer({ dir, cacheDir });
    const regexSplit = new TiktokenBpe({
      name: 'regex split',
      ranks: loadRanks(join(dir, 'tiktoken.model'), cacheDir),
      pattern: KIMI_PATTERN,
      specials: kimi.specials,
    });
    const oracle = new Tiktoken(readFileSync(join(dir, 'tiktoken.model'), 'utf8'), Object.fromEntries(kimi.specials), KIMI_PAT_STR);
    const {
      kimi: ours,
      kimiRegexSplit: byRegex,
      tiktokenWasm: theirs,
    } = throughput(
      {
        kimi: () => kimi.encode(corpus).length,
        kimiRegexSplit: () => regexSplit.encode(corpus).length,
        tiktokenWasm: () => oracle.encode(corpus, 'all').length,
      },
      mb,
    );
    oracle.free();
    if (ours.tokens !== theirs.tokens || byRegex.tokens !== theirs.tokens)
      throw new Error(`token counts differ: ${ours.tokens}, ${byRegex.tokens} vs ${theirs.tokens}`);

    return {
      corpus: { MB: round(mb, 3), tokens: ours.tokens },
      kimiColdLoad: { withCache: cached, withoutCache: noCache, goalMs: 500, meetsGoal: cached.ms <= 500 },
      tiktokenWasmColdLoad: wasm,
      encode: {
        kimi: ours,
        kimiRegexSplit: byRegex,
        tiktokenWasm: theirs,
        ratioMedian: round(ours.medianMBps / theirs.medianMBps, 2),
        ratioPerCore: round(ours.perCoreMBps / theirs.perCoreMBps, 2),
        ratioFirstRun: round(ours.firstMBps / theirs.firstMBps, 2),
        ratioPerCoreVsRegexSplit: round(ours.perCoreMBps / byRegex.perCoreMBps, 2),
        goalMBpsPerCore: GOAL_MB_PER_S,
        meetsGoal: ours.perCoreMBps >= GOAL_MB_PER_S && ours.medianMBps >= theirs.medianMBps,
      },
    };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
};
