/**
 * The tokenizer hand-over of `tokens --batch`: the rank table the workers will encode with is loaded once, on the
 * main thread, into shared memory, and posted to every worker before its first chunk; a worker's tokenizer then reads
 * that table (../rank-cache.ts `adoptSharedRanks`) instead of reading and checking its own copy. Only a table known
 * before the first line can be handed over: that of `--tokenizer-dir`, or of the tokenizer that `--model` (else
 * `--family`) names when it is on this machine (shipped, or downloaded before). Lines whose model needs another
 * tokenizer load it in the worker, as before.
 */
import { join } from 'node:path';
import { shareRanks, type SharedRanks } from '../rank-cache';
import { localTokenizerDir } from '../resolve';
import type { BatchOptions } from './process';

/** The rank tables to hand to the workers (none when the tokenizer is not a tiktoken one, or not here yet). */
export function shareBatchRanks(o: BatchOptions, onWarning?: (message: string) => void): SharedRanks[] {
  let dir: string | undefined;
  try {
    // The folder the workers' tokenizer loads from, as `loadTokenizer` finds it without a download.
    dir = o.tokenizerDir || o.model || o.family ? localTokenizerDir(o) : undefined;
  } catch {
    return [];
  }
  if (!dir) return [];
  try {
    return [shareRanks(join(dir, 'tiktoken.model'), o.cacheDir ? join(o.cacheDir, 'tokenizers') : undefined, onWarning)];
  } catch {
    return []; // no rank file there (a tokenizer.json folder), or a bad one: each worker reports it on the lines that need it
  }
}
