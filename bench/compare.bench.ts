// Provider comparison wall time: 10 emulated providers × 3 samples with realistic latencies (TTFT 150–400 ms,
// 20–60 chunks 5–20 ms apart), against the slowest single request measured alone in the same run.
// Goal: ratio ≤ 1.2 — the fan-out runs in parallel, with the number of requests in flight bounded.
import { compareProviders, DEFAULT_CONCURRENCY } from '../src/core/upstream/compare';
import { OpenRouterClient } from '../src/core/upstream/openrouter';
import { runRequest } from '../src/core/upstream/run';
import { startOpenRouterEmulator, type Personality, type ProviderSpec } from '../test/fixtures/openrouter-emulator';

const PERSONALITIES: Personality[] = [
  'correct',
  'correct',
  'leak-content',
  'truncated-args',
  'reasoning-markup',
  'bad-id',
  'schema-violation',
  'html-injection',
  'correct',
  'correct',
];
const SLUGS = ['fireworks', 'novita', 'chutes', 'together', 'baseten', 'parasail', 'groq', 'deepinfra', 'gmicloud', 'atlas-cloud'];

const REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  stream: true,
  messages: [{ role: 'user', content: 'Read the README and summarise it.' }],
  tools: [
    {
      type: 'function',
      function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    },
  ],
};

export default async () => {
  const providers: ProviderSpec[] = SLUGS.map((slug, i) => ({ slug, name: slug, personality: PERSONALITIES[i] }));
  const emu = await startOpenRouterEmulator({ providers, realisticLatency: true });
  try {
    const client = new OpenRouterClient({ baseUrl: emu.url, apiKey: 'sk-or-v1-bench' });
    // Warm-up (module loading, JIT, schema compilation) so neither side pays it.
    await compareProviders({ request: REQUEST, client, samples: 1 });
    // Baseline: each provider once, alone; the slowest of these is the floor for any comparison.
    let slowestSingleMs = 0;
    for (const slug of SLUGS) {
      const o = await runRequest({ kind: 'openrouter', provider: slug }, REQUEST, { openrouter: client });
      if (!o.ok) throw new Error(`baseline request to ${slug} failed: ${o.error}`);
      slowestSingleMs = Math.max(slowestSingleMs, o.durationMs);
    }
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await compareProviders({ request: REQUEST, client, samples: 3 }));
    const walls = runs.map((r) => r.wallMs).sort((a, b) => a - b);
    const median = walls[1];
    return {
      providers: runs[0].providers.length,
      samplesEach: runs[0].samples,
      requests: runs[0].providers.length * runs[0].samples,
      failed: runs.reduce((n, r) => n + r.providers.reduce((m, p) => m + p.failed, 0), 0),
      concurrency: `bounded: at most ${DEFAULT_CONCURRENCY} requests in flight`,
      wallMsMedianOf3: Math.round(median),
      wallMsRuns: walls.map(Math.round),
      slowestSingleRequestMs: Math.round(slowestSingleMs),
      ratio: Number((median / slowestSingleMs).toFixed(3)),
      goal: '≤ 1.2',
    };
  } finally {
    await emu.close();
  }
};
