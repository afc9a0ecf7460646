/**
 * One run of a real agent CLI through `tokenscope serve` (with `--repair` or without) against an emulated leaky
 * upstream, the way the agent-CLI repair tests run it: a throwaway home (the agent's working folder) and data dir,
 * the agent run to its end, serve stopped, then the capture read back: the agent's first tool-offering turn (the
 * leaky one), the upstream's bytes and the bytes delivered for it, and whether the file the leaked call writes
 * (`hello.txt` in the home) exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, type CaptureStore } from '../../src/core/capture/store';
import type { CapturedExchange } from '../../src/core/model';
import { exited, serveChild, tempDir } from '../unit/proxy/local-upstream';

export interface AgentRepairRun {
  code: number | null;
  /** The agent's stdout and stderr. */
  out: string;
  /** hello.txt in the agent's folder, when the agent wrote it. */
  written: string | undefined;
  exchange: CapturedExchange | undefined;
  /** The upstream's bytes for that turn, as text. */
  upstream: string | undefined;
  delivered: Uint8Array | undefined;
}

export async function runAgentThroughServe<U extends { url: string; close(): Promise<void> }, X>(o: {
  /** Names the throwaway folders. */
  name: string;
  repair: boolean;
  /** Starts the upstream; `target` is the file the leaked call should write. */
  upstream: (target: string) => Promise<U>;
  /** serve's upstream options (e.g. `--anthropic-url URL`). */
  serveArgs: (up: U) => string[];
  /** Runs the agent against serve at `proxyUrl`, in `home`. */
  agent: (proxyUrl: string, home: string) => Promise<{ code: number | null; out: string }>;
  /** The captured exchanges that are the agent's leaky turn (the last of them is taken). */
  isTurn: (x: CapturedExchange, requestBody: string) => boolean;
  /** More of the result, read while the store is open. */
  more: (up: U, store: CaptureStore) => X;
}): Promise<AgentRepairRun & X> {
  const home = tempDir(`tokenscope-${o.name}-repair-`);
  const data = tempDir(`tokenscope-${o.name}-repair-data-`);
  const target = join(home.dir, 'hello.txt');
  const up = await o.upstream(target);
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, ...o.serveArgs(up), ...(o.repair ? ['--repair'] : [])]);
  try {
    const { code, out } = await o.agent(s.url, home.dir);
    s.child.kill('SIGTERM');
    await exited(s.child);
    const store = await openStore(data.dir, { analyze: false });
    const first = store
      .list()
      .filter((x) => o.isTurn(x, store.get(x.id)?.requestBody ?? ''))
      .at(-1);
    const result = {
      code,
      out,
      written: existsSync(target) ? readFileSync(target, 'utf8') : undefined,
      exchange: first && store.get(first.id),
      upstream: first && Buffer.from(store.readResponse(first.id)!.bytes).toString('utf8'),
      delivered: first && store.readDelivered(first.id),
      ...o.more(up, store),
    };
    await store.close();
    return result;
  } finally {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await up.close();
    home.remove();
    data.remove();
  }
}
