// Lint throughput on ~1 MB Kimi K2 responses with leaked tool-call markup, end to end as `tokenscope lint` runs: the
// file's bytes (a Buffer, as the CLI reads it) → wire parse → analysis. Median CPU time of RUNS runs after warm-up,
// wall time beside (see `medians`). Each case has a baseline measured in the same run on the same bytes: the least
// any consumer does with them (decode, then JSON.parse of each SSE payload / of the body / of the text as a JSON
// string).
import { analyze } from '../src/core/analyze';
import { parseResponseBody } from '../src/core/wire/index';
import { mbPerS, medians } from './sse.bench';

const GOAL_MB_S = 50;
const RUNS = 9;
const MODEL = 'moonshotai/kimi-k2-0905';
const SIZE = 1_000_000;

const WORDS = 'The user wants the file read before editing so I will open src/app.ts and check the handler first. '.split(/(?<= )/);
/** K2 Thinking calling a tool inside its reasoning, cut at the section end (anomalyco/opencode#8851). */
const REASONING_LEAK =
  ' <|tool_calls_section_begin|> <|tool_call_begin|> functions.bash:0 <|tool_call_argument_begin|> {"command":"ls"} <|tool_call_end|> <|tool_calls_section_end|';
/** A whole call returned as content, never closed (anomalyco/opencode#1021). */
const CONTENT_LEAK =
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"filePath":"src/app.ts"}<|tool_call_end|>';

function chunk(delta: object, finish: string | null = null): string {
  const data = {
    id: 'gen-1777319903-e8Q7Du7mmUgiYBDzoHE6',
    object: 'chat.completion.chunk',
    created: 1777319903,
    model: MODEL,
    provider: 'Chutes',
    choices: [{ index: 0, delta, finish_reason: finish, native_finish_reason: finish }],
  };
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** An OpenRouter-style stream: one word per delta (reasoning, then content), the leaks, a finish chunk, [DONE]. */
function stream(size: number): string {
  const parts: string[] = [': OPENROUTER PROCESSING\n\n'];
  let bytes = 0;
  let i = 0;
  const put = (s: string) => {
    parts.push(s);
    bytes += s.length;
  };
  while (bytes < size * 0.2) put(chunk({ role: 'assistant', content: '', reasoning: WORDS[i++ % WORDS.length] }));
  put(chunk({ reasoning: REASONING_LEAK }));
  while (bytes < size * 0.97) put(chunk({ content: WORDS[i++ % WORDS.length] }));
  for (const piece of CONTENT_LEAK.match(/.{1,12}/g)!) put(chunk({ content: piece }));
  put(chunk({}, 'stop'));
  put('data: [DONE]\n\n');
  return parts.join('');
}

function prose(size: number): string {
  const out: string[] = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const w = WORDS[i % WORDS.length] + (i % 40 === 39 ? '\n' : '');
    out.push(w);
    n += w.length;
  }
  return out.join('');
}

/** A non-streamed chat.completion whose ~1 MB content ends with the leak. */
function completion(size: number): string {
  const message = { role: 'assistant', reasoning: `Plan.${REASONING_LEAK}`, content: prose(size) + CONTENT_LEAK };
  return JSON.stringify({ id: 'gen-1', object: 'chat.completion', model: MODEL, choices: [{ index: 0, finish_reason: 'stop', message }] });
}

/** Median CPU and wall time of `lint` and of the same-run baseline, as MB/s (CPU time is the figure with the goal). */
function measure(bytes: number, lint: () => unknown, analyzeOnly: () => unknown, baseline: () => unknown, baselineWhat: string) {
  const l = medians(lint, RUNS);
  const a = medians(analyzeOnly, RUNS);
  const b = medians(baseline, RUNS);
  const lintMBps = mbPerS(bytes, l.cpuMs);
  const base = mbPerS(bytes, b.cpuMs);
  return {
    bytes,
    lintMBps,
    analyzeOnlyMBps: mbPerS(bytes, a.cpuMs),
    baseline: { what: baselineWhat, MBps: base },
    ratioToBaseline: Math.round((lintMBps / base) * 100) / 100,
    wall: { lintMBps: mbPerS(bytes, l.wallMs), analyzeOnlyMBps: mbPerS(bytes, a.wallMs), baselineMBps: mbPerS(bytes, b.wallMs) },
    meetsGoal: lintMBps >= GOAL_MB_S,
  };
}

/** Leaked markup in a structured turn; in raw text the same markup is the turn's own (broken) structure. */
const LEAK_RULES = ['markup-in-content', 'markup-in-reasoning', 'section-unclosed'];
const RAW_RULES = ['reasoning-unclosed', 'marker-truncated', 'section-unclosed'];

function expectFlagged(rules: string[], expected = LEAK_RULES): void {
  for (const r of expected) {
    if (!rules.includes(r)) throw new Error(`bench input not flagged as intended (${r} missing; got ${rules.join(', ')})`);
  }
}

const utf8 = new TextDecoder();

export default async () => {
  const sse = Buffer.from(stream(SIZE));
  const sseParsed = parseResponseBody(sse);
  expectFlagged(analyze({ response: sseParsed }).findings.map((f) => f.rule));

  const json = Buffer.from(completion(SIZE));
  const jsonParsed = parseResponseBody(json);
  expectFlagged(analyze({ response: jsonParsed }).findings.map((f) => f.rule));

  const raw = Buffer.from(`<think>Plan.${REASONING_LEAK}</think>${prose(SIZE)}${CONTENT_LEAK}`);
  const rawParsed = parseResponseBody(raw);
  expectFlagged(
    analyze({ response: rawParsed, model: MODEL }).findings.map((f) => f.rule),
    RAW_RULES,
  );
  const rawJson = Buffer.from(JSON.stringify(utf8.decode(raw)));

  return {
    goalMBps: GOAL_MB_S,
    runs: RUNS,
    time: 'process CPU time (user + system), median; wall-time medians beside',
    stream: {
      events: sseParsed.events.length,
      ...measure(
        sse.length,
        () => analyze({ response: parseResponseBody(sse) }),
        () => analyze({ response: sseParsed }),
        () => {
          for (const block of utf8.decode(sse).split('\n\n')) if (block.startsWith('data: {')) JSON.parse(block.slice(6));
        },
        'decode, split the SSE events + JSON.parse each payload',
      ),
    },
    completion: measure(
      json.length,
      () => analyze({ response: parseResponseBody(json) }),
      () => analyze({ response: jsonParsed }),
      () => JSON.parse(utf8.decode(json)),
      'decode + JSON.parse of the body',
    ),
    rawText: measure(
      raw.length,
      () => analyze({ response: parseResponseBody(raw), model: MODEL }),
      () => analyze({ response: rawParsed, model: MODEL }),
      () => JSON.parse(utf8.decode(rawJson)),
      'decode + JSON.parse of the same text as a JSON string',
    ),
  };
};
