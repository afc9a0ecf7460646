// SSE reader and full response parsing throughput on a ~2 MB OpenRouter-style chat stream (keep-alive comments,
// reasoning deltas with reasoning_details, content deltas, a tool call in fragments, usage chunk, [DONE]),
// against a naive baseline (decode, split on '\n' + JSON.parse of every data line) over the same bytes.
import { parseResponseBody } from '../src/core/wire/index';
import { parseSse } from '../src/core/wire/sse';

const GOAL_MB_PER_S = 50;
const RUNS = 9;
/**
 * Runs before timing starts. A fresh process needs about a dozen runs of a 1 MB parse before its times settle (the
 * optimizing compiler works on background threads and the heap grows to its working size): fewer warm-ups would
 * time the JIT, not the parser.
 */
const WARM_UPS = 15;

export interface Timing {
  /** Median CPU time (user + system) of the process per run, ms. */
  cpuMs: number;
  /** Median wall time per run, ms. */
  wallMs: number;
}

/**
 * Median CPU and wall time of `runs` runs of `fn`, after `WARM_UPS` warm-ups. The figure that counts is CPU time:
 * the work is single-threaded and the machine is shared, so wall time mostly measures the neighbours; it is
 * reported beside it for transparency. CPU time counts every thread of the process, so the compiler's and the
 * garbage collector's helper threads are charged to the work that needed them.
 */
export function medians(fn: () => unknown, runs = RUNS): Timing {
  for (let i = 0; i < WARM_UPS; i++) fn();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    fn();
    const c = process.cpuUsage(c0);
    wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
    cpu.push((c.user + c.system) / 1000);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { cpuMs: median(cpu), wallMs: median(wall) };
}

/** MB/s (10^6 bytes) for `bytes` processed in `ms`, one decimal. */
export function mbPerS(bytes: number, ms: number): number {
  return Math.round((bytes / 1e6 / (ms / 1000)) * 10) / 10;
}

function buildStream(targetBytes: number): Uint8Array {
  const head = {
    id: 'gen-1777319903-e8Q7Du7mmUgiYBDzoHE6',
    object: 'chat.completion.chunk',
    created: 1777319903,
    model: 'moonshotai/kimi-k2.5-0127',
    provider: 'Chutes',
  };
  const words = [
    ' The',
    ' user',
    ' wants',
    ' the',
    ' weather',
    ' in',
    ' Florence',
    ',',
    ' Italy',
    '.',
    ' Olá',
    ' café',
    ' 😀',
    ' — ',
    '\n',
  ];
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish, native_finish_reason: finish }] })}\n\n`;
  const parts: string[] = [': OPENROUTER PROCESSING\n\n', ': OPENROUTER PROCESSING\n\n'];
  let size = 0;
  for (let i = 0; size < targetBytes * 0.6; i++) {
    const w = words[i % words.length];
    const s = chunk({
      content: '',
      role: 'assistant',
      reasoning: w,
      reasoning_details: [{ type: 'reasoning.text', text: w, format: 'unknown', index: 0 }],
    });
    parts.push(s);
    size += s.length;
  }
  for (let i = 0; size < targetBytes * 0.9; i++) {
    const s = chunk({ content: words[i % words.length], role: 'assistant' });
    parts.push(s);
    size += s.length;
  }
  parts.push(
    chunk({
      role: 'assistant',
      tool_calls: [{ index: 0, id: 'functions.weather:0', type: 'function', function: { name: 'weather', arguments: '' } }],
    }),
  );
  for (let i = 0; size < targetBytes; i++) {
    const s = chunk({ role: 'assistant', tool_calls: [{ index: 0, function: { arguments: i === 0 ? '{"location": "' : 'Flo' } }] });
    parts.push(s);
    size += s.length;
  }
  parts.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, function: { arguments: '"}' } }] }, 'tool_calls'));
  parts.push(
    `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 69, completion_tokens: 87, total_tokens: 156 } })}\n\ndata: [DONE]\n\n`,
  );
  return new TextEncoder().encode(parts.join(''));
}

function naive(bytes: Uint8Array): number {
  let n = 0;
  for (const line of new TextDecoder().decode(bytes).split('\n')) {
    if (line.startsWith('data: ') && line !== 'data: [DONE]') {
      JSON.parse(line.slice(6));
      n++;
    }
  }
  return n;
}

export default async function bench() {
  const bytes = buildStream(2_000_000);
  const check = parseResponseBody(bytes);
  if (check.wireIssues.length > 0 || !check.terminated || check.message.toolCalls.length !== 1) {
    throw new Error(`bench stream did not parse cleanly: ${JSON.stringify(check.wireIssues)}`);
  }
  const sse = medians(() => parseSse(bytes));
  const parse = medians(() => parseResponseBody(bytes));
  const baseline = medians(() => naive(bytes));
  const rate = (t: Timing) => mbPerS(bytes.length, t.cpuMs);
  const wallRate = (t: Timing) => mbPerS(bytes.length, t.wallMs);
  return {
    body_bytes: bytes.length,
    events: check.events.length,
    runs: RUNS,
    time: 'process CPU time (user + system), median; wall-time medians beside',
    sse_mb_per_s: rate(sse),
    parse_mb_per_s: rate(parse),
    baseline_mb_per_s: rate(baseline),
    ratio_vs_baseline: Math.round((rate(parse) / rate(baseline)) * 100) / 100,
    wall: { sse_mb_per_s: wallRate(sse), parse_mb_per_s: wallRate(parse), baseline_mb_per_s: wallRate(baseline) },
    goal_mb_per_s: GOAL_MB_PER_S,
    meets_goal: rate(sse) >= GOAL_MB_PER_S && rate(parse) >= GOAL_MB_PER_S,
  };
}
