/**
 * How a `tokens --batch` worker starts (bundled to dist/tokens-batch-boot.js, a few KB): it compiles the worker's
 * bundle (dist/tokens-batch-worker.js) from the V8 code cache in the data dir (./code-cache.ts) when there is one of
 * this very bundle that V8 accepts, else from source, and runs it as that file's module. It tells the runner whether
 * the cache was used; asked to (once the run has given this worker lines enough), it writes the cache of the code
 * compiled so far, the line-processing functions included, for the next run's workers.
 */
import { isAscii } from 'node:buffer';
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { readCodeCache, writeCodeCache } from './code-cache';
import type { BatchWorkerData, BatchWorkerReply, CodeCacheRequest } from './protocol';

const port = parentPort;
if (!port) throw new Error('the batch worker must run in a worker thread');
const { bundle, codeCache } = (workerData as BatchWorkerData).boot!;
const cached = codeCache ? readCodeCache(codeCache, bundle) : undefined;
const bytes = readFileSync(bundle);
// The build makes the bundle ASCII: decoded as the one-byte text it is, it is kept at one byte per character.
const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
const script = new Script(Module.wrap(source), { filename: bundle, ...(cached && { cachedData: cached }) });
const post = (m: BatchWorkerReply) => port.postMessage(m);
post({ type: 'code-cache', loaded: !!cached && !script.cachedDataRejected });
port.on('message', (m: unknown) => {
  if (typeof m !== 'object' || m === null || !('saveCodeCache' in m) || !codeCache) return;
  const request = m as CodeCacheRequest;
  if (!request.saveCodeCache) return;
  try {
    writeCodeCache(codeCache, bundle, script.createCachedData());
    post({ type: 'code-cache-saved' });
  } catch (e) {
    post({ type: 'code-cache-saved', error: (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e)) });
  }
});

const m = new Module(bundle, require.main);
m.filename = bundle;
m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(bundle));
(script.runInThisContext() as (...a: unknown[]) => void).call(m.exports, m.exports, createRequire(bundle), m, bundle, dirname(bundle));
m.loaded = true;
