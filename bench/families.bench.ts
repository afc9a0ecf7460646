// `tokenscope lint --json` end to end on a 20 MB raw output of every family of the registry, as a user runs it: a
// new process reads the file, parses it with the family's grammar, runs every check and prints the JSON report.
// Each input is the family's own output: prose, then CALLS calls, the last one cut off (so the turn is flagged), with
// non-ASCII text in it. Figures: MB/s over the process's wall and CPU time (median of RUNS runs), and peak RSS as a
// multiple of the input. The baseline, measured in the same run on the same file, is the least any consumer does with
// it in a new Node process: read it, decode it, write it back as one JSON string.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { families, getFormat } from '../src/core/families/index';
import type { AssistantMessage, FamilyId } from '../src/core/model';
import { mbPerS } from './sse.bench';

const GOAL_MB_S = 50;
const GOAL_RSS_X = 5;
const RUNS = Number(process.env.BENCH_FAMILY_RUNS) || 3;
const SIZE = Number(process.env.BENCH_FAMILY_BYTES) || 20_000_000;
const CALLS = 50;
const ROOT = join(__dirname, '..');
/** Prints the process's CPU time and peak RSS to stderr as it exits. */
const PRELOAD = `process.on('exit',()=>{const u=process.resourceUsage();require('node:fs').writeSync(2,'\\nbench-usage '+(u.userCPUTime+u.systemCPUTime)+' '+u.maxRSS+'\\n')})`;

const WORDS = 'The user wants the file read before editing, so I will open src/app.ts — café, 日本語 — and check the handler first. ';

/** A turn of the family whose rendered text is about `size` characters: prose, then the calls, cut inside the last one. */
export function familyInput(id: FamilyId, size: number): string {
  const f = getFormat(id);
  const content = WORDS.repeat(Math.ceil(size / WORDS.length));
  const calls = Array.from({ length: CALLS }, (_, i) => ({
    index: i,
    name: 'read_file',
    arguments: JSON.stringify({ path: `src/file${i}.ts`, offset: i, limit: 40 }),
  }));
  const m: AssistantMessage = { content, toolCalls: calls };
  const r = f.render(m);
  const last = r.segments.filter((s) => s.kind === 'call').at(-1)!;
  return r.text.slice(0, last.start + Math.floor((last.end - last.start) / 2));
}

interface Run {
  wallMs: number;
  cpuMs: number;
  rssKb: number;
  exit: number | null;
}

function run(args: string[]): Run {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(
    process.execPath,
    [
      '-e',
      `${PRELOAD};${args[0] === '-e' ? args[1] : `process.argv.splice(1,0,${JSON.stringify(join(ROOT, 'bin/tokenscope.js'))});require(${JSON.stringify(join(ROOT, 'bin/tokenscope.js'))})`}`,
      ...(args[0] === '-e' ? args.slice(2) : args),
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      maxBuffer: 1 << 26,
    },
  );
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const m = /bench-usage (\d+) (\d+)/.exec(r.stderr.toString());
  if (!m) throw new Error(`no usage line: ${r.stderr.toString().slice(0, 400)}`);
  return { wallMs, cpuMs: Number(m[1]) / 1000, rssKb: Number(m[2]), exit: r.status };
}

function median(runs: Run[], k: keyof Run): number {
  const xs = runs.map((r) => r[k] as number).sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)];
}

export default async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-bench-families-'));
  const out: Record<
    string,
    { bytes: number; wallMBps: number; cpuMBps: number; rssX: number; ratioToBaseline: number; meetsGoal: boolean }
  > = {};
  let baseline: { wallMBps: number; rssX: number } | undefined;
  try {
    for (const f of families) {
      const file = join(dir, `${f.id}.txt`);
      const text = familyInput(f.id, SIZE);
      writeFileSync(file, text);
      const bytes = Buffer.byteLength(text);
      if (!baseline) {
        const b = Array.from({ length: RUNS }, () =>
          run([
            '-e',
            `const s=require('node:fs').readFileSync(process.argv[1],'utf8');process.stdout.write(JSON.stringify({content:s}))`,
            file,
          ]),
        );
        baseline = { wallMBps: mbPerS(bytes, median(b, 'wallMs')), rssX: Math.round(((median(b, 'rssKb') * 1024) / bytes) * 10) / 10 };
      }
      const runs = Array.from({ length: RUNS }, () => run(['lint', '--json', '--family', f.id, file]));
      if (runs.some((r) => r.exit !== 1))
        throw new Error(`${f.id}: lint did not flag the cut call (exit ${runs.map((r) => r.exit).join(',')})`);
      const wallMBps = mbPerS(bytes, median(runs, 'wallMs'));
      const rssX = Math.round(((median(runs, 'rssKb') * 1024) / bytes) * 10) / 10;
      out[f.id] = {
        bytes,
        wallMBps,
        cpuMBps: mbPerS(bytes, median(runs, 'cpuMs')),
        rssX,
        ratioToBaseline: Math.round((wallMBps / baseline.wallMBps) * 100) / 100,
        meetsGoal: wallMBps >= GOAL_MB_S && rssX <= GOAL_RSS_X,
      };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rates = Object.values(out)
    .map((f) => f.wallMBps)
    .sort((x, y) => x - y);
  const mem = Object.values(out)
    .map((f) => f.rssX)
    .sort((x, y) => x - y);
  return {
    goal: { MBps: GOAL_MB_S, rssX: GOAL_RSS_X },
    bytes: SIZE,
    runs: RUNS,
    what: '`tokenscope lint --json --family ID FILE` in a new process, median wall time; peak RSS / input bytes',
    baseline: { what: 'new Node process: read, decode, JSON.stringify, write', ...baseline },
    minMBps: rates[0],
    medianMBps: rates[Math.floor(rates.length / 2)],
    maxRssX: mem.at(-1),
    meetGoal: Object.values(out).filter((f) => f.meetsGoal).length,
    families: out,
  };
};
