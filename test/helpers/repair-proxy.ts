/**
 * The proxy with repair on, in this process, for the repair tests that drive it with an SDK or raw requests: it
 * forwards to an emulated upstream, captures into a throwaway data dir, and withholds a call cut inside its
 * arguments unless `settings` say otherwise. `close` ends the proxy, the store, the upstream and the folder.
 */
import { openStore, type CaptureStore } from '../../src/core/capture/store';
import type { Upstreams } from '../../src/core/proxy/routes';
import { startProxy, type ProxyHandle } from '../../src/core/proxy/server';
import { repairStage, type RepairSettings } from '../../src/core/repair/stage';
import { tempDir } from '../unit/proxy/local-upstream';

export interface RepairProxy {
  /** The proxy's URL (no route prefix). */
  url: string;
  dataDir: string;
  store: CaptureStore;
  close(): Promise<void>;
}

export async function startRepairProxy(
  up: { close(): Promise<void> },
  upstreams: Upstreams,
  settings: Partial<RepairSettings> = {},
): Promise<RepairProxy> {
  const tmp = tempDir();
  const store: CaptureStore = await openStore(tmp.dir);
  const proxy: ProxyHandle = await startProxy({
    port: 0,
    store,
    upstreams,
    responseStage: repairStage(() => ({ enabled: true, truncated: 'withhold', ...settings })),
  });
  return {
    url: proxy.url,
    dataDir: tmp.dir,
    store,
    close: async () => {
      await proxy.close();
      await store.close();
      await up.close();
      tmp.remove();
    },
  };
}
