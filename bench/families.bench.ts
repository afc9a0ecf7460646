// Lint throughput per tool-call family added with the 2026 dialects, end to end as `tokenscope lint FILE` runs on raw
// model output: the bytes → wire parse → family parse → every check. Each input is ~1 MB of the family's own output
// (prose content, then CALLS calls, the last one cut off so the turn is flagged), median CPU time of RUNS runs.
import { analyze } from '../src/core/analyze';
import { formats, getFormat } from '../src/core/families/index';
import type { AssistantMessage, FamilyId } from '../src/core/model';
import { parseResponseBody } from '../src/core/wire/index';
import { mbPerS, medians } from './sse.bench';

const GOAL_MB_S = 50;
const RUNS = 5;
const SIZE = 1_000_000;
const CALLS = 50;

/** The families Tokenscope had before the 2026 dialects; every other family of the registry is measured. */
const FIRST: ReadonlySet<FamilyId> = new Set<FamilyId>(['kimi-k2', 'deepseek-v3', 'deepseek-v31', 'qwen3-coder', 'qwen3', 'glm45', 'gpt-oss', 'minimax-m2']);
const FAMILIES: FamilyId[] = formats.map((f) => f.id).filter((id) => !FIRST.has(id));

const WORDS = 'The user wants the file read before editing so I will open src/app.ts and check the handler first. ';

/** A turn of the family whose rendered text is about `size` characters: prose, then the calls, cut inside the last one. */
function input(id: FamilyId, size: number): string {
  const f = getFormat(id);
  const content = WORDS.repeat(Math.ceil(size / WORDS.length));
  const calls = Array.from({ length: CALLS }, (_, i) => ({
    index: i,
    name: 'read_file',
    arguments: JSON.stringify({ path: `src/file${i}.ts`, offset: i, limit: 40 }),
  }));
  const m: AssistantMessage = { content, toolCalls: calls };
  const text = f.render(m).text;
  const last = f.render(m).segments.filter((s) => s.kind === 'call').at(-1)!;
  return text.slice(0, last.start + Math.floor((last.end - last.start) / 2));
}

export default async () => {
  const families: Record<string, { bytes: number; lintMBps: number; wallMBps: number; meetsGoal: boolean }> = {};
  for (const id of FAMILIES) {
    const raw = Buffer.from(input(id, SIZE));
    const a = analyze({ response: parseResponseBody(raw), model: undefined });
    if (a.family !== id && getFormat(id).detectText(raw.toString()) === 0) throw new Error(`${id}: bench input not recognised`);
    if (!a.findings.some((f) => f.severity === 'error')) throw new Error(`${id}: bench input not flagged (${a.family})`);
    const t = medians(() => analyze({ response: parseResponseBody(raw), family: id }), RUNS);
    const lintMBps = mbPerS(raw.length, t.cpuMs);
    families[id] = { bytes: raw.length, lintMBps, wallMBps: mbPerS(raw.length, t.wallMs), meetsGoal: lintMBps >= GOAL_MB_S };
  }
  const rates = Object.values(families).map((f) => f.lintMBps).sort((x, y) => x - y);
  return { goalMBps: GOAL_MB_S, runs: RUNS, callsPerTurn: CALLS, time: 'process CPU time (user + system), median', minMBps: rates[0], medianMBps: rates[Math.floor(rates.length / 2)], families };
};
