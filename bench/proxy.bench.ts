// Capture proxy overhead, through-proxy vs direct in the same run against one local upstream.
// The proxy runs as it ships: `tokenscope serve` in its own process (capturing to a temp dir, analysis on), while
// the upstream and the client share this process so their clocks agree.
//   - wall-time ratio of a 20,000-chunk SSE stream (paced like a fast model: 10 chunks per ms), goal ≤ 1.02;
//     the same unpaced (upstream writes as fast as it can) is reported beside it
//   - added time to first byte, goal p50 ≤ 1 ms (sequential requests on keep-alive connections), once the proxy has
//     answered TTFB_WARMUP requests (a proxy in use has: V8 optimises its per-request code after some hundreds of
//     calls); the same for the first block, before that warm-up, is reported beside it (`firstRequests`), and so is the
//     bare pass-through's own added time (the floor of any second process on this machine)
//   - added per-chunk latency, goal p50 ≤ 0.2 ms (each event carries its send time); the paced stream also goes through
//     the bare pass-through, whose own added latency is reported beside it, and Tokenscope's cost above it
//     (`overBareMsP50`, for time to first byte too)
//   - 100 concurrent paced streams direct, through the bare pass-through and through the proxy: median wall time and
//     latency of each, and peak RSS (sampled) of the two proxies
//   - serve's peak RSS while a 500 MB request body passes (goal ≤ 200 MB), the bare pass-through's beside it
//   - burst streams (upstream writes as fast as it can) of 20,000 and 100,000 chunks against a bare Node
//     pass-through with no capture (its own process, like the proxy): goal ≤ 1.15 × that floor
//   - time to response headers when the upstream sends them 300 ms before the body: goal direct ± 5 ms
//   - 100 concurrent 3-second streams: time to first byte p90 through the proxy, goal within 500 ms of direct
// Medians of RUNS runs, direct and proxied alternating; `spread` is [min, max] of the per-run figures.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// BENCH_PROXY_SCALE (e.g. 0.05) shrinks every chunk count for a quick check; BENCH_RUNS overrides RUNS.
const SCALE = Number(process.env.BENCH_PROXY_SCALE ?? 1);
const CHUNKS = Math.max(10, Math.round(20_000 * SCALE));
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Per block; RUNS blocks. */
const TTFB_SAMPLES = 30;
/** Requests through each target (direct, bare, proxy) before the time-to-first-byte blocks (BENCH_TTFB_WARMUP). */
const TTFB_WARMUP = Number(process.env.BENCH_TTFB_WARMUP ?? 1000);
const CONCURRENT = 100;
/** How long each of the CONCURRENT long streams lasts, ms. */
const LONG_MS = 3000;
/** The large request body, MB (BENCH_PROXY_LARGE_MB; the goal is stated for 500). */
const LARGE_MB = Number(process.env.BENCH_PROXY_LARGE_MB ?? 500);

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
export const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** `/stream?n=N&paced=1`: N SSE events, each `data: {"t":<send time>,…}`; paced = 10 events per ms. */
export async function startUpstream() {
  // Keep-alive connections outlive the gaps between runs (the client reuses them).
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const u = new URL(req.url!, 'http://x');
    if (u.pathname.endsWith('/sink')) {
      // A large request body: read (and dropped) to its end, then a small answer.
      req.resume();
      req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
      return;
    }
    req.resume();
    const n = Number(u.searchParams.get('n') ?? 1);
    const paced = u.searchParams.get('paced') === '1';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (u.pathname.endsWith('/hold')) {
      // A long stream: an event at once, then one every 100 ms until `ms` have passed.
      const until = performance.now() + Number(u.searchParams.get('ms') ?? 3000);
      const tick = () => {
        if (res.destroyed) return;
        if (performance.now() >= until) return void res.end('data: [DONE]\n\n');
        res.write(`data: {"t":${performance.now().toFixed(4)},"choices":[{"delta":{"content":" tok"}}]}\n\n`);
        setTimeout(tick, 100);
      };
      return tick();
    }
    if (u.pathname.endsWith('/headers-first')) {
      res.flushHeaders();
      const t = setTimeout(() => res.end('data: [DONE]\n\n'), 300);
      res.once('close', () => clearTimeout(t));
      return;
    }
    let i = 0;
    const event = () => `data: {"t":${performance.now().toFixed(4)},"i":${i},"choices":[{"delta":{"content":" tok"}}]}\n\n`;
    const burst = () => {
      for (let k = 0; k < (paced ? 10 : 200) && i < n; k++, i++) {
        if (!res.write(event())) {
          i++;
          return res.once('drain', burst);
        }
      }
      if (i >= n) return res.end('data: [DONE]\n\n');
      if (paced) setTimeout(burst, 1);
      else setImmediate(burst);
    };
    burst();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * A failed request says which connection it used: new, or kept alive and idle for how long. A kept-alive connection
 * the server closed just as it was reused fails with "socket hang up"; the bench's agent drops idle connections after
 * CLIENT_IDLE_MS, well before any server here closes them (65 s), so that race cannot happen.
 */
function explained(req: ReturnType<typeof request>, reject: (e: Error) => void): void {
  let how = 'no connection yet';
  req.once('socket', (s: import('node:net').Socket & { freedAt?: number }) => {
    how = s.freedAt === undefined ? 'a new connection' : `a kept-alive connection idle for ${Math.round(performance.now() - s.freedAt)} ms`;
    if (s.listenerCount('free') < 2) s.on('free', () => (s.freedAt = performance.now()));
  });
  req.once('error', (e) =>
    reject(
      new Error(
        `${e.message} (${req.method} ${req.host}:${(req as unknown as { socket?: { remotePort?: number } }).socket?.remotePort ?? ''}${req.path}, on ${how})`,
      ),
    ),
  );
}

/** Idle kept-alive connections are closed by the client after this long (the servers here keep them 65 s). */
export const CLIENT_IDLE_MS = 20_000;

/** One streamed GET; returns total time, TTFB and every event's latency (arrival − send). */
export function fetchStream(url: string, agent: Agent, body?: string): Promise<{ wallMs: number; ttfbMs: number; latencies: number[] }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let ttfb = -1;
    let buf = '';
    const latencies: number[] = [];
    const req = request(
      url,
      { agent, method: body === undefined ? 'GET' : 'POST', headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (s: string) => {
          const now = performance.now();
          if (ttfb < 0) ttfb = now - start;
          buf += s;
          let cut: number;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const ev = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const m = /^data: \{"t":([\d.]+)/.exec(ev);
            if (m) latencies.push(now - Number(m[1]));
          }
        });
        res.once('end', () => resolve({ wallMs: performance.now() - start, ttfbMs: ttfb, latencies }));
        res.once('error', reject);
      },
    );
    explained(req, reject);
    req.end(body);
  });
}

/** POSTs `mb` MB of JSON-ish bytes (1 MB writes, honouring back-pressure) and waits for the answer; resolves with ms. */
export function postLarge(url: string, mb: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(mb * 1024 * 1024) } },
      (res) => {
        res.resume();
        res.once('end', () => resolve(performance.now() - start));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < mb) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

/** Samples a process's resident set (VmRSS, MB) every 20 ms while `work` runs; resolves with the peak and the work's result. */
async function peakRss<T>(pid: number, work: Promise<T>): Promise<{ peakMb: number; result: T }> {
  let peak = 0;
  const sample = () => (peak = Math.max(peak, rssMb(pid)));
  sample();
  const timer = setInterval(sample, 20);
  try {
    const result = await work;
    sample();
    return { peakMb: peak, result };
  } finally {
    clearInterval(timer);
  }
}

function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** Time until the response headers arrive (the body is not waited for). */
function fetchHeaders(url: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = request(url, { agent }, (res) => {
      const ms = performance.now() - start;
      res.resume();
      res.once('end', () => resolve(ms));
    });
    explained(req, reject);
    req.end();
  });
}

/** A bare Node pass-through (node:http in, node:http out, pipe, no capture) in its own process: the floor. */
export async function startBare(upstream: string) {
  // Hop-by-hop headers are not forwarded (each side keeps its own keep-alive terms), and a failed leg is answered
  // with a 502 and named on stderr instead of taking the process (and every pooled connection) down.
  const code = `const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const up = new URL(${JSON.stringify(upstream)});
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);
const strip = (h) => Object.fromEntries(Object.entries(h).filter(([k]) => !HOP.has(k)));
const fail = (where, res) => (e) => {
  process.stderr.write('bare pass-through: ' + where + ': ' + e.message + '\\n');
  if (!res.headersSent) res.writeHead(502).end();
  else res.destroy();
};
const server = http.createServer({ keepAliveTimeout: 65000, requestTimeout: 0 }, (req, res) => {
  const u = http.request({ host: up.hostname, port: up.port, path: req.url, method: req.method, headers: strip(req.headers), agent }, (r) => {
    res.writeHead(r.statusCode, strip(r.headers));
    r.pipe(res);
    r.once('error', fail('upstream response', res));
  });
  u.once('error', fail('upstream request', res));
  req.once('error', fail('client request', res));
  req.pipe(u);
});
server.listen(0, '127.0.0.1', () => console.log('bare on http://127.0.0.1:' + server.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => child.stdout!.on('data', (d) => resolve(/http:\/\/\S+/.exec(String(d))![0])));
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `bare pass-through exited (${signal ?? code})`));
  return {
    url,
    pid: child.pid!,
    exited: () => exited,
    stop: () => new Promise((r) => (exited ? r(undefined) : (child.once('exit', r), child.kill('SIGTERM')))),
  };
}

/** `tokenscope serve` in a child process: the built binary (`npm run bench` builds first), else the sources through tsx. */
export async function startServe(upstream: string, dataDir: string, extraArgs: string[] = []) {
  // BENCH_PROXY_SERVE=DIR runs the serve built in another tree (an earlier release), for A/B runs with the same bench.
  const root = resolve(process.env.BENCH_PROXY_SERVE ?? resolve(__dirname, '..'));
  const args = ['serve', '--port', '0', '--data-dir', dataDir, '--upstream', upstream, ...extraArgs];
  // BENCH_PROXY_PROF=DIR writes a CPU profile of the proxy process there (`--cpu-prof`), for a look at the forwarding path.
  const prof = process.env.BENCH_PROXY_PROF
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${resolve(process.env.BENCH_PROXY_PROF)}`,
        `--cpu-prof-interval=${process.env.BENCH_PROXY_PROF_US ?? 200}`,
      ]
    : [];
  const argv = existsSync(join(root, 'dist', 'cli.js'))
    ? [...prof, join(root, 'bin', 'tokenscope.js'), ...args]
    : [...prof, '--import', 'tsx', '--eval', `require('./src/cli/main').main(${JSON.stringify(args)}).then((c) => process.exit(c))`];
  const child = spawn(process.execPath, argv, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && out.includes('Press Ctrl+C')) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (c) => reject(new Error(`serve exited with ${c}: ${out}`)));
  });
  /** Exchange lines printed so far (one per finished, analysed exchange). */
  const finished = () => (out.match(/^\d\d:\d\d:\d\d {2}\S+ {2}/gm) ?? []).length;
  const status = (field: 'VmHWM' | 'VmRSS') =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  const stop = async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  };
  return { url, pid: child.pid!, finished, status, stop };
}

export async function until(cond: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

export default async function bench() {
  const up = await startUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), 'tokenscope-bench-'));
  const proxy = await startServe(up.url, dataDir);
  const bare = await startBare(up.url);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENT, timeout: CLIENT_IDLE_MS });
  // A failure names the phase it happened in.
  let phase = 'warm-up';
  const say = (p: string) => {
    phase = p;
    process.stderr.write(`  ${p}…\n`);
  };
  try {
    let requests = 0;
    const BURST_CHUNKS = [20_000, 100_000].map((n) => Math.max(10, Math.round(n * SCALE)));
    const through = async (path: string) => {
      const r = await fetchStream(`${proxy.url}${path}`, agent);
      requests++;
      // Let the previous exchange's analysis finish so it does not run under the next measurement.
      await until(() => proxy.finished() >= requests);
      return r;
    };
    const direct = (path: string) => fetchStream(`${up.url}${path}`, agent);
    // Warm-up: connections, JIT, the proxy's first-request paths.
    await direct('/v1/stream?n=2000');
    await through('/v1/stream?n=2000');

    say('paced and unpaced streams');
    // Paced: direct, the bare pass-through and Tokenscope, in an order that rotates per run (each event's latency is
    // taken against its send time, so the bare figure is the floor any second process adds on this machine).
    const paced = {
      direct: [] as number[],
      bare: [] as number[],
      proxy: [] as number[],
      latDirect: [] as number[],
      latBare: [] as number[],
      latProxy: [] as number[],
    };
    const unpaced = { direct: [] as number[], proxy: [] as number[] };
    const targets = ['direct', 'bare', 'proxy'] as const;
    for (let run = 0; run < RUNS; run++) {
      const order = [...targets.slice(run % 3), ...targets.slice(0, run % 3)];
      for (const which of order) {
        const p = `/v1/stream?n=${CHUNKS}&paced=1`;
        const r = which === 'direct' ? await direct(p) : which === 'bare' ? await fetchStream(`${bare.url}${p}`, agent) : await through(p);
        paced[which].push(r.wallMs);
        paced[which === 'direct' ? 'latDirect' : which === 'bare' ? 'latBare' : 'latProxy'].push(median(r.latencies));
        if (which === 'bare') continue;
        const q = `/v1/stream?n=${CHUNKS}`;
        const u = which === 'direct' ? await direct(q) : await through(q);
        unpaced[which].push(u.wallMs);
      }
    }

    say('burst streams');
    // Burst streams against the bare pass-through floor, at two sizes.
    const burst: Record<string, { direct: number[]; bare: number[]; proxy: number[] }> = {};
    for (const n of BURST_CHUNKS) {
      const b = (burst[n] = { direct: [] as number[], bare: [] as number[], proxy: [] as number[] });
      const q = `/v1/stream?n=${n}`;
      // A failed leg says which target and size it was (and whether the bare process is gone).
      const leg = <T>(name: string, p: Promise<T>) =>
        p.catch((e: Error) => {
          throw new Error(`burst ${n} chunks via ${name}: ${e.message}${bare.exited() ? `; ${bare.exited()}` : ''}`);
        });
      await leg('bare', fetchStream(`${bare.url}${q}`, agent));
      for (let run = 0; run < RUNS; run++) {
        b.direct.push((await leg('direct', direct(q))).wallMs);
        b.bare.push((await leg('bare', fetchStream(`${bare.url}${q}`, agent))).wallMs);
        b.proxy.push((await leg('proxy', through(q))).wallMs);
      }
    }
    say('headers first');
    const headersDirect: number[] = [];
    const headersProxy: number[] = [];
    for (let i = 0; i < 10; i++) {
      headersDirect.push(await fetchHeaders(`${up.url}/v1/headers-first`, agent));
      headersProxy.push(await fetchHeaders(`${proxy.url}/v1/headers-first`, agent));
      requests++;
    }
    await until(() => proxy.finished() >= requests);

    // Time to first byte in RUNS blocks: direct, the bare pass-through (the floor of any proxy on this machine) and
    // Tokenscope, interleaved; the added time is a median per block, and the figure the median of the blocks.
    const ttfbDirect: number[] = [];
    const ttfbProxy: number[] = [];
    const ttfbBare: number[] = [];
    const ttfbBlocks: { proxy: number; bare: number; overBare: number }[] = [];
    const ttfbBlock = async () => {
      const d: number[] = [];
      const p: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < TTFB_SAMPLES; i++) {
        d.push((await direct('/v1/stream?n=1')).ttfbMs);
        b.push((await fetchStream(`${bare.url}/v1/stream?n=1`, agent)).ttfbMs);
        p.push((await through('/v1/stream?n=1')).ttfbMs);
      }
      return { d, p, b, added: { proxy: median(p) - median(d), bare: median(b) - median(d), overBare: median(p) - median(b) } };
    };
    say('time to first byte');
    const firstRequests = { afterRequests: requests, ...(await ttfbBlock()).added };
    say(`${TTFB_WARMUP} requests through each, to warm up`);
    for (let i = 0; i < TTFB_WARMUP; i++) {
      await direct('/v1/stream?n=1');
      await fetchStream(`${bare.url}/v1/stream?n=1`, agent);
      await fetchStream(`${proxy.url}/v1/stream?n=1`, agent);
      requests++;
    }
    await until(() => proxy.finished() >= requests);
    say('time to first byte, warm');
    for (let run = 0; run < RUNS; run++) {
      const { d, p, b, added } = await ttfbBlock();
      ttfbDirect.push(...d);
      ttfbProxy.push(...p);
      ttfbBare.push(...b);
      ttfbBlocks.push(added);
    }

    // A 500 MB request body through serve (streamed to the upstream, not recorded): serve's resident set while it
    // passes, sampled every 20 ms, with the bare pass-through's beside it.
    say(`${LARGE_MB} MB request body`);
    const largeRssBeforeMb = proxy.status('VmRSS');
    const large = await peakRss(proxy.pid, postLarge(`${proxy.url}/v1/sink`, LARGE_MB));
    requests++;
    await until(() => proxy.finished() >= requests);
    const largeBare = await peakRss(bare.pid, postLarge(`${bare.url}/v1/sink`, LARGE_MB));

    // 100 concurrent paced streams: direct, through the bare pass-through and through Tokenscope, one after another.
    say(`${CONCURRENT} concurrent streams`);
    const concurrently = async (base: string, pid?: number) => {
      const all = Promise.all(Array.from({ length: CONCURRENT }, () => fetchStream(`${base}/v1/stream?n=2000&paced=1`, agent)));
      const { peakMb, result } = pid === undefined ? { peakMb: NaN, result: await all } : await peakRss(pid, all);
      return {
        wallMs: median(result.map((s) => s.wallMs)),
        latencyMs: median(result.flatMap((s) => s.latencies)),
        events: result.every((s) => s.latencies.length === 2000),
        peakMb,
      };
    };
    const concDirect = await concurrently(up.url);
    const concBare = await concurrently(bare.url, bare.pid);
    const rssIdleMb = proxy.status('VmRSS');
    const concProxy = await concurrently(proxy.url, proxy.pid);
    requests += CONCURRENT;
    const peakRssMb = concProxy.peakMb;
    const concurrentWallMs = concProxy.wallMs;

    // 100 concurrent 3-second streams, each on a connection of its own: time to first byte, direct and through
    // Tokenscope (an upstream connection cap would hold the ones past it for a whole stream).
    say(`${CONCURRENT} concurrent ${LONG_MS / 1000}-second streams`);
    const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.9) - 1];
    const longStreams = async (base: string) =>
      (await Promise.all(Array.from({ length: CONCURRENT }, () => fetchStream(`${base}/v1/hold?ms=${LONG_MS}`, agent)))).map(
        (r) => r.ttfbMs,
      );
    const longDirect = await longStreams(up.url);
    const longProxy = await longStreams(proxy.url);
    requests += CONCURRENT;
    const longAdded = p90(longProxy) - p90(longDirect);

    const wallRatio = median(paced.proxy) / median(paced.direct);
    const addedTtfb = median(ttfbBlocks.map((b) => b.proxy));
    const addedChunk = median(paced.latProxy) - median(paced.latDirect);
    // Run-to-run spread: each run's figure (direct and proxied ran back to back), as [min, max].
    const spread = (xs: number[]) => [round(Math.min(...xs)), round(Math.max(...xs))];
    const perRun = <T>(f: (i: number) => T) => Array.from({ length: RUNS }, (_, i) => f(i));
    return {
      chunks: CHUNKS,
      runs: RUNS,
      pacedStream: {
        directMs: round(median(paced.direct), 1),
        bareMs: round(median(paced.bare), 1),
        proxyMs: round(median(paced.proxy), 1),
        wallTimeRatio: round(wallRatio),
        spread: spread(perRun((i) => paced.proxy[i] / paced.direct[i])),
        goal: 1.02,
        met: wallRatio <= 1.02,
      },
      unpacedStream: {
        directMs: round(median(unpaced.direct), 1),
        proxyMs: round(median(unpaced.proxy), 1),
        wallTimeRatio: round(median(unpaced.proxy) / median(unpaced.direct)),
      },
      ttfb: {
        directMsP50: round(median(ttfbDirect)),
        proxyMsP50: round(median(ttfbProxy)),
        addedMsP50: round(addedTtfb),
        spread: spread(ttfbBlocks.map((b) => b.proxy)),
        bareAddedMsP50: round(median(ttfbBlocks.map((b) => b.bare))),
        // Tokenscope's own cost: above the bare pass-through, block by block.
        overBareMsP50: round(median(ttfbBlocks.map((b) => b.overBare))),
        overBareSpread: spread(ttfbBlocks.map((b) => b.overBare)),
        warmUpRequests: TTFB_WARMUP,
        goal: 1,
        met: addedTtfb <= 1,
        // One block before the warm-up: a proxy that has answered only `afterRequests` requests so far.
        firstRequests: {
          afterRequests: firstRequests.afterRequests,
          addedMsP50: round(firstRequests.proxy),
          bareAddedMsP50: round(firstRequests.bare),
          overBareMsP50: round(firstRequests.overBare),
        },
      },
      perChunkLatency: {
        directMsP50: round(median(paced.latDirect)),
        proxyMsP50: round(median(paced.latProxy)),
        addedMsP50: round(addedChunk),
        spread: spread(perRun((i) => paced.latProxy[i] - paced.latDirect[i])),
        bareMsP50: round(median(paced.latBare)),
        bareAddedMsP50: round(median(paced.latBare) - median(paced.latDirect)),
        // Tokenscope's own cost: above the bare pass-through, run by run.
        overBareMsP50: round(median(perRun((i) => paced.latProxy[i] - paced.latBare[i]))),
        overBareSpread: spread(perRun((i) => paced.latProxy[i] - paced.latBare[i])),
        goal: 0.2,
        met: addedChunk <= 0.2,
      },
      burst: Object.fromEntries(
        Object.entries(burst).map(([n, b]) => {
          const ratio = median(b.proxy) / median(b.bare);
          return [
            n,
            {
              directMs: round(median(b.direct), 1),
              bareMs: round(median(b.bare), 1),
              proxyMs: round(median(b.proxy), 1),
              bareVsDirect: round(median(b.bare) / median(b.direct)),
              proxyVsBare: round(ratio),
              goal: 1.15,
              met: ratio <= 1.15,
            },
          ];
        }),
      ),
      headersFirst: {
        directMsP50: round(median(headersDirect)),
        proxyMsP50: round(median(headersProxy)),
        addedMsP50: round(median(headersProxy) - median(headersDirect)),
        goal: 5,
        met: Math.abs(median(headersProxy) - median(headersDirect)) <= 5,
      },
      largeRequest: {
        mb: LARGE_MB,
        proxyMs: round(large.result, 1),
        proxyRssBeforeMb: round(largeRssBeforeMb, 1),
        proxyPeakRssMb: round(large.peakMb, 1),
        bareMs: round(largeBare.result, 1),
        barePeakRssMb: round(largeBare.peakMb, 1),
        goalMb: 200,
        met: large.peakMb <= 200,
      },
      concurrent: {
        streams: CONCURRENT,
        chunksEach: 2000,
        everyEventArrived: concDirect.events && concBare.events && concProxy.events,
        directMedianWallMs: round(concDirect.wallMs, 1),
        bareMedianWallMs: round(concBare.wallMs, 1),
        medianWallMs: round(concurrentWallMs, 1),
        proxyVsDirect: round(concurrentWallMs / concDirect.wallMs),
        proxyVsBare: round(concurrentWallMs / concBare.wallMs),
        latencyMsP50: { direct: round(concDirect.latencyMs), bare: round(concBare.latencyMs), proxy: round(concProxy.latencyMs) },
        proxyRssIdleMb: round(rssIdleMb, 1),
        proxyPeakRssMb: round(peakRssMb, 1),
        barePeakRssMb: round(concBare.peakMb, 1),
      },
      longStreams: {
        streams: CONCURRENT,
        seconds: LONG_MS / 1000,
        directTtfbMsP90: round(p90(longDirect), 1),
        proxyTtfbMsP90: round(p90(longProxy), 1),
        proxyTtfbMsMax: round(Math.max(...longProxy), 1),
        addedMsP90: round(longAdded, 1),
        goal: 500,
        met: longAdded <= 500,
      },
    };
  } catch (e) {
    throw new Error(`${phase}: ${(e as Error).message}`);
  } finally {
    agent.destroy();
    await bare.stop();
    await proxy.stop();
    await up.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
