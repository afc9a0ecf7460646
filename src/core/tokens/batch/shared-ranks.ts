/**
 * The tokenizer hand-over of `tokens --batch`: the rank table the workers will encode with is loaded once, on the
 * main thread, into shared memory, and handed to every worker with its `workerData`; a worker's tokenizer then reads
 * that table (./rank-cache.ts `adoptSharedRanks`) instead of reading and checking its own copy. Only a table known
 * before the first line can be handed over: that of `--tokenizer-dir`, or of the repo that `--model` (else
 * `--family`) names once it is downloaded. Lines whose model needs another tokenizer load it in the worker, as before.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { shareRanks, type SharedRanks } from '../rank-cache';
import { tokenizerRepoFor } from '../resolve';
import type { BatchOptions } from './process';

/** The rank tables to hand to the workers (none when the tokenizer is not a tiktoken one, or not there yet). */
export function shareBatchRanks(o: BatchOptions, onWarning?: (message: string) => void): SharedRanks[] {
  const dir = tokenizerDirOf(o);
  const rankFile = dir && join(dir, 'tiktoken.model');
  if (!rankFile || !existsSync(rankFile)) return [];
  try {
    return [shareRanks(rankFile, o.cacheDir ? join(o.cacheDir, 'tokenizers') : undefined, onWarning)];
  } catch {
    return []; // a bad rank file: each worker reports it on the lines that need it, as without a hand-over
  }
}

/** The folder the workers' tokenizer comes from, as `loadTokenizer` finds it, when the options alone decide it. */
function tokenizerDirOf(o: BatchOptions): string | undefined {
  if (o.tokenizerDir) return o.tokenizerDir;
  if (!o.cacheDir || (!o.model && !o.family)) return undefined;
  try {
    return join(o.cacheDir, 'tokenizers', ...tokenizerRepoFor({ model: o.model, family: o.family }).split('/'));
  } catch {
    return undefined;
  }
}
