/**
 * Test helpers for the proxy: a small local upstream whose behaviour each test supplies, a temporary capture
 * store, and a proxy wired to both. Everything listens on 127.0.0.1 port 0 and is closed by `close()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type CaptureStore, type StoreOptions } from '../../../src/core/capture/store';
import { startProxy, type ProxyHandle, type ProxyOptions } from '../../../src/core/proxy/server';
import { repoRoot } from '../../helpers/shared';
import type { Upstreams } from '../../../src/core/proxy/routes';
import { TS_LOADER } from '../../helpers/ts-loader';

export interface LocalUpstream {
  url: string;
  /** Sockets the upstream has seen, open or closed. */
  sockets: Socket[];
  close(): Promise<void>;
}

export async function startUpstream(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<LocalUpstream> {
  const sockets: Socket[] = [];
  const server = createServer(handler);
  server.on('connection', (s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function tempDir(prefix = 'tokenscope-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Rig {
  proxy: ProxyHandle;
  store: CaptureStore;
  dataDir: string;
  warnings: string[];
  close(): Promise<void>;
}

/** A store in a temp dir and a proxy on a free port. */
export async function startRig(upstreams: Upstreams, storeOpts: StoreOptions = {}, proxyOpts: Partial<ProxyOptions> = {}): Promise<Rig> {
  const tmp = tempDir();
  const warnings: string[] = [];
  const store = await openStore(tmp.dir, { onWarning: (m) => warnings.push(m), ...storeOpts });
  const proxy = await startProxy({ port: 0, store, upstreams, ...proxyOpts });
  return {
    proxy,
    store,
    dataDir: tmp.dir,
    warnings,
    close: async () => {
      await proxy.close();
      await store.close();
      tmp.remove();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Set when the connection broke before the body ended. */
  error?: string;
}

/** A plain node:http request that keeps the body exactly as received (no decompression) and reports a cut. */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; path?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let started = false;
    const req = request(
      url,
      { method: opts.method ?? (opts.body ? 'POST' : 'GET'), headers: opts.headers, agent: false, ...(opts.path && { path: opts.path }) },
      (res) => {
        started = true;
        const parts: Buffer[] = [];
        const done = (error?: string) =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts), ...(error && { error }) });
        res.on('data', (c: Buffer) => parts.push(c));
        res.once('end', () => done());
        res.once('error', (e) => done(e.message || 'error'));
        res.once('aborted', () => done('aborted'));
      },
    );
    // After the response started, a broken connection is the result being tested, not a failure.
    req.once('error', (e) => (started ? undefined : reject(e)));
    req.end(opts.body);
  });
}

/**
 * Waits until `cond` holds, polling; fails with `what` after `ms`. The default is generous: on a loaded machine a poll
 * can wait seconds for a core, and a condition that holds returns at once. Tests that bound a time measure it.
 */
export async function waitFor(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Starts `tokenscope serve` in a child process (Node given `nodeArgs` first); resolves with its URL once it listens. */
export function serveChild(
  args: string[],
  opts: { nodeArgs?: string[] } = {},
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      ...TS_LOADER,
      '--eval',
      `require('./src/cli/main').main(${JSON.stringify(['serve', ...args])}).then((c) => process.exit(c))`,
    ],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    // Generous: starting the child takes seconds, and on a loaded machine it took 26-29 s of a 30 s limit.
    // A child that did not start is ended: left running, it would keep the test process (and the test run) alive.
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`serve did not start in 120 s:\n${out}`))), 120_000);
    const check = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && out.includes('Press Ctrl+C')) {
        clearTimeout(timer);
        resolve({ child, url: m[1], output: () => out });
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
}

/** Resolves with the exit code once the child has exited, even if it already has. */
export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once('exit', (code) => r(code)));
}
