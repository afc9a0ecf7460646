// Live token view lag: how far behind the wire the token view is while a stream arrives at 200 tokens/s.
// An upstream in its own process streams one word (one Kimi token) per SSE event every 5 ms and notes when it sent
// each; here, as in the extension host, the capture proxy and store run beside the panel's live feed
// (src/extension/liveFeed.ts: the same poller, analysis, tokenizer worker and messages as the exchange panel), and
// the "webview" is a post that serialises each message as VS Code would and notes when each token first appears in
// a `tokens` message. Lag = that moment − when the upstream sent the token (p50/p95 over every token). The browser's
// own render of a message (a virtualized grid: the visible rows only) is not part of it.
// Goal: at most 100 ms behind the wire at 200 tokens/s.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/core/capture/store';
import { inFlightOf } from '../src/core/live/inflight';
import { startProxy } from '../src/core/proxy/server';
import { SEGMENT_KINDS, type HostMessage } from '../webview/protocol';
import { LivePoller, PanelFeed } from '../src/extension/liveFeed';
import { openExchange, type OpenedView } from '../src/extension/openExchange';
import { ExchangeTokenizer } from '../src/extension/tokenize';
import { kimiTokenizerDir } from '../test/unit/tokens/helpers';

const root = join(__dirname, '..');
const RATE = 200;
const SECONDS = Number(process.env.BENCH_LIVE_SECONDS ?? 10);
const WORDS = [' the', ' and', ' of', ' to', ' in', ' is', ' that', ' for', ' it', ' with', ' as', ' was', ' on', ' be', ' at', ' by'];

/** The upstream: a separate process, so nothing here delays its clock. Prints its port, then (at the end) its send times. */
const UPSTREAM = `
const http = require('node:http');
const words = ${JSON.stringify(WORDS)};
const gap = 1000 / Number(process.argv[1]);
const now = () => performance.timeOrigin + performance.now();
const server = http.createServer((req, res) => {
  req.resume();
  const n = Number(new URL(req.url, 'http://x').searchParams.get('n'));
  const sent = [];
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (delta, finish) => 'data: ' + JSON.stringify({ id: 'gen-live', object: 'chat.completion.chunk', model: 'moonshotai/kimi-k2-0905', choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
  res.write(ev({ role: 'assistant', content: '' }, null));
  const t0 = performance.now();
  let k = 0;
  const tick = () => {
    // Every event due by now goes out (a late timer sends the ones it owes at once, as a real stream would).
    while (k < n && performance.now() - t0 >= k * gap) {
      res.write(ev({ content: words[k % words.length] }, null));
      sent.push(now());
      k++;
    }
    if (k < n) return void setTimeout(tick, Math.max(0, t0 + k * gap - performance.now()));
    res.end(ev({}, 'stop') + 'data: {"id":"gen-live","object":"chat.completion.chunk","model":"moonshotai/kimi-k2-0905","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":' + n + ',"total_tokens":' + (n + 5) + '}}\\n\\ndata: [DONE]\\n\\n');
    process.stdout.write(JSON.stringify(sent) + '\\n');
  };
  tick();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const CONTENT = SEGMENT_KINDS.indexOf('content');
const epoch = () => performance.timeOrigin + performance.now();

export default async function bench() {
  const found = kimiTokenizerDir();
  if ('skip' in found) return { skipped: found.skip };
  const workerFile = join(root, 'dist', 'tokens-worker.js');
  if (!existsSync(workerFile)) return { skipped: 'dist/tokens-worker.js missing: run npm run build' };
  const n = RATE * SECONDS;
  const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-bench-live-'));
  const up = spawn(process.execPath, ['-e', UPSTREAM, String(RATE)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let buf = '';
  let lineWaiter: (() => void) | undefined;
  up.stdout.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) lines.push(buf.slice(0, i)), (buf = buf.slice(i + 1));
    lineWaiter?.();
  });
  const line = async (k: number) => {
    while (lines.length <= k) await new Promise<void>((r) => (lineWaiter = r));
    return lines[k];
  };
  const store = await openStore(join(tmp, 'data'));
  const tokenizer = new ExchangeTokenizer(workerFile, async () => ({ tokenizerDir: found.dir, cacheDir: join(tmp, 'data') }));
  try {
    const port = Number(await line(0));
    const proxy = await startProxy({ port: 0, store, upstreams: { default: `http://127.0.0.1:${port}` } });
    // The cumulative text after each token, to find how many tokens a posted stream shows.
    const prefix: number[] = [];
    let len = 0;
    for (let k = 0; k < n; k++) prefix.push((len += WORDS[k % WORDS.length].length));
    const shownAt: number[] = new Array(n).fill(NaN);
    let shown = 0;
    let posts = 0;
    let postBytes = 0;
    let finishedView = false;
    let measuring = false;
    const feeds = new Map<string, PanelFeed<OpenedView>>();
    const source = {
      live: (id: string) => {
        const a = performance.now();
        const l = inFlightOf(store, id);
        timing.live.push(performance.now() - a);
        return l;
      },
      open: async (id: string) => {
        const a = performance.now();
        const o = await openExchange(store, id, (m) => process.stderr.write(`bench live: ${m}\n`));
        timing.open.push(performance.now() - a);
        return o;
      },
    };
    const poller = new LivePoller(() => feeds, source);
    const timing = { open: [] as number[], tokens: [] as number[], post: [] as number[], live: [] as number[] };
    const host = {
      post: async (m: HostMessage) => {
        const a = performance.now();
        const text = JSON.stringify(m);
        timing.post.push(performance.now() - a); // what VS Code does to every webview message
        postBytes += text.length;
        posts++;
        if (measuring && m.type === 'tokens' && m.stream) {
          const t = epoch();
          const content = m.stream.texts.filter((_, i) => m.stream!.segments[i] === CONTENT).join('');
          // Tokens up to the longest word prefix the posted text holds (the text is the content, in order).
          let visible = shown;
          while (visible < n && content.length >= prefix[visible]) visible++;
          for (let k = shown; k < visible; k++) shownAt[k] = t;
          shown = Math.max(shown, visible);
        }
        return true;
      },
      title: () => undefined,
      free: () => poller.freed(),
      error: (m: string, e: Error) => process.stderr.write(`bench live: ${m}: ${e.message}\n`),
    };
    // The panel opens as soon as the exchange appears (the user clicks its in-flight row), then follows the store.
    const unsubscribe = store.onDidChange((e) => {
      const id = e.exchange.id;
      if (e.kind === 'added' && !feeds.has(id)) void openPanel(id);
      else if (e.kind === 'updated' && feeds.has(id)) {
        void poller.changed(id, feeds.get(id)!).then(() => {
          if (feeds.get(id)!.opened.exchange.state !== 'streaming') finishedView = true;
        });
      }
    });
    async function openPanel(id: string): Promise<void> {
      const opened = await openExchange(store, id, host.error);
      if (!opened || feeds.has(id)) return;
      const feed = new PanelFeed(
        opened,
        async (o) => {
          const a = performance.now();
          const r = await tokenizer.tokens(o.result);
          timing.tokens.push(performance.now() - a);
          return r;
        },
        host,
      );
      feeds.set(id, feed);
      poller.watch();
    }
    const stream = async (count: number) => {
      const res = await fetch(`${proxy.url}/v1/chat/completions?n=${count}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'Say many words' }] }),
      });
      await res.text();
    };
    // A short exchange first: the tokenizer's one-time load (1–3 s, once per model and session) is not lag.
    await stream(50);
    await line(1);
    for (let i = 0; i < 400 && !finishedView; i++) await new Promise((r) => setTimeout(r, 25));
    await store.idle();
    await tokenizer.tokens([...feeds.values()][0]?.opened.result); // done once the tokenizer has loaded
    finishedView = false;
    for (const k of Object.keys(timing)) timing[k as keyof typeof timing].length = 0;
    [posts, postBytes, measuring] = [0, 0, true];
    const t0 = Date.now();
    await stream(n);
    const wallMs = Date.now() - t0;
    const sent = JSON.parse(await line(2)) as number[];
    for (let i = 0; i < 400 && !(finishedView && shown >= n); i++) await new Promise((r) => setTimeout(r, 25));
    unsubscribe();
    poller.dispose();
    await store.idle();
    await proxy.close();
    const lags = sent.map((s, k) => shownAt[k] - s).filter((x) => Number.isFinite(x));
    return {
      tokens: n,
      tokensPerSecond: RATE,
      loadAverage1m: round(loadavg()[0]),
      streamMs: wallMs,
      tokensShown: lags.length,
      lagMs: { p50: round(pct(lags, 50)), p95: round(pct(lags, 95)), max: round(Math.max(...lags)) },
      lastQuarterLagMs: {
        p50: round(pct(lags.slice(-Math.floor(lags.length / 4)), 50)),
        p95: round(pct(lags.slice(-Math.floor(lags.length / 4)), 95)),
      },
      stepMs: Object.fromEntries(
        Object.entries(timing).map(([k, v]) => [k, { p50: round(pct(v, 50), 2), p95: round(pct(v, 95), 2), count: v.length }]),
      ),
      messages: { posted: posts, megabytes: round(postBytes / 1e6, 1) },
      finishedInPlace: finishedView,
      goalMs: 100,
      meetsGoal: lags.length === n && pct(lags, 95) <= 100,
    };
  } finally {
    up.kill();
    await tokenizer.dispose();
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
