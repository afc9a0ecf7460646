import { readFileSync, statSync, writeSync } from 'node:fs';
import { UserError } from '../core/model';
import { colourWanted, palette, terminalGuard, type Palette } from './terminal';
import { fsWhy } from '../core/fs-errors';

/** Where a command writes. Tests pass their own to capture output. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /**
   * Colour on stdout (severity, rule ids): true on a terminal unless NO_COLOR or --no-color; default false. The
   * palette then writes colour markers, not escape sequences: `out`/`err` must pass text through `terminalGuard`
   * (terminal.ts), which turns just those markers into colour.
   */
  colour?: boolean;
  /**
   * Draws the one progress line of long work (undefined: erase it), set only when stderr is a terminal; see
   * ./progress.ts. Unset, a command prints no progress.
   */
  progress?: (line: string | undefined) => void;
  /**
   * Writes `chunk` to stdout exactly as given (no terminal guard, no newline added), before returning: for output
   * streamed in pieces that is terminal-safe by construction (json-out.ts). Unset, such output is gathered and
   * printed with `out`.
   */
  write?(chunk: string): void;
}

/** The colours a command may use on `io`'s stdout. */
export function paletteOf(io: CliIO): Palette {
  return palette(io.colour === true);
}

/** The process's stdout and stderr; every line passes the terminal guard (control characters escaped). */
export const processIO: CliIO = {
  out: (t) => process.stdout.write(terminalGuard(t.endsWith('\n') ? t : t + '\n')),
  err: (t) => process.stderr.write(terminalGuard(t.endsWith('\n') ? t : t + '\n')),
  get colour() {
    return colourWanted(process.stdout);
  },
  get progress() {
    if (!process.stderr.isTTY) return undefined;
    return (line: string | undefined) =>
      process.stderr.write(
        `\r\x1b[K${line === undefined ? '' : terminalGuard(line).slice(0, Math.max(20, (process.stderr.columns ?? 80) - 1))}`,
      );
  },
  write: writeStdout,
};

let stdoutBuffer: Buffer | undefined;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes to fd 1 synchronously, a chunk at a time through one reused buffer, so a large report costs no memory
 * beyond its chunk however slowly the reader reads: a full pipe (EAGAIN) is waited on, not queued in memory. A
 * reader that has gone (EPIPE) ends the process quietly, as `runFromProcess` does for stdout's errors.
 */
function writeStdout(chunk: string): void {
  // Whatever process.stdout still holds goes out first, in order.
  if (process.stdout.writableLength > 0) {
    process.stdout.write(chunk);
    return;
  }
  const need = chunk.length * 3;
  if (!stdoutBuffer || stdoutBuffer.length < need) stdoutBuffer = Buffer.allocUnsafe(Math.max(need, 1 << 18));
  const n = stdoutBuffer.write(chunk, 0, 'utf8');
  for (let off = 0; off < n; ) {
    try {
      off += writeSync(1, stdoutBuffer, off, n - off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      if (code === 'EPIPE') process.exit(0);
      throw e;
    }
  }
}

/**
 * A signal Ctrl-C aborts, for the long batches (`compare`, `verify`): they stop sending, and report what finished
 * instead of dying mid-run. `release` gives SIGINT back to Node's default once the batch is over.
 */
export function interruptSignal(): { signal: AbortSignal; release(): void } {
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  return { signal: ac.signal, release: () => process.removeListener('SIGINT', onSigint) };
}

/** The largest input file read (a JavaScript string holds at most ~512 M characters). */
export const MAX_INPUT_BYTES = 500 * 1024 * 1024;

const mb = (n: number) => Math.round(n / 1024 / 1024);

/** A CLI command. Returns the exit code. */
export type Command = (argv: string[], io: CliIO) => Promise<number>;

/**
 * A file the user named, as UTF-8 text. Failures are one-line UserErrors about that path ("no such file", "it is a
 * directory", "permission denied"), never Node's errno text.
 */
export function readTextFile(path: string, maxBytes = MAX_INPUT_BYTES): string {
  try {
    const size = statSync(path).size;
    if (size > maxBytes) throw new UserError(`${path} is ${mb(size)} MB; Tokenscope reads inputs of at most ${mb(maxBytes)} MB`);
    return readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : fsWhy(e)}`);
  }
}
