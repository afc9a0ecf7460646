// SSE reader and full response parsing throughput on a ~2 MB OpenRouter-style chat stream (keep-alive comments,
// reasoning deltas with reasoning_details, content deltas, a tool call in fragments, usage chunk, [DONE]),
// against a naive baseline (split on '\n' + JSON.parse of every data line) over the same bytes.
import { parseResponseBody } from '../src/core/wire/index';
import { parseSse } from '../src/core/wire/sse';

const GOAL_MB_PER_S = 50;
const RUNS = 9;

function buildStream(targetBytes: number): Uint8Array {
  const head = { id: 'gen-1777319903-e8Q7Du7mmUgiYBDzoHE6', object: 'chat.completion.chunk', created: 1777319903, model: 'moonshotai/kimi-k2.5-0127', provider: 'Chutes' };
  const words = [' The', ' user', ' wants', ' the', ' weather', ' in', ' Florence', ',', ' Italy', '.', ' Olá', ' café', ' 😀', ' — ', '\n'];
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish, native_finish_reason: finish }] })}\n\n`;
  const parts: string[] = [': OPENROUTER PROCESSING\n\n', ': OPENROUTER PROCESSING\n\n'];
  let size = 0;
  for (let i = 0; size < targetBytes * 0.6; i++) {
    const w = words[i % words.length];
    const s = chunk({ content: '', role: 'assistant', reasoning: w, reasoning_details: [{ type: 'reasoning.text', text: w, format: 'unknown', index: 0 }] });
    parts.push(s);
    size += s.length;
  }
  for (let i = 0; size < targetBytes * 0.9; i++) {
    const s = chunk({ content: words[i % words.length], role: 'assistant' });
    parts.push(s);
    size += s.length;
  }
  parts.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'functions.weather:0', type: 'function', function: { name: 'weather', arguments: '' } }] }));
  for (let i = 0; size < targetBytes; i++) {
    const s = chunk({ role: 'assistant', tool_calls: [{ index: 0, function: { arguments: i === 0 ? '{"location": "' : 'Flo' } }] });
    parts.push(s);
    size += s.length;
  }
  parts.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, function: { arguments: '"}' } }] }, 'tool_calls'));
  parts.push(`data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 69, completion_tokens: 87, total_tokens: 156 } })}\n\ndata: [DONE]\n\n`);
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

/**
 * Median MB/s of `RUNS` runs after three warm-ups. Time is the process's CPU time, not wall time: the machine is
 * shared, and wall time mostly measures the neighbours.
 */
function throughput(bytes: Uint8Array, fn: (b: Uint8Array) => unknown): number {
  for (let i = 0; i < 3; i++) fn(bytes);
  const rates: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.cpuUsage();
    fn(bytes);
    const used = process.cpuUsage(start);
    rates.push(bytes.length / 1e6 / ((used.user + used.system) / 1e6));
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)];
}

export default async function bench() {
  const bytes = buildStream(2_000_000);
  const check = parseResponseBody(bytes);
  if (check.wireIssues.length > 0 || !check.terminated || check.message.toolCalls.length !== 1) {
    throw new Error(`bench stream did not parse cleanly: ${JSON.stringify(check.wireIssues)}`);
  }
  const round = (x: number) => Math.round(x * 10) / 10;
  const sse = throughput(bytes, parseSse);
  const parse = throughput(bytes, (b) => parseResponseBody(b));
  const baseline = throughput(bytes, naive);
  return {
    body_bytes: bytes.length,
    events: check.events.length,
    runs: RUNS,
    sse_mb_per_s: round(sse),
    parse_mb_per_s: round(parse),
    baseline_mb_per_s: round(baseline),
    ratio_vs_baseline: round(parse / baseline),
    goal_mb_per_s: GOAL_MB_PER_S,
  };
}
