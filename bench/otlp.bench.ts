// OpenTelemetry export's cost on the forwarding path: two `tokenscope serve` processes in the same run, one with
// `--otlp` sending every exchange to a real OTLP/HTTP receiver on 127.0.0.1 (http/protobuf), one without; the same
// paced 20,000-chunk SSE stream through each, alternating. Goal: no added per-chunk latency (p50 difference within
// the run-to-run noise, reported beside it) and the same wall time; every exchange of the export-on proxy arrives
// as a span.
import { Agent } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReceiver } from '../test/fixtures/otlp-receiver';
import { fetchStream, median, round, startServe, startUpstream, until } from './proxy.bench';

const CHUNKS = 20_000;
const RUNS = 5;
const BODY = JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] });

export default async function bench() {
  const up = await startUpstream();
  const rx = await startReceiver();
  const dirs = [mkdtempSync(join(tmpdir(), 'tokenscope-bench-off-')), mkdtempSync(join(tmpdir(), 'tokenscope-bench-on-'))];
  const off = await startServe(up.url, dirs[0], ['--no-otlp']);
  const on = await startServe(up.url, dirs[1], ['--otlp', '--otlp-endpoint', rx.url, '--otlp-protocol', 'http/protobuf']);
  const agent = new Agent({ keepAlive: true });
  try {
    const counts = { off: 0, on: 0 };
    const through = async (which: 'off' | 'on', path: string) => {
      const proxy = which === 'on' ? on : off;
      const r = await fetchStream(`${proxy.url}${path}`, agent, BODY);
      counts[which]++;
      await until(() => proxy.finished() >= counts[which]);
      return r;
    };
    await through('off', '/v1/chat/completions?n=2000');
    await through('on', '/v1/chat/completions?n=2000');
    const lat = { off: [] as number[], on: [] as number[] };
    const wall = { off: [] as number[], on: [] as number[] };
    for (let run = 0; run < RUNS; run++) {
      for (const which of run % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const r = await through(which, `/v1/chat/completions?n=${CHUNKS}&paced=1`);
        lat[which].push(median(r.latencies));
        wall[which].push(r.wallMs);
      }
    }
    await until(() => rx.spans.length >= counts.on, 15_000);
    const added = median(lat.on) - median(lat.off);
    const noise = Math.max(...lat.off) - Math.min(...lat.off);
    return {
      chunks: CHUNKS,
      runs: RUNS,
      perChunkLatency: {
        exportOffMsP50: round(median(lat.off)),
        exportOnMsP50: round(median(lat.on)),
        addedMsP50: round(added),
        runToRunSpreadMs: round(noise),
        met: added <= Math.max(0.02, noise),
      },
      wallTime: {
        exportOffMs: round(median(wall.off), 1),
        exportOnMs: round(median(wall.on), 1),
        ratio: round(median(wall.on) / median(wall.off)),
      },
      spans: { exchanges: counts.on, received: rx.spans.length },
    };
  } finally {
    agent.destroy();
    await on.stop();
    await off.stop();
    await rx.close();
    await up.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
