import { existsSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { defaultDataDir } from '../../core/capture/store';
import { formats } from '../../core/families/index';
import { fsWhy } from '../../core/fs-errors';
import { UserError, type FamilyId } from '../../core/model';
import { plural } from '../../core/tokens/accounting';
import { mergeShardSummaries, type SummaryPart } from '../../core/tokens/batch/merge';
import { runBatch, type BatchProgress } from '../../core/tokens/batch/run';
import type { DownloadProgress } from '../../core/tokens/hub';
import { checkTokenizerDir } from '../../core/tokens/resolve';
import type { Args } from '../args';
import { readTextFile, type CliIO } from '../io';
import { clock, statusLine } from '../progress';
import { safeLine, safeText, terminalGuard } from '../terminal';

/** Bad lines printed on stderr as they are summarized (all are counted, the first ten are in the JSON summary). */
const BAD_LINES_PRINTED = 5;

/** The most shards an input may be split in (`--shard K/N`). */
export const MAX_SHARDS = 100_000;

/** The process's stdin and stdout, which `-` names; tests pass their own. */
export interface StdStreams {
  stdin: Readable;
  stdout: NodeJS.WritableStream & { isTTY?: boolean; writableLength?: number };
}

const processStreams = (): StdStreams => ({ stdin: process.stdin, stdout: process.stdout });

/**
 * `--shard K/N`: the lines whose index (from 0) is K modulo N. Anything else is a one-line usage error.
 */
export function parseShard(value: string | undefined): { index: number; count: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(value.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || count > MAX_SHARDS || index >= count) {
    const why = !m
      ? ''
      : count < 1
        ? ': N must be at least 1'
        : count > MAX_SHARDS
          ? `: N must be at most ${MAX_SHARDS.toLocaleString('en-US')}`
          : ': K must be less than N';
    throw new UserError(
      `--shard must be K/N, shard K (from 0) of N, with 0 ≤ K < N (e.g. --shard 0/4); got "${safeLine(value, 40)}"${why}`,
    );
  }
  return { index, count };
}

/** `tokens --batch IN.jsonl --out OUT.jsonl` (`-` for stdin / stdout): see the usage text in tokens.ts. */
export async function batch(
  args: Args,
  io: CliIO,
  onDownload: (p: DownloadProgress) => void,
  std: StdStreams = processStreams(),
): Promise<number> {
  const input = args.str('batch')!;
  const output = args.str('out');
  if (!output) throw new UserError('--batch needs --out OUT.jsonl (or --out - for stdout)');
  if (input !== '-' && output !== '-' && resolve(output) === resolve(input)) throw new UserError('--out must not be the input file');
  if (args.positional.length) throw new UserError(`--batch takes no FILE (got ${args.positional.length}); --batch - reads stdin`);
  if (args.str('request')) throw new UserError('--request does not go with --batch: give {"request", "response"} lines');
  if (args.bool('merge-summaries'))
    throw new UserError('--merge-summaries does not go with --batch: merge the summary files once every shard is done');
  const format = args.str('format');
  if (format !== undefined && format !== 'specforge') throw new UserError(`--format must be specforge; got "${format}"`);
  const shard = parseShard(args.str('shard'));
  const summaryOut = args.str('summary-out');
  const specforgeFlag = args.str('specforge-out');
  if (specforgeFlag !== undefined && format !== 'specforge') throw new UserError('--specforge-out goes with --format specforge');
  if (format === 'specforge' && output === '-' && specforgeFlag === undefined) {
    throw new UserError('--format specforge with --out - needs --specforge-out FILE (stdout carries the ids)');
  }
  if (specforgeFlag === '-' && output === '-') throw new UserError('--out - and --specforge-out - cannot both be stdout');
  const specforgeOutput = format === 'specforge' ? (specforgeFlag ?? specforgePath(output)) : undefined;
  if (specforgeOutput !== undefined && specforgeOutput !== '-') {
    for (const other of [input, output]) {
      if (other !== '-' && resolve(other) === resolve(specforgeOutput))
        throw new UserError('--specforge-out must not be the input or the output file');
    }
  }
  if (summaryOut !== undefined) checkSummaryOut(summaryOut, [input, output, ...(specforgeOutput ? [specforgeOutput] : [])]);
  // Where the summary is printed: stdout, unless stdout carries the data; then stderr (or only --summary-out).
  const dataOnStdout = output === '-' || specforgeOutput === '-';
  const family = args.str('family');
  if (family !== undefined && !formats.some((f) => f.id === family)) {
    throw new UserError(`--family must be one of ${formats.map((f) => f.id).join(', ')}; got "${family}"`);
  }
  // A folder that holds no tokenizer fails every line the same way: said once, before any work.
  const tokenizerDir = args.str('tokenizer-dir');
  if (tokenizerDir) checkTokenizerDir(tokenizerDir);
  const workerFile = batchWorkerFile();
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
    const stdoutSink = () => toStdout(std.stdout);
    const result = await runBatch({
      input: input === '-' ? std.stdin : input,
      output: output === '-' ? stdoutSink() : output,
      specforgeOutput: specforgeOutput === '-' ? stdoutSink() : specforgeOutput,
      specforge: format === 'specforge',
      shard,
      workers: args.positiveInt('workers', availableParallelism()),
      workerFile,
      boot: batchWorkerBoot(),
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
    const json = JSON.stringify({ ...run, ...s.toJSON() }, null, 2);
    if (summaryOut !== undefined) writeSummaryFile(summaryOut, json);
    const name = (f: string) => (f === '-' ? 'stdout' : f);
    const wrote = `${plural(s.lines - s.bad, 'line')} written to ${name(output)}${specforgeOutput ? ` (${s.withPromptIds} with prompt ids to ${name(specforgeOutput)})` : ''}`;
    const of = shard ? ` of shard ${shard.index}/${shard.count}` : '';
    const head = `${result.interrupted ? `interrupted: ${wrote}, for the first ${s.lines + s.blank} input lines${of}` : `${wrote}${of ? ` (${plural(s.lines + s.blank, 'input line')}${of})` : ''}`} in ${run.seconds} s (${run.linesPerSecond ?? '-'} lines/s)`;
    // Dataset names and messages come from the input: escaped before they reach the terminal.
    const print = dataOnStdout ? io.err : io.out;
    if (dataOnStdout && summaryOut !== undefined) io.err(`tokenscope tokens: ${safeLine(head, Infinity)}; summary in ${summaryOut}`);
    else if (args.bool('json')) print(json);
    else print(safeText(`${head}\n\n${s.text()}`, Infinity));
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

/**
 * `tokens --merge-summaries A.json B.json …`: the JSON summaries of every shard of one input (`--shard K/N
 * --summary-out FILE`, or `--json` output) folded into the summary one run over the whole input gives.
 */
export async function mergeSummaries(args: Args, io: CliIO): Promise<number> {
  for (const f of ['batch', 'out', 'shard', 'workers', 'format', 'specforge-out', 'request', 'model', 'tokenizer-dir', 'family']) {
    if (args.str(f) !== undefined) throw new UserError(`--${f} does not go with --merge-summaries`);
  }
  const files = args.positional;
  if (!files.length) throw new UserError('--merge-summaries needs the summary files of the shards (A.json B.json …)');
  const summaryOut = args.str('summary-out');
  if (summaryOut !== undefined) checkSummaryOut(summaryOut, files);
  const parts: SummaryPart[] = files.map((name) => {
    const text = readTextFile(name, 64 * 1024 * 1024);
    try {
      return { name, value: JSON.parse(text) as unknown };
    } catch {
      throw new UserError(`${name} is not JSON: give the files tokens --batch wrote with --summary-out (or printed with --json)`);
    }
  });
  const { summary: s, interrupted } = mergeShardSummaries(parts);
  const json = JSON.stringify({ merged: files.length, interrupted, ...s.toJSON() }, null, 2);
  if (summaryOut !== undefined) writeSummaryFile(summaryOut, json);
  if (interrupted) io.err('tokenscope tokens: some shards were interrupted: the summary covers only the lines they finished');
  if (args.bool('json')) io.out(json);
  else
    io.out(
      safeText(
        `${files.length} shard ${files.length === 1 ? 'summary' : 'summaries'} merged: ${plural(s.lines + s.blank, 'input line')}\n\n${s.text()}`,
        Infinity,
      ),
    );
  return s.lines > 0 && s.bad === s.lines ? 1 : 0;
}

/** `--summary-out FILE`: a file, in a folder that exists (checked before a long run, not after), not one of `others`. */
function checkSummaryOut(file: string, others: readonly string[]): void {
  if (file === '-' || file === '') throw new UserError('--summary-out needs a file (without it the summary is printed)');
  if (others.some((o) => o !== '-' && resolve(o) === resolve(file)))
    throw new UserError('--summary-out must not be an input or output file');
  const folder = dirname(resolve(file));
  let isDir = false;
  try {
    isDir = statSync(folder).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new UserError(`cannot write ${file}: no such folder`);
}

/** The JSON summary, written whole or not at all (a task that dies midway leaves no half file; 0600). */
function writeSummaryFile(file: string, json: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, json + '\n', { mode: 0o600 });
    renameSync(tmp, file);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // not created
    }
    throw new UserError(`cannot write ${file}: ${fsWhy(e)}`);
  }
}

/**
 * stdout as the output stream: each write is whole lines, passed on with its callback (so the run waits while the
 * reader is slow); a terminal gets them with control characters escaped. Ending it leaves stdout open.
 */
function toStdout(stdout: StdStreams['stdout']): Writable {
  const guard = stdout.isTTY === true;
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      stdout.write(guard ? terminalGuard(chunk.toString('utf8')) : chunk, (e?: Error | null) => done(e ?? undefined));
    },
    final(done) {
      if (!stdout.writableLength) return done();
      stdout.once('drain', () => done());
    },
  });
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
 * The workers' boot beside the CLI bundle (dist/tokens-batch-boot.js): it compiles the worker bundle from the V8 code
 * cache in the data dir. Without it (the CLI run from its sources) the workers load the bundle directly.
 */
function batchWorkerBoot(): string | undefined {
  const file = join(__dirname, 'tokens-batch-boot.js');
  return existsSync(file) ? file : undefined;
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
      // A pipe has no size: no share read, no ETA.
      else if (!p.totalBytes) line.draw(`${p.lines} lines, ${Math.round(rate)}/s`);
      else
        line.draw(
          `${p.lines} lines, ${Math.round(rate)}/s, ${Math.round(frac * 100)}% read${eta === undefined ? '' : `, ETA ${clock(eta)}`}`,
        );
    },
    note: line.note,
    clear: line.clear,
  };
}
