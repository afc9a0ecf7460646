// Repair mode's cost outside markup: per-chunk latency through `serve --repair` vs `serve`, both in their own
// process, against one local upstream streaming a Chat Completions SSE body (paced: 10 chunks per ms).
//   - plain prose (the fast path: no `<` in the read), goal: added p50 within 0.2 ms of no repair
//   - prose where every 4th chunk holds a `<` that begins no marker (each such read is parsed), reported beside it
// Medians of RUNS runs, the two proxies alternating.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchStream, median, round, startServe, until } from './proxy.bench';

const CHUNKS = 5_000;
const RUNS = 3;
const BODY = JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] });

/** Streams `?n=N` chunks, 10 per ms; `angle=1` puts `a < b` into every 4th chunk. Each event carries its send time. */
async function chatUpstream() {
  const server = createServer((req, res) => {
    req.resume();
    const u = new URL(req.url!, 'http://x');
    const n = Number(u.searchParams.get('n') ?? 1);
    const angle = u.searchParams.get('angle') === '1';
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const event = () =>
      `data: {"t":${performance.now().toFixed(4)},"id":"gen-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${angle && i % 4 === 0 ? ' a < b' : ' tok'}"},"finish_reason":null}]}\n\n`;
    const burst = () => {
      for (let k = 0; k < 10 && i < n; k++, i++) res.write(event());
      if (i >= n) return res.end(`data: {"t":0,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`);
      setTimeout(burst, 1);
    };
    burst();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

export default async function bench() {
  const up = await chatUpstream();
  const dirs = [mkdtempSync(join(tmpdir(), 'tokenscope-bench-')), mkdtempSync(join(tmpdir(), 'tokenscope-bench-'))];
  const plain = await startServe(up.url, dirs[0]);
  const repair = await startServe(up.url, dirs[1], ['--repair']);
  const agent = new Agent({ keepAlive: true });
  try {
    const counts = new Map<unknown, number>();
    const through = async (p: typeof plain, query: string) => {
      const r = await fetchStream(`${p.url}/v1/chat/completions?${query}`, agent, BODY);
      counts.set(p, (counts.get(p) ?? 0) + 1);
      await until(() => p.finished() >= counts.get(p)!);
      return median(r.latencies);
    };
    await through(plain, 'n=1000');
    await through(repair, 'n=1000');
    const lat = { plain: [] as number[], repair: [] as number[], plainAngle: [] as number[], repairAngle: [] as number[] };
    for (let run = 0; run < RUNS; run++) {
      const order = run % 2 ? [repair, plain] : [plain, repair];
      for (const p of order) {
        (p === plain ? lat.plain : lat.repair).push(await through(p, `n=${CHUNKS}`));
        (p === plain ? lat.plainAngle : lat.repairAngle).push(await through(p, `n=${CHUNKS}&angle=1`));
      }
    }
    const added = median(lat.repair) - median(lat.plain);
    const addedAngle = median(lat.repairAngle) - median(lat.plainAngle);
    return {
      chunks: CHUNKS,
      runs: RUNS,
      prose: {
        noRepairMsP50: round(median(lat.plain)),
        repairMsP50: round(median(lat.repair)),
        addedMsP50: round(added),
        goal: 0.2,
        met: added <= 0.2,
      },
      proseWithAngleBrackets: {
        noRepairMsP50: round(median(lat.plainAngle)),
        repairMsP50: round(median(lat.repairAngle)),
        addedMsP50: round(addedAngle),
        goal: 0.2,
        met: addedAngle <= 0.2,
      },
    };
  } finally {
    agent.destroy();
    await plain.stop();
    await repair.stop();
    await up.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
