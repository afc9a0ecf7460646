import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { defaultDataDir } from '../../core/capture/store';
import { formats } from '../../core/families/index';
import { UserError, type FamilyId } from '../../core/model';
import { plural } from '../../core/tokens/accounting';
import { runBatch, type BatchProgress } from '../../core/tokens/batch/run';
import type { DownloadProgress } from '../../core/tokens/hub';
import { checkTokenizerDir } from '../../core/tokens/resolve';
import type { Args } from '../args';
import type { CliIO } from '../io';
import { clock, statusLine } from '../progress';
import { safeLine, safeText } from '../terminal';

/** Bad lines printed on stderr as they are summarized (all are counted, the first ten are in the JSON summary). */
const BAD_LINES_PRINTED = 5;

/** `tokens --batch IN.jsonl --out OUT.jsonl`: see the usage text in tokens.ts. */
export async function batch(args: Args, io: CliIO, onDownload: (p: DownloadProgress) => void): Promise<number> {
  const input = args.str('batch')!;
  const output = args.str('out');
  if (!output) throw new UserError('--batch needs --out OUT.jsonl');
  if (resolve(output) === resolve(input)) throw new UserError('--out must not be the input file');
  if (args.positional.length) throw new UserError(`--batch takes no FILE (got ${args.positional.length})`);
  if (args.str('request')) throw new UserError('--request does not go with --batch: give {"request", "response"} lines');
  const format = args.str('format');
  if (format !== undefined && format !== 'specforge') throw new UserError(`--format must be specforge; got "${format}"`);
  const family = args.str('family');
  if (family !== undefined && !formats.some((f) => f.id === family)) {
    throw new UserError(`--family must be one of ${formats.map((f) => f.id).join(', ')}; got "${family}"`);
  }
  // A folder that holds no tokenizer fails every line the same way: said once, before any work.
  const tokenizerDir = args.str('tokenizer-dir');
  if (tokenizerDir) checkTokenizerDir(tokenizerDir);
  const workerFile = batchWorkerFile();
  const specforgeOutput = format === 'specforge' ? specforgePath(output) : undefined;
  const progress = batchProgress(io);
  const interrupt = batchInterrupt();
  // The lines already handed to the workers are finished and written, so the output stays whole lines: say so.
  interrupt.signal.addEventListener('abort', () => {
    progress.note('tokenscope tokens: stopping: finishing the lines already being processed (Ctrl-C again stops at once, without them)');
  });
  interrupt.quit.addEventListener('abort', () => {
    progress.note('tokenscope tokens: stopping now: the lines being processed are dropped; the output ends on a whole line');
  });
  try {
    const result = await runBatch({
      input,
      output,
      specforgeOutput,
      specforge: format === 'specforge',
      workers: args.positiveInt('workers', availableParallelism()),
      workerFile,
      model: args.str('model'),
      family: family as FamilyId | undefined,
      tokenizerDir,
      cacheDir: args.str('data-dir') ?? defaultDataDir(),
      offline: args.bool('offline'),
      signal: interrupt.signal,
      quit: interrupt.quit,
      onProgress: progress.update,
      onDownload,
      onWarning: (m) => progress.note(`tokenscope tokens: ${safeLine(m)}`),
    });
    progress.clear();
    const s = result.summary;
    const shown = badLineReport(s.badLines);
    for (const l of shown.lines) io.err(`tokenscope tokens: ${l}`);
    if (s.bad > shown.count) io.err(`tokenscope tokens: … and ${plural(s.bad - shown.count, 'more bad line')}`);
    const seconds = result.elapsedMs / 1000;
    const run = {
      input,
      output,
      specforgeOutput: specforgeOutput ?? null,
      interrupted: result.interrupted,
      seconds: Math.round(seconds * 100) / 100,
      linesPerSecond: seconds > 0 ? Math.round(s.lines / seconds) : null,
    };
    if (args.bool('json')) {
      io.out(JSON.stringify({ ...run, ...s.toJSON() }, null, 2));
    } else {
      const wrote = `${plural(s.lines - s.bad, 'line')} written to ${output}${specforgeOutput ? ` (${s.withPromptIds} with prompt ids to ${specforgeOutput})` : ''}`;
      const head = result.interrupted ? `interrupted: ${wrote}, for the first ${s.lines + s.blank} input lines` : wrote;
      // Dataset names and messages come from the input: escaped before they reach the terminal.
      io.out(safeText(`${head} in ${run.seconds} s (${run.linesPerSecond ?? '-'} lines/s)\n\n${s.text()}`, Infinity));
    }
    if (result.interrupted) return 130;
    return s.lines > 0 && s.bad === s.lines ? 1 : 0;
  } finally {
    progress.clear();
    interrupt.release();
  }
}

/**
 * Ctrl-C once aborts `signal` (stop reading, finish the lines in flight), twice `quit` (drop them, close the files on
 * the last whole chunk written). After that SIGINT is Node's default again, so a third quits the process outright.
 */
function batchInterrupt(): { signal: AbortSignal; quit: AbortSignal; release(): void } {
  const stop = new AbortController();
  const quit = new AbortController();
  const onSigint = () => {
    if (!stop.signal.aborted) return stop.abort();
    process.removeListener('SIGINT', onSigint);
    quit.abort();
  };
  process.on('SIGINT', onSigint);
  return { signal: stop.signal, quit: quit.signal, release: () => process.removeListener('SIGINT', onSigint) };
}

/**
 * The first bad lines, by line number, at most BAD_LINES_PRINTED reasons: lines that fail for the same reason (a
 * tokenizer that is not there fails them all) share one line, `lines 3, 5, 9: reason`.
 */
export function badLineReport(bad: readonly { line: number; error: string }[]): { lines: string[]; count: number } {
  const byReason = new Map<string, number[]>();
  let count = 0;
  for (const b of bad) {
    const lines = byReason.get(b.error);
    if (lines) lines.push(b.line);
    else if (byReason.size < BAD_LINES_PRINTED) byReason.set(b.error, [b.line]);
    else break;
    count++;
  }
  return { lines: [...byReason].map(([why, n]) => `${n.length > 1 ? 'lines' : 'line'} ${n.join(', ')}: ${safeLine(why)}`), count };
}

/** `out.jsonl` → `out.specforge.jsonl`. */
function specforgePath(output: string): string {
  const name = basename(output).replace(/\.jsonl?$/i, '');
  return join(dirname(output), `${name}.specforge.jsonl`);
}

/** The worker bundle beside the CLI bundle (dist/tokens-batch-worker.js); TOKENSCOPE_BATCH_WORKER names another. */
function batchWorkerFile(): string {
  const file = process.env.TOKENSCOPE_BATCH_WORKER || join(__dirname, 'tokens-batch-worker.js');
  if (!existsSync(file)) throw new UserError(`the batch worker ${file} is missing; build Tokenscope with \`npm run build\``);
  return file;
}

/**
 * The progress line on a terminal (`io.progress`, unset when stderr is piped: then nothing): lines done, rate,
 * percent of the input read, ETA. Redrawn at most every 250 ms; a note (a warning) goes above it.
 */
export function batchProgress(io: CliIO): { update: (p: BatchProgress) => void; note: (line: string) => void; clear: () => void } {
  const line = statusLine(io);
  let last = -Infinity;
  return {
    update: (p) => {
      if (!line.on) return;
      const now = performance.now();
      if (now - last < 250) return;
      last = now;
      const s = p.elapsedMs / 1000;
      const rate = s > 0 ? p.lines / s : 0;
      const frac = p.totalBytes ? p.bytesRead / p.totalBytes : 0;
      const eta = frac > 0.01 && frac < 1 ? Math.max(0, s / frac - s) : undefined;
      // Until the first line is done the workers are still loading the tokenizer (seconds for a large vocabulary).
      if (p.lines === 0) line.draw(`starting: the workers are loading the tokenizer…`);
      else line.draw(`${p.lines} lines, ${Math.round(rate)}/s, ${Math.round(frac * 100)}% read${eta === undefined ? '' : `, ETA ${clock(eta)}`}`);
    },
    note: line.note,
    clear: line.clear,
  };
}
