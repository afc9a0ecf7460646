/** Test access to a data dir's database beside the store's API (what a crashed recorder leaves behind). */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CaptureDb, DB_FILE } from '../../../src/core/capture/database';
import type { CapturedExchange } from '../../../src/core/model';

type Db = { prepare(sql: string): { run(...a: unknown[]): unknown }; close(): void };

/** Makes `pid` the recorder of exchange `id` (a process that exited: the exchange was interrupted). */
export function setRecorderPid(dataDir: string, id: string, pid: number | undefined): void {
  const Sqlite = createRequire(__filename)('libsql') as new (path: string) => Db;
  const db = new Sqlite(join(dataDir, DB_FILE));
  try {
    db.prepare('UPDATE exchanges SET pid = ? WHERE id = ?').run(pid ?? null, id);
  } finally {
    db.close();
  }
}

/** Writes `n` finished exchanges (metadata only, one a second up to now) in one transaction. */
export function seedExchanges(dataDir: string, n: number, shape: (i: number) => Partial<CapturedExchange> = () => ({})): void {
  const db = CaptureDb.open(join(dataDir, DB_FILE));
  const t0 = Date.now() - n * 1000;
  try {
    db.batch(() => {
      for (let i = 0; i < n; i++) {
        const id = (t0 + i * 1000).toString(36).padStart(9, '0') + '00' + (i % 46656).toString(36).padStart(3, '0');
        const x: CapturedExchange = {
          id,
          sessionId: `s${i >> 6}`,
          startedAt: t0 + i * 1000,
          endedAt: t0 + i * 1000 + 500,
          state: 'complete',
          agent: i % 3 ? 'opencode' : 'claude-code',
          route: 'openrouter',
          upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
          method: 'POST',
          path: '/openrouter/v1/chat/completions',
          requestHeaders: { 'content-type': 'application/json' },
          status: 200,
          responseHeaders: { 'content-type': 'text/event-stream', 'x-generation-id': `gen-${i}` },
          responseBytes: 30,
          requestModel: 'moonshotai/kimi-k2-0905',
          ...shape(i),
        };
        db.put(x, 100, undefined);
        if (x.summary)
          db.putAnalysis(
            x,
            x.summary.rules.map((rule) => ({ rule, severity: 'error', message: '', location: 'content' })),
            JSON.stringify({ version: 0 }),
          );
      }
    });
  } finally {
    db.close();
  }
}
