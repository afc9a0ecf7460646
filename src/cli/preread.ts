/**
 * The CLI's early read: `tokenscope lint FILE` on a large model-text file reads FILE before the CLI's code is loaded
 * (./boot.ts, run by bin/tokenscope.js as its own small bundle). Decoding a file needs its bytes and its text in memory
 * at once; done before the code loads, that peak does not add to the code's memory (a 20 MB output: about 4.7× its
 * size at peak, instead of 5.6×). `loadInput` (./input.ts) takes the text when it reads that file as model text
 * and the file has not changed since; otherwise it drops it and reads the file itself. Anything unexpected here means
 * no early read.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { parseArgs } from './args';
import { HEAD_BYTES, MAX_BYTES, modelTextHead, readTextFile, stashPreread } from './input-head';

/** `lint`'s flags (commands/lint.ts parses its arguments with these). */
export const LINT_FLAGS = { values: ['model', 'request', 'family', 'data-dir', 'where', 'tool'], booleans: ['json', 'families'] };

/** Smaller files gain nothing from being read early. */
const MIN_BYTES = 1 << 20;

/** Reads `lint`'s FILE early when it is a large model-text file (`argv`: the command line after `tokenscope`). */
export function preread(argv: string[]): void {
  try {
    // As main.ts: --no-color anywhere before `--` is the CLI's, not the command's.
    const end = argv.indexOf('--') < 0 ? argv.length : argv.indexOf('--');
    const [command, ...rest] = [...argv.slice(0, end).filter((a) => a !== '--no-color' && a !== '--no-colour'), ...argv.slice(end)];
    if (command !== 'lint') return;
    const args = parseArgs(rest, LINT_FLAGS);
    if (args.bool('help') || args.bool('families') || args.str('where') !== undefined || args.positional.length !== 1) return;
    const file = args.positional[0];
    // A `.json` file may be a repro bundle or a JSON document: those are read as bytes.
    if (/\.json$/i.test(file)) return;
    const st = statSync(file);
    if (!st.isFile() || st.size < MIN_BYTES || st.size > MAX_BYTES) return;
    const head = Buffer.alloc(HEAD_BYTES);
    const fd = openSync(file, 'r');
    let n: number;
    try {
      n = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
    if (!modelTextHead(head.subarray(0, n), false)) return;
    stashPreread({ file, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, text: readTextFile(file) });
  } catch {
    // No early read: the command reads the file and reports what is wrong with it.
  }
}
