/**
 * The `tokens --batch` worker as shipped, for tests that run the batch in this process: bundled the way
 * scripts/build.mjs bundles dist/tokens-batch-worker.js, and named in TOKENSCOPE_BATCH_WORKER while the suite runs.
 */
import { join } from 'node:path';
import { after, before } from 'node:test';
import { build } from 'esbuild';
import { repoRoot } from './shared';

/** Bundles src/core/tokens/batch/worker.ts into `outfile`. */
export async function buildBatchWorker(outfile: string): Promise<void> {
  await build({
    entryPoints: [join(repoRoot, 'src/core/tokens/batch/worker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
}

/**
 * Call inside a `describe`: before its tests the worker is bundled into `outfile` and TOKENSCOPE_BATCH_WORKER names
 * it; after them the variable is as it was.
 */
export function useBuiltBatchWorker(outfile: string): void {
  let saved: string | undefined;
  before(async () => {
    await buildBatchWorker(outfile);
    saved = process.env.TOKENSCOPE_BATCH_WORKER;
    process.env.TOKENSCOPE_BATCH_WORKER = outfile;
  });
  after(() => {
    if (saved === undefined) delete process.env.TOKENSCOPE_BATCH_WORKER;
    else process.env.TOKENSCOPE_BATCH_WORKER = saved;
  });
}
