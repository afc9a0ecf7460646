// The capture store at 100,000 exchanges: `captures` listing and filtering (an indexed query each, as the CLI runs
// it: open read-only, query, close), and the same queries on an open store. Goal: under 50 ms each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptureDb, DB_FILE } from '../src/core/capture/database';
import { openStore, type ExchangeQuery } from '../src/core/capture/store';
import type { CapturedExchange } from '../src/core/model';
import { filterQuery, parseFilter } from '../src/extension/captureFilter';

const N = 100_000;
const RUNS = 9;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function seed(dir: string): void {
  const db = CaptureDb.open(join(dir, DB_FILE));
  const t0 = Date.now() - N * 1000;
  db.batch(() => {
    for (let i = 0; i < N; i++) {
      const broken = i % 7 === 0;
      const x: CapturedExchange = {
        id: (t0 + i * 1000).toString(36).padStart(9, '0') + '00' + (i % 46656).toString(36).padStart(3, '0'),
        sessionId: `s${i >> 6}`,
        startedAt: t0 + i * 1000,
        state: 'complete',
        agent: i % 3 ? 'opencode' : 'claude-code',
        route: 'openrouter',
        upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
        method: 'POST',
        path: '/openrouter/v1/chat/completions',
        requestHeaders: { 'content-type': 'application/json', 'user-agent': 'opencode/1.0' },
        status: 200,
        responseHeaders: { 'content-type': 'text/event-stream' },
        responseBytes: 4000,
        requestModel: ['moonshotai/kimi-k2-0905', 'z-ai/glm-4.6', 'qwen/qwen3-coder', 'deepseek/deepseek-v3.1'][i % 4],
        servedProvider: ['Chutes', 'Fireworks', 'Groq', 'Together', 'DeepInfra'][i % 5],
        summary: { counts: { error: broken ? 1 : 0, warning: 0, info: 0 }, rules: broken ? ['section-unclosed'] : [] },
      };
      db.put(x, 2000, undefined);
      if (broken)
        db.putAnalysis(
          x,
          [{ rule: 'section-unclosed', severity: 'error', message: '', location: 'content' }],
          JSON.stringify({ version: 0 }),
        );
    }
  });
  db.close();
}

export default async function bench() {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-bench-store-'));
  try {
    let t = performance.now();
    await (await openStore(dir, { analyze: false })).close();
    seed(dir);
    const seedMs = performance.now() - t;
    const queries: Record<string, ExchangeQuery> = {
      'captures --limit 50': { limit: 50 },
      'captures --broken --limit 50': { broken: true, limit: 50 },
      'captures --model M --provider P --limit 50': { model: 'z-ai/glm-4.6', provider: 'fireworks', limit: 50 },
      'captures --rule R --agent A --limit 50': { rule: 'section-unclosed', agent: 'claude-code', limit: 50 },
      'captures --since 1h --limit 50': { since: Date.now() - 3_600_000, limit: 50 },
      'captures --since 1h (all 3,600)': { since: Date.now() - 3_600_000 },
      'captures --session S': { session: 's800' },
      // The Captures tree's Filter Captures… runs the same query from the same flags.
      'tree filter "--broken --agent claude-code --since 1d --limit 200"': filterQuery(
        parseFilter('--broken --agent claude-code --since 1d --limit 200')!,
      ),
    };
    const cli: Record<string, number> = {};
    const open: Record<string, number> = {};
    const store = await openStore(dir, { readOnly: true });
    for (const [name, q] of Object.entries(queries)) {
      const a: number[] = [];
      const b: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        t = performance.now();
        const s = await openStore(dir, { readOnly: true });
        s.query(q);
        await s.close();
        a.push(performance.now() - t);
        t = performance.now();
        store.query(q);
        b.push(performance.now() - t);
      }
      cli[name] = Math.round(median(a) * 100) / 100;
      open[name] = Math.round(median(b) * 100) / 100;
    }
    t = performance.now();
    const all = store.list().length;
    const firstListMs = performance.now() - t;
    t = performance.now();
    store.list();
    const cachedListMs = performance.now() - t;
    await store.close();
    return {
      exchanges: all,
      seedMs: Math.round(seedMs),
      goalMs: 50,
      medianMsOpenQueryClose: cli,
      medianMsOnOpenStore: open,
      worstMs: Math.max(...Object.values(cli)),
      fullListMs: { first: Math.round(firstListMs), cached: Math.round(cachedListMs * 100) / 100 },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
