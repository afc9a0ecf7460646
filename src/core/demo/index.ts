/**
 * The demo: the demo upstream (./upstream.ts) behind a capture proxy whose every route leads to it, and a replay of
 * the fixed cases (./cases.ts) through that proxy into a capture store. Used by `tokenscope demo` and the extension's
 * "See a broken tool call now". Nothing leaves 127.0.0.1 and no key is needed.
 *
 * A demo capture is told apart by the fields every capture keeps: route `demo`, or the provider "Demo (local)" (./mark.ts).
 */
import type { CaptureStore } from '../capture/store';
import type { CapturedExchange } from '../model';
import { startProxy, type ProxyHandle } from '../proxy/server';
import { routePrefix } from '../proxy/routes';
import type { ResponseStageFactory } from '../proxy/stage';
import { BROKEN_CASE, DEMO_CASES, DEMO_CASE_HEADER, DEMO_MODEL, DEMO_TOOL, type DemoCase } from './cases';
import { DEMO_ROUTE, isDemoCapture } from './mark';
import { startDemoUpstream, type DemoUpstream, type DemoUpstreamOptions } from './upstream';

export { BROKEN_CASE, DEMO_CASES, DEMO_MODEL, type DemoCase } from './cases';
export { DEMO_PROVIDER, DEMO_ROUTE, isDemoCapture } from './mark';

export interface DemoProxy {
  proxy: ProxyHandle;
  upstream: DemoUpstream;
  /** `http://127.0.0.1:<port>/u/demo/v1`: the base URL an OpenAI-compatible agent is given. */
  baseUrl: string;
  close(): Promise<void>;
}

export interface DemoProxyOptions extends DemoUpstreamOptions {
  store: CaptureStore;
  /** Proxy port; 0 (default) picks a free one. */
  port?: number;
  log?: (line: string) => void;
  /** A stage on the proxy's forwarding path (repair mode), as `serve` has it. */
  responseStage?: ResponseStageFactory;
}

/** Starts the demo upstream and a proxy in front of it. Every route, named or not, leads to the demo upstream. */
export async function startDemoProxy(opts: DemoProxyOptions): Promise<DemoProxy> {
  const upstream = await startDemoUpstream(opts);
  const u = upstream.url;
  let proxy: ProxyHandle;
  try {
    proxy = await startProxy({
      port: opts.port ?? 0,
      store: opts.store,
      upstreams: { openrouter: u, sglang: u, anthropic: u, openai: u, default: u, custom: { [DEMO_ROUTE]: u } },
      log: opts.log,
      ...(opts.responseStage && { responseStage: opts.responseStage }),
    });
  } catch (e) {
    await upstream.close();
    throw e;
  }
  return {
    proxy,
    upstream,
    baseUrl: `${proxy.url}${routePrefix(DEMO_ROUTE)}/v1`,
    async close() {
      await proxy.close();
      await upstream.close();
    },
  };
}

export interface DemoResult {
  case: DemoCase;
  /** The capture as stored, analysed (its `summary` holds the rule ids). */
  exchange: CapturedExchange;
}

/**
 * Sends one streamed request per demo case through the demo proxy, as an agent would, and returns each capture
 * once analysed, in case order.
 */
export async function replayDemo(demo: DemoProxy, store: CaptureStore, opts: { userAgent?: string } = {}): Promise<DemoResult[]> {
  const ids = new Map<string, string>();
  const onExchange = (x: CapturedExchange) => {
    const c = x.requestHeaders[DEMO_CASE_HEADER];
    if (c && !ids.has(c)) ids.set(c, x.id);
  };
  demo.proxy.on('exchange', onExchange);
  try {
    for (const c of DEMO_CASES) {
      const res = await fetch(`${demo.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': opts.userAgent ?? 'tokenscope-demo', [DEMO_CASE_HEADER]: c.id },
        body: JSON.stringify({ model: DEMO_MODEL, stream: true, messages: [{ role: 'user', content: c.prompt }], tools: [DEMO_TOOL] }),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`the demo upstream answered HTTP ${res.status} for ${c.id}`);
    }
    // The proxy reports an exchange once it is stored, right after the client saw its end.
    const deadline = Date.now() + 10_000;
    while (ids.size < DEMO_CASES.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  } finally {
    demo.proxy.off('exchange', onExchange);
  }
  await store.idle();
  return DEMO_CASES.map((c) => {
    const id = ids.get(c.id);
    const exchange = id ? store.get(id) : undefined;
    if (!exchange) throw new Error(`the demo exchange "${c.id}" was not captured`);
    return { case: c, exchange };
  });
}

/** Deletes every demo capture; returns how many there were. */
export async function clearDemoCaptures(store: CaptureStore): Promise<number> {
  const demo = store.list().filter(isDemoCapture);
  for (const x of demo) await store.delete(x.id);
  return demo.length;
}

/** The capture of the broken case the demo opens first. */
export function brokenResult(results: DemoResult[]): DemoResult | undefined {
  return results.find((r) => r.case.id === BROKEN_CASE);
}
